import Benchmark
import Foundation
import Runway
import RunwayTesting

/// An interceptor that only passes the request on: what the chain itself costs.
struct NoOp: Interceptor {
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        try await next(request, context)
    }
}

/// A dispatcher that answers at once, without validation or recording: isolates the chain.
struct Immediate: Dispatcher {
    let response = Response(status: 200, body: Data(#"{"ok":true}"#.utf8))

    func dispatch(_ request: Request, context: RequestContext) async throws -> Response {
        response
    }
}

let benchmarks: @Sendable () -> Void = {
    let request = Request(url: URL(string: "https://api.example.test/items?page=1")!)
    let config = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .instructions],
        scalingFactor: .kilo,
        maxDuration: .seconds(3)
    )

    Benchmark("chain: 6 no-op interceptors + immediate dispatcher", configuration: config) { benchmark in
        let pipeline = Pipeline(interceptors: Array(repeating: NoOp(), count: 6), dispatcher: Immediate())
        for _ in benchmark.scaledIterations {
            blackHole(try await pipeline.send(request, context: RequestContext()))
        }
    }

    Benchmark("chain: 0 interceptors + immediate dispatcher", configuration: config) { benchmark in
        let pipeline = Pipeline(interceptors: [], dispatcher: Immediate())
        for _ in benchmark.scaledIterations {
            blackHole(try await pipeline.send(request, context: RequestContext()))
        }
    }
}
