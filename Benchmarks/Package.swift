// swift-tools-version:6.1
import Foundation
import PackageDescription

// Benchmarks live in their own package so the library never depends on the benchmark tools.
// The client comparison is one process per client (`scripts/bench.py`, see README.md beside this
// file); the micro-benchmarks run with `swift package benchmark`.

// A path dependency's identity is its folder name, which differs between checkouts.
let runway = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let benchmark = Target.Dependency.product(name: "Benchmark", package: "benchmark")
let plugin = Target.PluginUsage.plugin(name: "BenchmarkPlugin", package: "benchmark")

let package = Package(
    name: "RunwayBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "..", traits: ["Cache", "ActionLog", "Signing", "Logging", "Metrics", "Tracing", "OpenAPI"]),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/vapor/routing-kit", from: "4.9.3"),
        // The OpenAPI comparison (BenchOpenAPI): the runtime and the two transports it is compared with.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
    ],
    targets: [
        // libcurl from the system, for the libcurl loop; this package's own, not Runway's.
        .systemLibrary(name: "CLibcurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // SQLite from the system, for the hand-written logger the action log is compared with.
        .systemLibrary(name: "CSQLite3", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // The clients compared by `scripts/bench.py`, each in a process of its own. The loop is C:
        // one thread, one multi handle, nothing between libcurl and the next request.
        .executableTarget(name: "BenchLoop", dependencies: ["CLibcurl"], path: "Sources/BenchLoop"),
        // What the Swift clients share: arguments, the c workers, the timed part, the JSON line.
        .target(name: "BenchHarness", swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(
            name: "BenchAHC",
            dependencies: ["BenchHarness", .product(name: "AsyncHTTPClient", package: "async-http-client")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(name: "BenchURLSession", dependencies: ["BenchHarness"], swiftSettings: [.swiftLanguageMode(.v6)]),
        // The standard chain as an app registers it, for BenchRunway and BenchOpenAPI.
        .target(
            name: "BenchChain",
            dependencies: [
                .product(name: "Runway", package: runway),
                .product(name: "RunwayCache", package: runway),
                .product(name: "RunwayCompression", package: runway),
                .product(name: "RunwaySigning", package: runway),
                .product(name: "RunwayDNSBypass", package: runway),
                .product(name: "RunwayLogging", package: runway),
                .product(name: "RunwayMetrics", package: runway),
                .product(name: "RunwayTracing", package: runway),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "BenchRunway",
            dependencies: [
                "BenchHarness", "BenchChain", .product(name: "Runway", package: runway), .product(name: "RunwayCurl", package: runway),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // One generated OpenAPI client (Generated/, committed; scripts/generate-openapi.sh at the
        // repository's root regenerates it) over Runway's transport, AsyncHTTPClient's and URLSession's.
        .executableTarget(
            name: "BenchOpenAPI",
            dependencies: [
                "BenchHarness", "BenchChain",
                .product(name: "Runway", package: runway),
                .product(name: "RunwayCurl", package: runway),
                .product(name: "RunwayOpenAPI", package: runway),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The fixtures the manager and cache micro-benchmarks (and the profiling driver) share.
        .target(
            name: "BenchSupport",
            dependencies: [
                .product(name: "Runway", package: runway),
                .product(name: "RunwayCache", package: runway),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Runs one in-process scenario N times for callgrind (see its header); not a benchmark.
        .executableTarget(
            name: "Profile",
            dependencies: [
                "BenchSupport", .product(name: "Runway", package: runway), .product(name: "RunwayCache", package: runway),
                .product(name: "RunwaySigning", package: runway),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "ChainBenchmarks",
            dependencies: [
                benchmark,
                .product(name: "Runway", package: runway),
                .product(name: "RunwayTesting", package: runway),
            ],
            path: "Benchmarks/ChainBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [plugin]
        ),
        .executableTarget(
            name: "ManagerBenchmarks",
            dependencies: [
                benchmark,
                "BenchSupport",
                .product(name: "Runway", package: runway),
            ],
            path: "Benchmarks/ManagerBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [plugin]
        ),
        .executableTarget(
            name: "CacheBenchmarks",
            dependencies: [
                benchmark,
                "BenchSupport",
                .product(name: "Runway", package: runway),
                .product(name: "RunwayCache", package: runway),
            ],
            path: "Benchmarks/CacheBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [plugin]
        ),
        .executableTarget(
            name: "MediatorBenchmarks",
            dependencies: [
                benchmark,
                .product(name: "RunwayMediator", package: runway),
                .product(name: "RoutingKit", package: "routing-kit"),
            ],
            path: "Benchmarks/MediatorBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [plugin]
        ),
        .executableTarget(
            name: "ActionLogBenchmarks",
            dependencies: [
                benchmark,
                .product(name: "Runway", package: runway),
                .product(name: "RunwayActionLog", package: runway),
                "CSQLite3",
            ],
            path: "Benchmarks/ActionLogBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [plugin]
        ),
    ]
)
