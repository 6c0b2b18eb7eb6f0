import Foundation
import Runway
import RunwayTestServer
import RunwayTesting
import Testing

// The code between the BEGIN/END markers is quoted by the guides (Sources/Runway/Runway.docc:
// Managers.md, Reformers.md, Testing.md), whose blocks the sample's ReadmeExcerptTests check line
// by line against this file; the tests below run it.

// BEGIN guide: Write an API manager
extension ServiceID {
    static let houses: ServiceID = "houses"
}

/// The team's API provider: a base URL per environment, shared headers and error handling.
struct HouseService: Service {
    let id: ServiceID = .houses
    let baseURLs = BaseURLs(
        develop: "https://dev.houses.example.com/v1",
        releaseCandidate: "https://rc.houses.example.com/v1",
        release: "https://houses.example.com/v1")
    var commonHeaders: HTTPHeaders { ["X-Client": "househunter/1.0"] }

    func error(for response: Response, json: JSON?) -> RunwayError? {
        if json?["code"]?.int == 1001 { return RunwayError(.needsLogin, "session expired", response: response) }
        return defaultError(for: response)
    }
}

/// One API, one manager: what to call, how, and what counts as valid.
final class HouseSearchAPIManager: APIManager {
    let engine: ManagerEngine
    let apiName = "houses/search"
    let serviceID: ServiceID = .houses
    var loadPolicy: LoadPolicy { .cancelPrevious }  // search-as-you-type

    /// The app passes nothing (the bootstrapped registry); a test passes an engine of its own.
    init(engine: ManagerEngine = ManagerEngine()) { self.engine = engine }

    func validate(params: [String: JSON]) throws(RunwayError) {
        guard let city = params["city"]?.string, !city.isEmpty else {
            throw .paramsInvalid(field: "city", "choose a city")
        }
    }
}

/// The screen: the manager's delegate, on the main actor.
@MainActor
final class HouseSearchScreen {
    let search = HouseSearchAPIManager()
    var rows: [ReformedRecord] = []
    var message = ""

    init() { search.delegate = self }

    func cityChanged(to city: String) {
        search.loadData(params: ["city": .string(city)])
    }
}

extension HouseSearchScreen: @MainActor APIManagerDelegate {
    func managerCallAPIDidSucceed(_ manager: any APIManager) {
        rows = (try? manager.fetchData(with: HouseListReformer())) ?? []
    }

    func managerCallAPIDidFail(_ manager: any APIManager, error: RunwayError) {
        message = error.code == .paramsInvalid ? "Please choose a city" : error.message
    }
}
// END guide: Write an API manager

// BEGIN guide: Write an API manager (path)
/// `GET products/{id}`: one manager for every product, one name for its policies and logs.
final class ProductDetailAPIManager: APIManager {
    let engine: ManagerEngine
    let apiName = "product.detail"
    let path = "products/{id}"
    let serviceID: ServiceID = .houses

    init(engine: ManagerEngine = ManagerEngine()) { self.engine = engine }

    /// Per-call settings for the interceptors, from the call's parameters.
    func configure(_ context: inout RequestContext, params: [String: JSON]) {
        if params["once"]?.bool == true { context[RetryOverride.Key.self] = .never }
    }
}
// END guide: Write an API manager (path)

// BEGIN guide: Write an API manager (Codable)
/// The product as the app uses it; the service's decoder maps `listed_at` to `listedAt`.
struct ListedProduct: Decodable {
    let id: Int
    let title: String
    let listedAt: Date
}

/// `GET products/{id}`, decoded into a `ListedProduct`.
final class ShopProductAPIManager: APIManager {
    let engine: ManagerEngine
    let apiName = "product.detail"
    let path = "products/{id}"
    let serviceID: ServiceID = "shop"

    init(engine: ManagerEngine = ManagerEngine()) { self.engine = engine }
}

/// A service whose APIs speak snake_case with ISO 8601 dates, said once.
struct ShopService: Service {
    let id: ServiceID = "shop"
    let baseURLs = BaseURLs("https://shop.example.com/v1")
    let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}
// END guide: Write an API manager (Codable)

// BEGIN guide: Write a reformer
/// The list cell's keys, typed and named after the reformer.
enum HouseListKey {
    static let id = ReformedKey<String>("HouseList.id")
    static let title = ReformedKey<String>("HouseList.title")
    static let price = ReformedKey<Int>("HouseList.price")
}

/// Turns any listing API's raw data into rows for the house list cell.
struct HouseListReformer: Reformer {
    func reform(_ data: JSON, from manager: any APIManager) throws -> [ReformedRecord] {
        (data["houses"]?.array ?? []).map { house in
            var row = ReformedRecord()
            row[HouseListKey.id] = house["id"]?.string
            row[HouseListKey.title] = house["title"]?.string
            row[HouseListKey.price] = house["price"]?.int
            return row
        }
    }
}

