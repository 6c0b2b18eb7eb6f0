// swift-tools-version:6.2
import PackageDescription

// Runway: one list of products, one of package traits, one of targets, and one loop at the end
// that gives every target of ours the same settings.
//
// A consumer that links Runway, RunwayCurl, RunwayMediator or the other trait-free
// products resolves no other package. A product built on another package needs its trait, so
// that package is resolved only by the apps that use it:
//
//     .package(url: "<Runway's repository>", from: "1.0.0", traits: ["Signing", "Cache"])
//
// Test-only packages (the test server's Hummingbird, the property-based testing library) never
// reach a consumer: SwiftPM resolves them for this package's own tests only.

let package = Package(
    name: "Runway",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        // FoundationEssentials only (and libcurl, zlib from the system); RunwayURLSession needs Foundation.
        .library(name: "Runway", targets: ["Runway"]),
        .library(name: "RunwayCore", targets: ["RunwayCore"]),
        .library(name: "RunwayCurl", targets: ["RunwayCurl"]),
        .library(name: "RunwayURLSession", targets: ["RunwayURLSession"]),
        .library(name: "RunwayTesting", targets: ["RunwayTesting"]),
        .library(name: "RunwayDNSBypass", targets: ["RunwayDNSBypass"]),
        .library(name: "RunwayCompression", targets: ["RunwayCompression"]),
        .library(name: "RunwayMediator", targets: ["RunwayMediator"]),
        .library(name: "RunwayHAR", targets: ["RunwayHAR"]),
        .library(name: "RunwayServerSentEvents", targets: ["RunwayServerSentEvents"]),
        .plugin(name: "MediatorRegistrationPlugin", targets: ["MediatorRegistrationPlugin"]),
        .plugin(name: "MediatorRoutesCommand", targets: ["MediatorRoutesCommand"]),
        // Each needs the trait of the same name (without "Runway").
        .library(name: "RunwaySigning", targets: ["RunwaySigning"]),
        .library(name: "RunwayCache", targets: ["RunwayCache"]),
        .library(name: "RunwayActionLog", targets: ["RunwayActionLog"]),
        .library(name: "RunwayLogging", targets: ["RunwayLogging"]),
        .library(name: "RunwayMetrics", targets: ["RunwayMetrics"]),
        .library(name: "RunwayTracing", targets: ["RunwayTracing"]),
        .library(name: "RunwayHTTPTypes", targets: ["RunwayHTTPTypes"]),
        .library(name: "RunwayOpenAPI", targets: ["RunwayOpenAPI"]),
    ],
    traits: [
        .trait(name: "Signing", description: "RunwaySigning: request signing (swift-crypto)."),
        .trait(name: "Cache", description: "RunwayCache: the response cache (swift-crypto; SQLite from the system)."),
        .trait(name: "ActionLog", description: "RunwayActionLog: the user-action log (swift-log; SQLite from the system)."),
        .trait(name: "Logging", description: "RunwayLogging: the logging interceptor (swift-log)."),
        .trait(name: "Metrics", description: "RunwayMetrics: the metrics interceptor (swift-metrics)."),
        .trait(name: "Tracing", description: "RunwayTracing: the tracing interceptor (swift-distributed-tracing)."),
        .trait(name: "HTTPTypes", description: "RunwayHTTPTypes: conversions to and from HTTPRequest and HTTPResponse (swift-http-types)."),
        .trait(
            name: "OpenAPI",
            description: "RunwayOpenAPI: a ClientTransport for swift-openapi-generator clients (swift-openapi-runtime, swift-http-types).",
            enabledTraits: ["HTTPTypes"]
        ),
        .default(enabledTraits: []),
    ],
    dependencies: [
        // Library dependencies, each behind a trait. swift-crypto 4 imports FoundationEssentials
        // (3 imports Foundation); an app that pins 3 still builds.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        // Documentation (`swift package generate-documentation`) and test-only: never resolved
        // for an app, since no product uses them.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(path: "Tests/TestSupport"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: libraryTargets + mediatorTargets + testTargets
)

/// A dependency on another package's product, linked only when one of `traits` is enabled.
func product(_ name: String, _ package: String, traits: Set<String>) -> Target.Dependency {
    .product(name: name, package: package, condition: .when(traits: traits))
}

