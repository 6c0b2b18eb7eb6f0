import Benchmark
import Foundation
import Runway
import RunwayTesting

// Manager overhead (issue 3): one `try await manager.load()` over a stub dispatcher, chain
// included (target ≤ 2 µs and ≤ 10 allocations per call), and `fetchData(with:)` with a
// reformer over a 100-item list. Wire as an executable target depending on Benchmark, Runway
// and RunwayTesting, like ChainBenchmarks.

extension ServiceID {
    static let bench: ServiceID = "bench"
}

struct BenchService: Service {
    let id: ServiceID = .bench
    let baseURLs = BaseURLs("https://api.example.test/v1")
}

/// A dispatcher that answers at once, without validation or recording: isolates the manager.
struct Immediate: Dispatcher {
    let response: Response

    func dispatch(_ request: Request, context: RequestContext) async throws -> Response {
        response
    }
}

final class BenchItemsAPIManager: APIManager {
    let engine: ManagerEngine
    let apiName = "items"
    let serviceID: ServiceID = .bench
    var loadPolicy: LoadPolicy { .concurrent }

    init(registry: ServiceRegistry) {
        engine = ManagerEngine(registry: registry, delivery: .inline)
    }
}

enum BenchListKey {
    static let id = ReformedKey<Int>("BenchList.id")
    static let title = ReformedKey<String>("BenchList.title")
    static let price = ReformedKey<Int>("BenchList.price")
}

struct BenchListReformer: Reformer {
    func reform(_ data: JSON, from manager: any APIManager) throws -> [ReformedRecord] {
        (data["items"]?.array ?? []).map { item in
            var record = ReformedRecord()
            record[BenchListKey.id] = item["id"]?.int
            record[BenchListKey.title] = item["title"]?.string
            record[BenchListKey.price] = item["price"]?.int
            return record
        }
    }
}

func registry(body: String) -> ServiceRegistry {
    var builder = ServiceRegistry.Builder(
        environment: .release,
        pipeline: Pipeline(interceptors: [], dispatcher: Immediate(response: Response(status: 200, body: Data(body.utf8)))))
    builder.register(BenchService())
    // The service is well-formed; a failure here is a bug in the benchmark.
    guard let registry = try? builder.build() else { fatalError("benchmark registry") }
    return registry
}

let hundredItems =
    "{\"items\":[" + (0..<100).map { #"{"id":\#($0),"title":"Flat \#($0)","price":\#(1000 + $0)}"# }.joined(separator: ",") + "]}"

let benchmarks: @Sendable () -> Void = {
    let config = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .instructions],
        scalingFactor: .kilo,
        maxDuration: .seconds(3)
    )

    Benchmark("manager: load() over an immediate dispatcher", configuration: config) { benchmark in
        let manager = BenchItemsAPIManager(registry: registry(body: #"{"ok":true}"#))
        for _ in benchmark.scaledIterations {
            blackHole(try await manager.load())
        }
    }

    Benchmark("manager: load(params:) with two query parameters", configuration: config) { benchmark in
        let manager = BenchItemsAPIManager(registry: registry(body: #"{"ok":true}"#))
        for _ in benchmark.scaledIterations {
            blackHole(try await manager.load(params: ["page": 2, "city": "Shanghai"]))
        }
    }

    Benchmark("manager: fetchData(with:) over a 100-item list", configuration: config) { benchmark in
        let manager = BenchItemsAPIManager(registry: registry(body: hundredItems))
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
