import BenchSupport
import Benchmark
import Foundation
import Runway

// Manager overhead (issue 3): one `try await manager.load()` over an immediate dispatcher, chain
// included (target ≤ 2 µs and ≤ 10 allocations per call), and `fetchData(with:)` with a
// reformer over a 100-item list.

let benchmarks: @Sendable () -> Void = {
    let config = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .instructions],
        scalingFactor: .kilo,
        maxDuration: .seconds(3)
    )

    Benchmark("manager: load() over an immediate dispatcher", configuration: config) { benchmark in
        let manager = BenchItemsAPIManager(registry: benchRegistry(body: #"{"ok":true}"#))
        for _ in benchmark.scaledIterations {
            blackHole(try await manager.load())
        }
    }

    Benchmark("manager: load(params:) with two query parameters", configuration: config) { benchmark in
        let manager = BenchItemsAPIManager(registry: benchRegistry(body: #"{"ok":true}"#))
        for _ in benchmark.scaledIterations {
            blackHole(try await manager.load(params: ["page": 2, "city": "Shanghai"]))
        }
    }

    Benchmark("manager: fetchData(with:) over a 100-item list", configuration: config) { benchmark in
        let manager = BenchItemsAPIManager(registry: benchRegistry(body: hundredItems))
        try await manager.load()
        let reformer = BenchListReformer()
        for _ in benchmark.scaledIterations {
            blackHole(try manager.fetchData(with: reformer))
        }
    }

    Benchmark("manager: JSON parse of a 100-item list", configuration: config) { benchmark in
        let data = Data(hundredItems.utf8)
        for _ in benchmark.scaledIterations {
            blackHole(try JSON(parsing: data))
        }
    }
}