// In a cell:  titleLabel.text = row[HouseListKey.title]
// END guide: Write a reformer

@Suite struct ReadmeExampleTests {
    /// The only test that touches the process-wide registry.
    @Test @MainActor func theReadmeManagerRunsAgainstTheBootstrappedRegistry() async throws {
        let stub = StubDispatcher { request in
            #expect(request.headers["X-Client"] == "househunter/1.0")
            let body = #"{"houses":[{"id":"h1","title":"Loft by the river","price":2400}]}"#
            return Response(status: 200, body: Data(body.utf8))
        }
        var builder = ServiceRegistry.Builder(environment: .develop, pipeline: Pipeline(interceptors: [], dispatcher: stub))
        builder.register(HouseService())
        try ServiceRegistry.bootstrap(builder.build())
        // Bootstrapping twice is a typed error, not a crash.
        #expect(throws: RunwayError.self) { try ServiceRegistry.bootstrap(builder.build()) }

        let screen = HouseSearchScreen()
        screen.cityChanged(to: "")
        #expect(await eventually { screen.message == "Please choose a city" })
        #expect(stub.requests.isEmpty)

        screen.cityChanged(to: "Shanghai")
        #expect(await eventually { !screen.rows.isEmpty })
        #expect(screen.rows.first?[HouseListKey.title] == "Loft by the river")
        #expect(screen.rows.first?[HouseListKey.price] == 2400)
        #expect(stub.requests.map(\.url.absoluteString) == ["https://dev.houses.example.com/v1/houses/search?city=Shanghai"])
    }
}

@Suite struct ReadmePathExampleTests {
    @Test func theProductManagerFillsItsPathAndKeepsItsName() async throws {
        let stub = StubDispatcher { _ in Response(status: 200, body: Data(#"{"id":42}"#.utf8)) }
        let seen = EventLog()
        let probe = ContextProbe { seen.append("\($0.apiName ?? "-") \($0[RetryOverride.Key.self]?.maxAttempts ?? 0)") }
        var builder = ServiceRegistry.Builder(environment: .release, pipeline: Pipeline(interceptors: [probe], dispatcher: stub))
        builder.register(HouseService())
        let manager = ProductDetailAPIManager(engine: ManagerEngine(registry: try builder.build()))
        let product = try await manager.load(params: ["id": 42, "once": true])
        #expect(product["id"]?.int == 42)
        #expect(stub.requests.map(\.url.absoluteString) == ["https://houses.example.com/v1/products/42?once=true"])
        #expect(seen.events == ["product.detail 1"])
    }
}

@Suite struct ReadmeCodableExampleTests {
    @Test func theProductIsDecodedWithTheServicesDecoder() async throws {
        let stub = StubDispatcher { _ in
            Response(status: 200, body: Data(#"{"id":42,"title":"Loft","listed_at":"2026-11-24T06:00:00Z"}"#.utf8))
        }
        var builder = ServiceRegistry.Builder(environment: .release, pipeline: Pipeline(interceptors: [], dispatcher: stub))
        builder.register(ShopService())
        let manager = ShopProductAPIManager(engine: ManagerEngine(registry: try builder.build(), delivery: .inline))
        let product = try await manager.load(as: ListedProduct.self, params: ["id": 42])
        #expect(product.title == "Loft")
        #expect(product.listedAt == Date(timeIntervalSince1970: 1_795_500_000))
        #expect(stub.requests.map(\.url.absoluteString) == ["https://shop.example.com/v1/products/42"])
    }
}

/// Calls `observe` with each call's context.
private struct ContextProbe: Interceptor {
    let observe: @Sendable (RequestContext) -> Void
    var name: String { "probe" }

    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        observe(context)
        return try await next(request, context)
    }
}

/// The README's "Test your own code" example: a manager against a stub, with a registry of its
/// own (the process-wide one can be bootstrapped once, and suites run in parallel).
@Suite struct ReadmeTestingExampleTests {
    @Test func searchSendsTheCityAndReadsTheRows() async throws {
        let stub = StubDispatcher { _ in
            Response(status: 200, body: Data(#"{"houses":[{"id":"h1","title":"Loft","price":2400}]}"#.utf8))
        }
        var builder = ServiceRegistry.Builder(environment: .develop, pipeline: Pipeline(interceptors: [], dispatcher: stub))
        builder.register(HouseService())
        let engine = ManagerEngine(registry: try builder.build(), delivery: .inline)
        let search = HouseSearchAPIManager(engine: engine)

        try await search.load(params: ["city": "Shanghai"])
        #expect(try search.fetchData(with: HouseListReformer()).first?[HouseListKey.title] == "Loft")
        #expect(stub.requests.first?.url.query == "city=Shanghai")
        await #expect(throws: RunwayError.self) { try await search.load(params: ["city": ""]) }
    }
}
