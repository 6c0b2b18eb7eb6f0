import Benchmark
import RoutingKit
import RunwayMediator

// Resolve a URL string to target + action + typed params, including parsing, at 10, 100,
// 1,000 and 10,000 registered routes: the mediator side by side with RoutingKit's TrieRouter
// plus URLComponents parsing (RouteFixture.swift). Targets: mediator ≤ 1 µs median at 10,000
// routes, flat from 10 to 10,000, ≥ 3× faster than RoutingKit + parsing.
let benchmarks: @Sendable () -> Void = {
    let config = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .instructions],
        scalingFactor: .kilo,
        maxDuration: .seconds(3)
    )

    for count in [10, 100, 1_000, 10_000] {
        let fixture: RouteFixture
        do {
            fixture = try RouteFixture(count: count)
        } catch {
            print("MediatorBenchmarks: cannot build the \(count)-route fixture: \(error)")
            continue
        }

        Benchmark("mediator: resolve URL, \(count) routes", configuration: config) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(fixture.resolveWithMediator())
            }
        }

        Benchmark("RoutingKit TrieRouter + URLComponents, \(count) routes", configuration: config) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(fixture.resolveWithRoutingKit())
            }
        }
    }
}