var libraryTargets: [Target] {
    [
        // The one locked-state primitive, for every module (the mediator included); not a product.
        .target(name: "RunwaySync"),
        // The pipeline: requests, responses, errors, the interceptor and dispatcher contract.
        .target(name: "RunwayCore", dependencies: ["RunwaySync"]),
        // The app layer on the pipeline: API managers, services, reformers, reachability, and the
        // standard interceptors that need no other package (validation, retry, merging).
        .target(name: "Runway", dependencies: ["RunwayCore", "RunwaySync"]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "RunwayCurl", dependencies: ["RunwayCore", "CCurl", "RunwayCompression"]),
        .target(name: "RunwayURLSession", dependencies: ["RunwayCore"]),
        .target(name: "RunwayTesting", dependencies: ["Runway"]),
        .target(name: "RunwayDNSBypass", dependencies: ["Runway"]),
        // The HAR recorder: no other package, with the logging interceptor's `Redaction` (in `Runway`).
        .target(name: "RunwayHAR", dependencies: ["Runway", "RunwaySync"]),
        .target(name: "RunwayCompression", dependencies: ["RunwayCore", "CZlib"]),
        // Server-Sent Events over any pipeline whose dispatcher streams: no other package.
        .target(name: "RunwayServerSentEvents", dependencies: ["RunwayCore"]),
        .target(name: "RunwaySigning", dependencies: ["RunwayCore", product("Crypto", "swift-crypto", traits: ["Signing"])]),
        // The SQLite layer (WAL, corruption recovery) under the cache's disk and the action
        // log's outbox, on the system's libsqlite3; not a product.
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite3"])]
        ),
        .target(name: "RunwayStorage", dependencies: ["RunwayCore", "RunwaySync", "CSQLite"]),
        .target(name: "RunwayCache", dependencies: ["Runway", "RunwayStorage", product("Crypto", "swift-crypto", traits: ["Cache"])]),
        .target(
            name: "RunwayActionLog",
            dependencies: ["Runway", "RunwayStorage", "RunwaySync", product("Logging", "swift-log", traits: ["ActionLog"])]
        ),
        .target(name: "RunwayLogging", dependencies: ["Runway", product("Logging", "swift-log", traits: ["Logging"])]),
        .target(name: "RunwayMetrics", dependencies: ["Runway", "RunwaySync", product("Metrics", "swift-metrics", traits: ["Metrics"])]),
        .target(name: "RunwayTracing", dependencies: ["RunwayCore", product("Tracing", "swift-distributed-tracing", traits: ["Tracing"])]),
        .target(name: "RunwayHTTPTypes", dependencies: ["RunwayCore", product("HTTPTypes", "swift-http-types", traits: ["HTTPTypes"])]),
        // A swift-openapi-runtime `ClientTransport` that sends through a Pipeline; the trait
        // OpenAPI turns on HTTPTypes, whose conversions it is built on.
        .target(
            name: "RunwayOpenAPI",
            dependencies: [
                "RunwayCore", "RunwayHTTPTypes",
                product("OpenAPIRuntime", "swift-openapi-runtime", traits: ["OpenAPI"]),
                product("HTTPTypes", "swift-http-types", traits: ["OpenAPI"]),
            ]
        ),
    ]
}

var mediatorTargets: [Target] {
    [
        // Strict memory safety: the mediator parses untrusted URLs, so no unsafe construct compiles in it.
        .target(name: "RunwayMediator", dependencies: ["RunwaySync"], swiftSettings: [.strictMemorySafety()]),
        // The generator behind both plugins: its logic is a library so golden-file tests can call it.
        .target(name: "MediatorCodegen", dependencies: ["RunwayMediator"]),
        .executableTarget(name: "MediatorCodegenTool", dependencies: ["MediatorCodegen"]),
        .plugin(name: "MediatorRegistrationPlugin", capability: .buildTool(), dependencies: ["MediatorCodegenTool"]),
        .plugin(
            name: "MediatorRoutesCommand",
            capability: .command(
                intent: .custom(verb: "routes", description: "List every mediator route; fail on duplicates or conflicts")
            ),
            dependencies: ["MediatorCodegenTool"]
        ),
    ]
}

/// The in-process test server every integration test talks to (a package of its own under
/// `Tests/TestSupport`), and the test-only products.
var testServer: Target.Dependency { .product(name: "RunwayTestServer", package: "TestSupport") }
var hummingbird: Target.Dependency { .product(name: "Hummingbird", package: "hummingbird") }
var nioCore: Target.Dependency { .product(name: "NIOCore", package: "swift-nio") }
var logging: Target.Dependency { .product(name: "Logging", package: "swift-log") }
var inMemoryLogging: Target.Dependency { .product(name: "InMemoryLogging", package: "swift-log") }

