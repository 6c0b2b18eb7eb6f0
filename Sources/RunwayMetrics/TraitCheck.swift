// RunwayMetrics links a package of its own, which SwiftPM resolves only for apps that enable the
// package trait "Metrics".
#if !Metrics
#error("RunwayMetrics needs the package trait \"Metrics\": .package(url: ..., from: ..., traits: [\"Metrics\"])")
#endif
