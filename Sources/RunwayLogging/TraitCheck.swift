// RunwayLogging links a package of its own, which SwiftPM resolves only for apps that enable the
// package trait "Logging".
#if !Logging
#error("RunwayLogging needs the package trait \"Logging\": .package(url: ..., from: ..., traits: [\"Logging\"])")
#endif
