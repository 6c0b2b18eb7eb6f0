// swift-tools-version:6.2
import PackageDescription

// One set of build settings for every target of ours (STYLE.md 20): Swift 6 language mode,
// existential `any` spelled out, and warnings as errors for our code only (dependencies keep
// their own settings).
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "Runway",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "Runway", targets: ["Runway"]),
        .library(name: "RunwayCurl", targets: ["RunwayCurl"]),
        .library(name: "RunwayURLSession", targets: ["RunwayURLSession"]),
        .library(name: "RunwayTesting", targets: ["RunwayTesting"]),
        // The libcurl shims, for the raw-libcurl baseline in Benchmarks/; not an API.
        .library(name: "CCurl", targets: ["CCurl"]),
    ] + interceptorProducts,
    dependencies: [
        // Test and sample server only; the library products never link these.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ] + interceptorDependencies,
    targets: [
        // MARK: Network layer
        .target(name: "Runway", swiftSettings: strict),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(name: "RunwayCurl", dependencies: ["Runway", "CCurl", "RunwayCompression"], swiftSettings: strict),
        .target(name: "RunwayURLSession", dependencies: ["Runway"], swiftSettings: strict),
        .target(name: "RunwayTesting", dependencies: ["Runway"], swiftSettings: strict),

        // MARK: Tests
        // The in-process Hummingbird server every integration test talks to.
        .target(
            name: "RunwayTestServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                "CZlibTest",
                "TSanSuppressions",
            ],
            path: "Tests/RunwayTestServer",
            swiftSettings: strict
        ),
        .testTarget(name: "RunwayTests", dependencies: ["Runway", "RunwayTesting"], swiftSettings: strict),
        .testTarget(
            name: "DispatcherTests",
            dependencies: ["Runway", "RunwayCurl", "CCurl", "RunwayURLSession", "RunwayTesting", "RunwayTestServer"],
            swiftSettings: strict
        ),

        // MARK: Test support: the thread sanitizer's one suppression (a runtime false positive)
        .target(name: "TSanSuppressions", path: "Tests/TSanSuppressions"),

        // MARK: Test server support (zlib for the gzip and gzip-bomb endpoints)
        .systemLibrary(
            name: "CZlibTest",
            path: "Tests/CZlibTest",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),

        // MARK: API managers (helper: managers)
        .testTarget(
            name: "RunwayManagerTests",
            dependencies: [
                "Runway", "RunwayTesting", "RunwayCurl", "RunwayTestServer",
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: strict
        ),
    ] + interceptorTargets
)

// MARK: Mediator
// The URL-scheme mediator (Foundation only), its code generator and plugins. The business
// modules that prove the build-tool plugin are HouseHunter's (see the Samples block).
package.products += [
    .library(name: "RunwayMediator", targets: ["RunwayMediator"]),
    .plugin(name: "MediatorRegistrationPlugin", targets: ["MediatorRegistrationPlugin"]),
    .plugin(name: "MediatorRoutesCommand", targets: ["MediatorRoutesCommand"]),
]
package.dependencies += [
    .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
]
package.targets += [
    // Strict memory safety: the mediator parses untrusted URLs, so no unsafe construct compiles in it.
    .target(name: "RunwayMediator", swiftSettings: strict + [.strictMemorySafety()]),
    // The generator behind both plugins: its logic is a library so golden-file tests can call it.
    .target(name: "MediatorCodegen", dependencies: ["RunwayMediator"], swiftSettings: strict),
    .executableTarget(name: "MediatorCodegenTool", dependencies: ["MediatorCodegen"], swiftSettings: strict),
    .plugin(
        name: "MediatorRegistrationPlugin",
        capability: .buildTool(),
        dependencies: ["MediatorCodegenTool"]
    ),
    .plugin(
        name: "MediatorRoutesCommand",
        capability: .command(
            intent: .custom(verb: "routes", description: "List every mediator route; fail on duplicates or conflicts")
        ),
        dependencies: ["MediatorCodegenTool"]
    ),
    .testTarget(
        name: "MediatorCodegenTests",
        dependencies: ["MediatorCodegen", "RunwayMediator"],
        exclude: ["Golden"],
        swiftSettings: strict
    ),
    // A composition root of HouseHunter's business modules: the build-tool plugin registers them.
    .testTarget(
        name: "MediatorPluginTests",
        dependencies: ["RunwayMediator", "Listing", "Detail", "Account", "AccountInterface", "DetailInterface", "ListingInterface", "HouseHunterScreen"],
        swiftSettings: strict,
        plugins: ["MediatorRegistrationPlugin"]
    ),
    .testTarget(
        name: "RunwayMediatorTests",
        dependencies: ["RunwayMediator", .product(name: "PropertyBased", package: "swift-property-based")],
        swiftSettings: strict
    ),
]

