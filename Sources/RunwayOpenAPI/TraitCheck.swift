// RunwayOpenAPI links packages of its own, which SwiftPM resolves only for apps that enable the
// package trait "OpenAPI" (which turns on "HTTPTypes" too).
#if !OpenAPI
#error("RunwayOpenAPI needs the package trait \"OpenAPI\": .package(url: ..., from: ..., traits: [\"OpenAPI\"])")
#endif
