// Cache hit latency end to end (issue 4: memory ≤ 2 µs, disk ≤ 40 µs, through a manager): one
// `load(params:)` of an API manager whose chain holds the cache, answered from the cache. The
// same hits through a bare pipeline show what the manager adds.
import BenchSupport
import Benchmark
import Foundation
import Runway
import RunwayCache

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 1_000,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 1_000_000,
        // Allocations are (nearly) exact on any machine; times are too noisy on a shared one to
        // gate on. 2% of a 1,000-call sample is less than one allocation per call.
        // Stored in Thresholds/ (`swift package --allow-writing-to-package-directory benchmark
        // thresholds update`), checked by `swift package benchmark thresholds check`.
        thresholds: [.mallocCountTotal: .init(relative: [.p90: 2])]
    )

    func fixture(_ policy: CachePolicy, disk: Bool) -> (CacheFixture, URL?) {
        let directory = disk ? FileManager.default.temporaryDirectory.appending(path: "runway-cache-bench-\(UUID().uuidString)") : nil
        do {
            return (try CacheFixture(policy: policy, diskFile: directory?.appending(path: "cache.sqlite")), directory)
        } catch {
            fatalError("benchmark set-up: \(error)")  // a literal URL and a fresh directory; set-up only
        }
    }

    for (name, policy, disk) in [("memory", CachePolicy.memory(), false), ("disk", CachePolicy.disk(), true)] {
        Benchmark("cache-hit-\(name)-manager") { benchmark in
            let (fixture, directory) = fixture(policy, disk: disk)
            defer { directory.map { try? FileManager.default.removeItem(at: $0) } }
            let manager = fixture.manager()
            try await manager.load(params: CacheFixture.params)  // fill
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try await manager.load(params: CacheFixture.params))
            }
        }

        Benchmark("cache-hit-\(name)-pipeline") { benchmark in
            let (fixture, directory) = fixture(policy, disk: disk)
            defer { directory.map { try? FileManager.default.removeItem(at: $0) } }
            _ = try await fixture.pipeline.send(fixture.request, context: fixture.context)  // fill
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try await fixture.pipeline.send(fixture.request, context: fixture.context))
            }
        }
    }
}
