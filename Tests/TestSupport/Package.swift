// swift-tools-version:6.2
import PackageDescription

// What Runway's tests and its sample app talk to: an in-process Hummingbird server with
// scriptable endpoints, a test PKI and raw-socket responders. A package of its own so its
// dependencies never reach a package that depends on Runway: SwiftPM resolves a dependency's
// test-only packages for that package's own tests only.
let package = Package(
    name: "TestSupport",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "RunwayTestServer", targets: ["RunwayTestServer"])
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "RunwayTestServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                "CZlibTest",
                "TSanSuppressions",
            ],
            swiftSettings: [
                .swiftLanguageMode(.v6),
                .enableUpcomingFeature("ExistentialAny"),
                .treatAllWarnings(as: .error),
            ]
        ),
        // zlib for the gzip and gzip-bomb endpoints.
        .systemLibrary(name: "CZlibTest", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // The thread sanitizer's one suppression (a runtime false positive), linked into every
        // test binary through the server.
        .target(name: "TSanSuppressions"),
    ]
)
