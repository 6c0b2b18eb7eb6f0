import Foundation
import Runway
import RunwayCache

/// What the cache benchmarks (and the profiling driver) call: a cache in front of an immediate
/// dispatcher, reached through a bare pipeline or through an API manager.
public struct CacheFixture: Sendable {
    /// The API the cache has a policy for.
    public static let apiName = "listings/rent"
    /// The parameters of every call: the same request each time, so every call after the first hits.
    public static let params: [String: JSON] = ["city": "Shanghai", "page": 2, "sort": "price"]
    /// A 20-item JSON list (about 600 bytes), as a list API answers.
    public static let body = Data(("[" + Array(repeating: #"{"id":1,"title":"两室一厅"}"#, count: 20).joined(separator: ",") + "]").utf8)

    public let cache: ResponseCache
    public let pipeline: Pipeline
    /// The request a manager of ``apiName`` sends with ``params``, for the bare-pipeline benchmark.
    public let request: Request
    public let context: RequestContext

    /// A cache with `policy` for ``apiName`` (and the disk file at `diskFile`, if any).
    public init(policy: CachePolicy, diskFile: URL?) throws {
        cache = try ResponseCache(policies: [Self.apiName: policy], diskFile: diskFile)
        let answer = Response(status: 200, headers: ["Content-Type": "application/json"], body: Self.body)
        pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: Immediate(response: answer))
        request = try Request("https://api.example.test/v1/\(Self.apiName)?city=Shanghai&page=2&sort=price")
        context = RequestContext(apiName: Self.apiName, serviceID: .bench)
    }

    /// A manager of ``apiName`` whose service ends in this fixture's pipeline.
    public func manager() -> BenchItemsAPIManager {
        BenchItemsAPIManager(registry: benchRegistry(pipeline: pipeline), apiName: Self.apiName)
    }
}
