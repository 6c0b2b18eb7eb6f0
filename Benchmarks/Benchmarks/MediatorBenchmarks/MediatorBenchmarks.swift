import Benchmark
import RoutingKit
import RunwayMediator

// Resolve a URL string to target + action + typed params, including parsing, at 10, 100,
// 1,000 and 10,000 registered routes: the mediator side by side with RoutingKit's TrieRouter
// plus URLComponents parsing. Target: mediator ≤ 1 µs median at 10,000 routes, flat from 10 to
// 10,000, ≥ 3× faster than RoutingKit + parsing.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .throughput],
        warmupIterations: 1_000,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 1_000_000
    )

    for count in [10, 100, 1_000, 10_000] {
        // A fixture that cannot be built is a bug in this file, not an input: fail loudly.
        guard let fixture = try? RouteFixture(count: count) else { fatalError("cannot build the \(count)-route fixture") }
        precondition(fixture.resolveWithMediator() == 4244 && fixture.resolveWithRoutingKit() == 4244)

        Benchmark("Mediator resolve URL, \(count) routes") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(fixture.resolveWithMediator())
            }
        }

        Benchmark("RoutingKit TrieRouter + URLComponents, \(count) routes") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(fixture.resolveWithRoutingKit())
            }
        }
    }
}