var testTargets: [Target] {
    [
        // Helpers several test targets share (requests, expected errors); used by tests only.
        .target(name: "TestHelpers", dependencies: ["Runway", testServer], path: "Tests/TestHelpers"),
        .testTarget(name: "RunwaySyncTests", dependencies: ["RunwaySync"]),
        .testTarget(name: "RunwayCoreTests", dependencies: ["Runway", "RunwayTesting"]),
        // The Dispatcher contract: one suite run against every dispatcher (libcurl, URLSession); Scripts/
        // holds a Python HTTP/2 server that sends, frame by frame, what server libraries do not.
        .testTarget(
            name: "DispatcherTests",
            dependencies: ["Runway", "RunwayCurl", "RunwayURLSession", "RunwayTesting", "TestHelpers", testServer],
            exclude: ["Scripts"]
        ),
        .testTarget(name: "RunwayTestingTests", dependencies: ["Runway", "RunwayTesting"]),
        // Streamed response and request bodies, multipart forms; Scripts/ holds the Python servers
        // of the memory test (a process of its own, so its memory is not the test process's) and
        // of the multipart tests (the standard library's MIME parser).
        .testTarget(
            name: "StreamingTests",
            dependencies: [
                "Runway", "RunwayCurl", "RunwayURLSession", "RunwayTesting", "TestHelpers", testServer, hummingbird, nioCore,
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["Scripts"]
        ),
        // A `getaddrinfo` that answers `MS.slow.test` after MS milliseconds (Linux), for the
        // tests of calls that end while their host name resolves.
        .target(name: "CSlowResolver", path: "Tests/CSlowResolver"),
        .testTarget(
            name: "RunwayCurlTests",
            dependencies: ["Runway", "RunwayCurl", "RunwayCompression", "CCurl", "CSlowResolver", "TestHelpers", testServer],
            // Scripts/ holds the Python TLS server of the session cache test.
            exclude: ["Scripts"]),
        .testTarget(name: "RunwayManagerTests", dependencies: ["Runway", "RunwayTesting", "RunwayCurl", testServer, hummingbird]),
        .testTarget(
            name: "RunwayInterceptorTests",
            dependencies: ["Runway", "RunwayTesting", "RunwayCurl", "RunwaySync", testServer, hummingbird, nioCore]),
        // Vectors/ and Verifier/ hold the signing test vectors and the Python verifier the tests run.
        .testTarget(
            name: "RunwaySigningTests",
            dependencies: [
                "Runway", "RunwaySigning", "RunwayTesting", "RunwayCurl", "RunwayCompression", testServer, hummingbird,
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["Vectors", "Verifier"]
        ),
        .testTarget(
            name: "RunwayCacheTests",
            dependencies: [
                "Runway", "RunwayCache", "RunwaySigning", "RunwayStorage", "RunwayTesting", "RunwayCurl", testServer, hummingbird,
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "RunwayMetricsTests",
            dependencies: [
                "Runway", "RunwayMetrics", "RunwayTracing", "RunwayTesting", "RunwayCache", "RunwaySigning", "RunwayCurl", "RunwaySync",
                testServer, .product(name: "MetricsTestKit", package: "swift-metrics"), .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "RunwayTracingTests",
            dependencies: [
                "Runway", "RunwayTracing", "RunwayTesting", "RunwayCurl", testServer,
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        .testTarget(name: "RunwayRetryTests", dependencies: ["Runway", "RunwayTesting", "RunwayCurl", testServer, hummingbird]),
        .testTarget(
            name: "RunwayDNSBypassTests",
            dependencies: ["Runway", "RunwayDNSBypass", "RunwayTesting", "RunwayCurl", testServer, hummingbird]
        ),
        .testTarget(
            name: "RunwayCompressionTests",
            dependencies: ["Runway", "RunwayCompression", "RunwayTesting", "RunwayCurl", testServer]
        ),
        .testTarget(
            name: "RunwayLoggingTests",
            dependencies: ["Runway", "RunwayLogging", "RunwayTesting", "RunwayCurl", testServer, hummingbird, logging, inMemoryLogging]
        ),
        // Schema/ holds the HAR 1.2 JSON schema and the Python check the tests (and the sample's) run.
        .testTarget(
            name: "RunwayHARTests",
            dependencies: ["Runway", "RunwayHAR", "RunwayCache", "RunwayCurl", "RunwayTesting", testServer],
            exclude: ["Schema"]
        ),
        // The default order, pinned by behaviour, and the README example, compiled.
        .testTarget(
            name: "InterceptorOrderTests",
            dependencies: [
                "Runway", "RunwayTesting", "RunwayDNSBypass", "RunwayCompression", "RunwayLogging", "RunwayHAR", "RunwayCurl",
                "RunwaySigning", "RunwayCache", "RunwayMetrics", testServer, logging, inMemoryLogging,
            ]
        ),
        .testTarget(
            name: "RunwayStorageTests",
            dependencies: ["Runway", "RunwayStorage", testServer]
        ),
        .testTarget(name: "RunwayMergingTests", dependencies: ["Runway", "RunwayCurl", testServer, hummingbird, nioCore]),
        // A program the action log's crash tests launch and kill; the test target depends on it
        // so `swift test` builds it next to the test bundle.
        .executableTarget(
            name: "ActionLogCrashHelper",
            dependencies: ["Runway", "RunwayCurl", "RunwayActionLog"],
            path: "Tests/ActionLogCrashHelper"
        ),
        .testTarget(
            name: "RunwayActionLogTests",
            dependencies: [
                "Runway", "RunwayActionLog", "RunwayCurl", "RunwaySigning", "RunwayCompression", "RunwayLogging",
                "RunwayTesting", "RunwayStorage", "ActionLogCrashHelper", testServer, hummingbird, nioCore, logging, inMemoryLogging,
            ]
        ),
        .testTarget(
            name: "RunwayServerSentEventsTests",
            dependencies: [
                "Runway", "RunwayServerSentEvents", "RunwayCurl", "RunwaySigning", "RunwayDNSBypass", "RunwaySync", "TestHelpers",
                testServer, hummingbird, nioCore,
            ]
        ),
        // Conversions both ways, and an HTTPRequest sent through libcurl to the test server.
        .testTarget(
            name: "RunwayHTTPTypesTests",
            dependencies: [
                "RunwayCore", "RunwayHTTPTypes", "RunwayCurl", "TestHelpers", testServer, hummingbird,
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // A client generated from OpenAPI/openapi.yaml (committed; scripts/generate-openapi.sh
        // regenerates it) sent through RunwayTransport to the test server, with the real cache,
        // retry, signing and verifier.
        .testTarget(
            name: "RunwayOpenAPITests",
            dependencies: [
                "Runway", "RunwayOpenAPI", "RunwayCurl", "RunwayCache", "RunwaySigning", "RunwaySync", "RunwayTesting", testServer,
                hummingbird,
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["OpenAPI/openapi.yaml", "OpenAPI/openapi-generator-config.yaml"]
        ),
        // A client of every product that needs no Foundation, and the test that checks its binary
        // loads FoundationEssentials and neither Foundation nor ICU (and runs it for its peak RSS).
        .executableTarget(
            name: "FoundationFreeClient",
            dependencies: [
                "Runway", "RunwayCurl", "RunwayCompression", "RunwayDNSBypass", "RunwayHAR", "RunwayServerSentEvents",
                "RunwayMediator", "RunwayLogging", "RunwayMetrics", "RunwayTracing", "RunwayHTTPTypes", "RunwaySigning",
                "RunwayCache", "RunwayActionLog", logging,
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Tests/FoundationFreeClient"
        ),
        .testTarget(name: "FoundationFreeTests", dependencies: ["FoundationFreeClient", testServer]),
        // The tool is a dependency so `swift build` puts it next to the test bundle, for the tests that run it.
        .testTarget(
            name: "MediatorCodegenTests", dependencies: ["MediatorCodegen", "MediatorCodegenTool", "RunwayMediator", testServer],
            exclude: ["Golden"]
        ),
        .testTarget(
            name: "RunwayMediatorTests",
            dependencies: ["RunwayMediator", testServer, .product(name: "PropertyBased", package: "swift-property-based")]
        ),
    ]
}

// Every Swift target of ours: Swift 6 language mode, `any` spelled out, warnings as errors
// (dependencies keep their own settings).
for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings =
        [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny"), .treatAllWarnings(as: .error)]
        + (target.swiftSettings ?? [])
}
