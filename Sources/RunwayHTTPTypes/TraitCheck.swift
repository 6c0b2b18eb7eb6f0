// RunwayHTTPTypes links a package of its own, which SwiftPM resolves only for apps that enable the
// package trait "HTTPTypes".
#if !HTTPTypes
#error("RunwayHTTPTypes needs the package trait \"HTTPTypes\": .package(url: ..., from: ..., traits: [\"HTTPTypes\"])")
#endif
