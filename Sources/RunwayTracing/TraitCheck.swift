// RunwayTracing links a package of its own, which SwiftPM resolves only for apps that enable the
// package trait "Tracing".
#if !Tracing
#error("RunwayTracing needs the package trait \"Tracing\": .package(url: ..., from: ..., traits: [\"Tracing\"])")
#endif
