// Cache hit latency end to end through a pipeline (issue 4: memory ≤ 2 µs, disk ≤ 40 µs).
//
// Wiring (for the lead): an executable target `CacheBenchmarks` in Benchmarks/Package.swift,
// path "Benchmarks/CacheBenchmarks", depending on Benchmark, Runway, RunwayCache and
// RunwayTesting, with the BenchmarkPlugin plugin.
import Benchmark
import Foundation
import Runway
import RunwayCache
import RunwayTesting

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 1_000,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 1_000_000
    )

    let request: Request
    do {
        request = try Request("https://api.runway.test/v1/listings/rent?city=Shanghai&page=2&sort=price")
    } catch {
        fatalError("benchmark set-up: \(error)")  // a literal URL; set-up only, never on input
    }
    let context = RequestContext(apiName: "listing.rent", serviceID: "listings")
    let body = Data(String(repeating: "{\"id\":1,\"title\":\"两室一厅\"},", count: 20).utf8)
    let network = StubDispatcher { _ in Response(status: 200, headers: ["Content-Type": "application/json"], body: body) }

    func makePipeline(_ policy: CachePolicy, file: URL?) -> (Pipeline, ResponseCache) {
        do {
            let cache = try ResponseCache(policies: ["listing.rent": policy], diskFile: file)
            return (Pipeline(interceptors: [cache.interceptor], dispatcher: network), cache)
        } catch {
            fatalError("benchmark set-up: \(error)")
        }
    }

    Benchmark("Cache hit, memory, through a pipeline") { benchmark in
        let (pipeline, _) = makePipeline(.memory(), file: nil)
        _ = try await pipeline.send(request, context: context)  // fill
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await pipeline.send(request, context: context))
        }
    }

    Benchmark("Cache hit, disk, through a pipeline") { benchmark in
        let directory = FileManager.default.temporaryDirectory.appending(path: "runway-cache-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (pipeline, _) = makePipeline(.disk(), file: directory.appending(path: "cache.sqlite"))
        _ = try await pipeline.send(request, context: context)  // fill
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await pipeline.send(request, context: context))
        }
    }
}
