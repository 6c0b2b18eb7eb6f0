import Foundation
import Runway

// What the manager and cache benchmarks (and the profiling driver) call: one service, a
// manager over it, and a dispatcher that answers at once.

extension ServiceID {
    /// The benchmarks' service.
    public static let bench: ServiceID = "bench"
}

/// The benchmarks' service.
public struct BenchService: Service {
    public let id: ServiceID = .bench
    public let baseURLs = BaseURLs("https://api.example.test/v1")

    public init() {}
}

/// A dispatcher that answers at once, without validation or recording: isolates the manager.
public struct Immediate: Dispatcher {
    public let response: Response

    public init(response: Response) {
        self.response = response
    }

    public func dispatch(_ request: Request, context: RequestContext) async throws -> Response {
        response
    }
}

/// A manager whose calls all start (no policy in the way), delivering inline.
public final class BenchItemsAPIManager: APIManager {
    public let engine: ManagerEngine
    public let apiName: String
    public let serviceID: ServiceID = .bench
    public var loadPolicy: LoadPolicy { .concurrent }

    public init(registry: ServiceRegistry, apiName: String = "items") {
        engine = ManagerEngine(registry: registry, delivery: .inline)
        self.apiName = apiName
    }
}

/// Typed keys of ``BenchListReformer``.
public enum BenchListKey {
    public static let id = ReformedKey<Int>("BenchList.id")
    public static let title = ReformedKey<String>("BenchList.title")
    public static let price = ReformedKey<Int>("BenchList.price")
}

/// A reformer as a list view would write one: three typed fields per item.
public struct BenchListReformer: Reformer {
    public init() {}

    public func reform(_ data: JSON, from manager: any APIManager) throws -> [ReformedRecord] {
        (data["items"]?.array ?? []).map { item in
            var record = ReformedRecord()
            record[BenchListKey.id] = item["id"]?.int
            record[BenchListKey.title] = item["title"]?.string
            record[BenchListKey.price] = item["price"]?.int
            return record
        }
    }
}

/// A registry whose one service ends in `pipeline`.
public func benchRegistry(pipeline: Pipeline) -> ServiceRegistry {
    var builder = ServiceRegistry.Builder(environment: .release, pipeline: pipeline)
    builder.register(BenchService())
    // The service is well-formed; a failure here is a bug in the benchmark.
    guard let registry = try? builder.build() else { fatalError("benchmark registry") }
    return registry
}

/// A registry whose dispatcher answers every call with `body`.
public func benchRegistry(body: String) -> ServiceRegistry {
    benchRegistry(pipeline: Pipeline(interceptors: [], dispatcher: Immediate(response: Response(status: 200, body: Data(body.utf8)))))
}

/// `{"items":[...]}` with 100 items of three fields.
public let hundredItems =
    "{\"items\":[" + (0..<100).map { #"{"id":\#($0),"title":"Flat \#($0)","price":\#(1000 + $0)}"# }.joined(separator: ",") + "]}"