// MARK: Interceptors
// Standard interceptors whose dependencies stay out of the Foundation-only core: signing
// (swift-crypto), the response cache (GRDB), metrics (swift-metrics) and tracing
// (swift-distributed-tracing). Validation lives in `Runway` itself.
var interceptorProducts: [Product] {
    [
        .library(name: "RunwaySigning", targets: ["RunwaySigning"]),
        .library(name: "RunwayCache", targets: ["RunwayCache"]),
        .library(name: "RunwayMetrics", targets: ["RunwayMetrics"]),
        .library(name: "RunwayTracing", targets: ["RunwayTracing"]),
    ]
}

var interceptorDependencies: [Package.Dependency] {
    [
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ]
}

var interceptorTargets: [Target] {
    [
        .target(
            name: "RunwaySigning",
            dependencies: ["Runway", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        .target(
            name: "RunwayCache",
            dependencies: [
                "Runway",
                "RunwayStorage",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "RunwayMetrics",
            dependencies: ["Runway", .product(name: "Metrics", package: "swift-metrics")],
            swiftSettings: strict
        ),
        .target(
            name: "RunwayTracing",
            dependencies: ["Runway", .product(name: "Tracing", package: "swift-distributed-tracing")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RunwayInterceptorTests",
            dependencies: ["Runway", "RunwayTesting", "RunwayCurl", "RunwayTestServer"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RunwaySigningTests",
            dependencies: [
                "Runway", "RunwaySigning", "RunwayTesting", "RunwayCurl", "RunwayTestServer",
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RunwayCacheTests",
            dependencies: [
                "Runway", "RunwayCache", "RunwaySigning", "RunwayTesting", "RunwayCurl", "RunwayTestServer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RunwayMetricsTests",
            dependencies: [
                "Runway", "RunwayMetrics", "RunwayTracing", "RunwayTesting", "RunwayCache", "RunwaySigning", "RunwayCurl",
                "RunwayTestServer", .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strict
        ),
    ]
}

// MARK: Interceptors (transport)
// DNS bypass, compression, logging and retry (issue 4, second half). Retry lives in `Runway`
// (Foundation only); the others are modules of their own so the core links nothing new.
package.products += [
    .library(name: "RunwayDNSBypass", targets: ["RunwayDNSBypass"]),
    .library(name: "RunwayCompression", targets: ["RunwayCompression"]),
    .library(name: "RunwayLogging", targets: ["RunwayLogging"]),
]
package.dependencies += [
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
]
package.targets += [
    .target(name: "RunwayDNSBypass", dependencies: ["Runway"], swiftSettings: strict),
    .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
    .target(name: "RunwayCompression", dependencies: ["Runway", "CZlib"], swiftSettings: strict),
    .target(
        name: "RunwayLogging",
        dependencies: ["Runway", .product(name: "Logging", package: "swift-log")],
        swiftSettings: strict
    ),
    .testTarget(
        name: "RunwayRetryTests",
        dependencies: [
            "Runway", "RunwayTesting", "RunwayCurl", "RunwayTestServer",
            .product(name: "Hummingbird", package: "hummingbird"),
        ],
        swiftSettings: strict
    ),
    .testTarget(
        name: "RunwayDNSBypassTests",
        dependencies: [
            "Runway", "RunwayDNSBypass", "RunwayTesting", "RunwayCurl", "RunwayTestServer",
            .product(name: "Hummingbird", package: "hummingbird"),
        ],
        swiftSettings: strict
    ),
    .testTarget(
        name: "RunwayCompressionTests",
        dependencies: ["Runway", "RunwayCompression", "RunwayTesting", "RunwayCurl", "RunwayTestServer"],
        swiftSettings: strict
    ),
    .testTarget(
        name: "RunwayLoggingTests",
        dependencies: [
            "Runway", "RunwayLogging", "RunwayTesting", "RunwayCurl", "RunwayTestServer",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "InMemoryLogging", package: "swift-log"),
        ],
        swiftSettings: strict
    ),
    // The default order, pinned by behaviour, and the README example, compiled.
    .testTarget(
        name: "InterceptorOrderTests",
        dependencies: [
            "Runway", "RunwayTesting", "RunwayDNSBypass", "RunwayCompression", "RunwayLogging", "RunwayCurl",
            "RunwaySigning", "RunwayCache", "RunwayMetrics", "RunwayTestServer",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "InMemoryLogging", package: "swift-log"),
        ],
        swiftSettings: strict
    ),
]

// MARK: Storage
// `RunwayStorage` is the SQLite layer (GRDB, WAL, corruption recovery) under the response
// cache's disk and the action log's outbox.
package.products += [
    .library(name: "RunwayStorage", targets: ["RunwayStorage"]),
]
package.targets += [
    .target(
        name: "RunwayStorage",
        dependencies: ["Runway", .product(name: "GRDB", package: "GRDB.swift")],
        swiftSettings: strict
    ),
    .testTarget(
        name: "RunwayStorageTests",
        dependencies: ["Runway", "RunwayStorage", .product(name: "GRDB", package: "GRDB.swift")],
        swiftSettings: strict
    ),
]

// MARK: Request merging
// The interceptor lives in `Runway` (Foundation only); its tests run against a batch endpoint.
package.targets += [
    .testTarget(
        name: "RunwayMergingTests",
        dependencies: [
            "Runway", "RunwayCurl", "RunwayTestServer",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
        ],
        swiftSettings: strict
    ),
]

// MARK: Action log
// `RunwayActionLog` records user actions into an SQLite outbox (`RunwayStorage`) and uploads
// them in batches through the normal pipeline. `ActionLogCrashHelper` is a test-support
// executable the crash tests launch and kill; the test target depends on it so `swift test`
// builds it next to the test bundle.
package.products += [
    .library(name: "RunwayActionLog", targets: ["RunwayActionLog"]),
]
package.targets += [
    .target(
        name: "RunwayActionLog",
        dependencies: [
            "Runway", "RunwayStorage",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Logging", package: "swift-log"),
        ],
        swiftSettings: strict
    ),
    .executableTarget(
        name: "ActionLogCrashHelper",
        dependencies: ["Runway", "RunwayCurl", "RunwayActionLog"],
        path: "Tests/ActionLogCrashHelper",
        swiftSettings: strict
    ),
    .testTarget(
        name: "RunwayActionLogTests",
        dependencies: [
            "Runway", "RunwayActionLog", "RunwayCurl", "RunwayTestServer", "RunwaySigning", "RunwayCompression",
            "RunwayLogging", "RunwayTesting", "ActionLogCrashHelper",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "InMemoryLogging", package: "swift-log"),
        ],
        swiftSettings: strict
    ),
]

// MARK: Samples (HouseHunter)
// Runway's sample app and the main job: business modules that never import each other (only
// interface targets), a composition root (`house-hunter`), and its sample API server.
package.products += [
    .executable(name: "house-hunter", targets: ["HouseHunter"]),
]
package.dependencies += [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
]
package.targets += [
    // What business modules hand the shell: screens as values, rendered as terminal text.
    .target(name: "HouseHunterScreen", dependencies: ["Runway"], path: "Samples/HouseHunter/Screen", swiftSettings: strict),
    // Interface targets: names and typed helpers; they depend on the mediator only.
    .target(name: "ListingInterface", dependencies: ["RunwayMediator"], path: "Samples/HouseHunter/Interfaces/ListingInterface", swiftSettings: strict),
    .target(name: "DetailInterface", dependencies: ["RunwayMediator"], path: "Samples/HouseHunter/Interfaces/DetailInterface", swiftSettings: strict),
    .target(name: "AccountInterface", dependencies: ["RunwayMediator"], path: "Samples/HouseHunter/Interfaces/AccountInterface", swiftSettings: strict),
    // Business modules: Runway, RunwayMediator, the screen kit and the interfaces of the modules
    // they call; never another business module (checked by ModuleGraphTests).
    .target(
        name: "Listing",
        dependencies: ["Runway", "RunwayMediator", "HouseHunterScreen", "ListingInterface", "DetailInterface"],
        path: "Samples/HouseHunter/Modules/Listing",
        swiftSettings: strict
    ),
    .target(
        name: "Detail",
        dependencies: ["Runway", "RunwayMediator", "HouseHunterScreen", "ListingInterface", "AccountInterface"],
        path: "Samples/HouseHunter/Modules/Detail",
        swiftSettings: strict
    ),
    .target(
        name: "Account",
        dependencies: ["Runway", "RunwayMediator", "HouseHunterScreen", "AccountInterface", "DetailInterface"],
        path: "Samples/HouseHunter/Modules/Account",
        swiftSettings: strict
    ),
    // The sample API server (Hummingbird, through RunwayTestServer's in-process server).
    .target(
        name: "HouseHunterServer",
        dependencies: [
            "Runway", "RunwaySigning", "RunwayCompression", "RunwayActionLog", "RunwayTestServer",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
        ],
        path: "Samples/HouseHunter/Server",
        swiftSettings: strict
    ),
    // The composition root: services, interceptor chain, action logger, modules (generated
    // registration), and the command line.
    .executableTarget(
        name: "HouseHunter",
        dependencies: [
            "Runway", "RunwayMediator", "RunwayCurl", "RunwaySigning", "RunwayCache", "RunwayDNSBypass", "RunwayCompression",
            "RunwayLogging", "RunwayActionLog", "HouseHunterScreen", "HouseHunterServer",
            "Listing", "Detail", "Account", "ListingInterface", "DetailInterface", "AccountInterface",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ],
        path: "Samples/HouseHunter/App",
        swiftSettings: strict,
        plugins: ["MediatorRegistrationPlugin"]
    ),
    .testTarget(
        name: "HouseHunterTests",
        dependencies: [
            "Runway", "RunwayCurl", "RunwaySigning", "RunwayCompression", "RunwayDNSBypass", "RunwayActionLog", "RunwayTestServer",
            "RunwayMediator", "HouseHunterScreen", "HouseHunterServer", "Listing", "Detail", "ListingInterface",
        ],
        swiftSettings: strict
    ),
]
