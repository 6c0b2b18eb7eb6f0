// swift-tools-version:6.1
import Foundation
import PackageDescription

// Benchmarks live in their own package so the library never depends on the benchmark tool.
// Run from this folder: `swift package benchmark` (see README.md beside this file).

// A path dependency's identity is its folder name, which differs between checkouts.
let runway = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let benchmark = Target.Dependency.product(name: "Benchmark", package: "benchmark")
let plugin = Target.PluginUsage.plugin(name: "BenchmarkPlugin", package: "benchmark")

let package = Package(
    name: "RunwayBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: "..", traits: ["Cache", "ActionLog"]),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/vapor/routing-kit", from: "4.9.3"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // The clients, nginx and fixtures every benchmark and the profiling driver share.
        .target(
            name: "BenchSupport",
            dependencies: [
                .product(name: "Runway", package: runway),
                .product(name: "RunwayCurl", package: runway),
                .product(name: "RunwayURLSession", package: runway),
                .product(name: "RunwayCache", package: runway),
                .product(name: "CCurl", package: runway),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Runs one scenario N times for callgrind or perf (see its header); not a benchmark.
        .executableTarget(
            name: "Profile",
            dependencies: [
                "BenchSupport", .product(name: "Runway", package: runway), .product(name: "RunwayCache", package: runway),
                .product(name: "RunwayCurl", package: runway),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "DispatcherBenchmarks",
            dependencies: [
                benchmark,
                "BenchSupport",
            ],
            path: "Benchmarks/DispatcherBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [plugin]
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
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Benchmarks/ActionLogBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [plugin]
        ),
    ]
)
