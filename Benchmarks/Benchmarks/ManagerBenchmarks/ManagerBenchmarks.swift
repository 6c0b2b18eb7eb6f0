import BenchSupport
import Benchmark
import Foundation
import Runway

// Manager overhead (issue 3): one `try await manager.load()` over an immediate dispatcher, chain
// included (target ≤ 2 µs and ≤ 10 allocations per call), and `fetchData(with:)` with a
// reformer over a 100-item list. Names have no spaces: `thresholds check` (1.38) looks files
// up by the raw name while `thresholds update` writes spaces as underscores.

let benchmarks: @Sendable () -> Void = {
    let config = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .instructions],
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        // Allocations are (nearly) exact on any machine; times are too noisy on a shared one to
        // gate on. 2% of a 1,000-call sample is less than one allocation per call.
        // Stored in Thresholds/ (`swift package --allow-writing-to-package-directory benchmark
        // thresholds update`), checked by `swift package benchmark thresholds check`.
        thresholds: [.mallocCountTotal: .init(relative: [.p90: 2])]
    )

    Benchmark("manager-load", configuration: config) { benchmark in
        let manager = BenchItemsAPIManager(registry: benchRegistry(body: #"{"ok":true}"#))
        for _ in benchmark.scaledIterations {
            blackHole(try await manager.load())
        }
    }

    Benchmark("manager-load-two-params", configuration: config) { benchmark in
        let manager = BenchItemsAPIManager(registry: benchRegistry(body: #"{"ok":true}"#))
        for _ in benchmark.scaledIterations {
            blackHole(try await manager.load(params: ["page": 2, "city": "Shanghai"]))
        }
    }

    Benchmark("manager-fetchData-reformer-100-items", configuration: config) { benchmark in
        let manager = BenchItemsAPIManager(registry: benchRegistry(body: hundredItems))
        try await manager.load()
        let reformer = BenchListReformer()
        for _ in benchmark.scaledIterations {
            blackHole(try manager.fetchData(with: reformer))
        }
    }

    Benchmark("manager-json-parse-100-items", configuration: config) { benchmark in
        let data = Data(hundredItems.utf8)
        for _ in benchmark.scaledIterations {
            blackHole(try JSON(parsing: data))
        }
    }
}
