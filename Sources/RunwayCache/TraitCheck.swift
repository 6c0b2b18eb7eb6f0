// RunwayCache links a package of its own, which SwiftPM resolves only for apps that enable the
// package trait "Cache".
#if !Cache
#error("RunwayCache needs the package trait \"Cache\": .package(url: ..., from: ..., traits: [\"Cache\"])")
#endif
