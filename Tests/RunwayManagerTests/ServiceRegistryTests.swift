import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import RunwayTesting
import Testing

@Suite struct ServiceRegistryTests {
    struct ThreeEnvironments: Service {
        let id: ServiceID = .rental
        let baseURLs = BaseURLs(
            develop: "http://dev.rent.test/v1", releaseCandidate: "http://rc.rent.test/v1", release: "https://rent.test/v1")
    }

    @Test(arguments: [
        (ServiceEnvironment.develop, "http://dev.rent.test/v1/items?page=2"),
        (ServiceEnvironment.releaseCandidate, "http://rc.rent.test/v1/items?page=2"),
        (ServiceEnvironment.release, "https://rent.test/v1/items?page=2"),
    ])
    func theEnvironmentPicksTheBaseURL(environment: ServiceEnvironment, expected: String) async throws {
        let stub = jsonStub("{}")
        let registry = try makeRegistry(stub, services: [ThreeEnvironments()], environment: environment)
        let manager = ItemListAPIManager(registry: registry, serviceID: .rental)
        try await manager.load(params: ["page": 2])
        #expect(stub.requests.map(\.url.absoluteString) == [expected])
    }

    @Test func buildRejectsDuplicatesAndBadBaseURLsInAnyEnvironment() throws {
        var builder = ServiceRegistry.Builder(environment: .release, pipeline: Pipeline(interceptors: [], dispatcher: jsonStub("{}")))
        builder.register(TestService())
        builder.register(TestService())
        #expect(throws: RunwayError.self) { try builder.build() }

        struct BadRC: Service {
            let id: ServiceID = "bad"
            let baseURLs = BaseURLs(develop: "http://dev.test", releaseCandidate: "ftp://rc.test", release: "http://rel.test")
        }
        var second = ServiceRegistry.Builder(environment: .release, pipeline: Pipeline(interceptors: [], dispatcher: jsonStub("{}")))
        second.register(BadRC())
        do {
            _ = try second.build()
            Issue.record("expected a configuration error")
        } catch {
            #expect(error.code == .configuration)
            #expect(error.field == "bad.baseURLs.releaseCandidate")
        }
    }

    @Test(arguments: ["items#top", "items?fixed=1#frag"])
    func anAPINameWithAFragmentIsInvalidURLInsteadOfHidingTheParametersInIt(_ apiName: String) async throws {
        let stub = jsonStub("{}")
        let manager = ItemListAPIManager(registry: try makeRegistry(stub), apiName: apiName)
        let result = await outcome { try await manager.load(params: ["q": "x y"]) }
        #expect(result.failure?.code == .invalidURL)
        #expect(result.failure?.field == "apiName")
        #expect(stub.requests.isEmpty)
    }

    @Test(arguments: ["items\r\nX-Evil: 1", "items list", "items\t", "it\u{7F}ems"])
    func anAPINameWithASpaceOrControlCharacterIsInvalidURLAndNothingIsSent(_ apiName: String) async throws {
        let stub = jsonStub("{}")
        let registry = try makeRegistry(stub)
        let manager = ItemListAPIManager(registry: registry, apiName: apiName)
        let result = await outcome { try await manager.load() }
        #expect(result.failure?.code == .invalidURL)
        #expect(result.failure?.field == "apiName")
        await #expect { try await registry.send(api: apiName, of: .listings) } throws: {
            ($0 as? RunwayError)?.code == .invalidURL
        }
        #expect(stub.requests.isEmpty)
    }

    @Test func aBaseURLWithAControlCharacterIsAConfigurationError() throws {
        var builder = ServiceRegistry.Builder(environment: .release, pipeline: Pipeline(interceptors: [], dispatcher: jsonStub("{}")))
        builder.register(TestService(baseURL: "http://listings.test/v1\r\nX-Evil: 1"))
        #expect { try builder.build() } throws: {
            ($0 as? RunwayError)?.code == .configuration && ($0 as? RunwayError)?.field?.hasPrefix("listings.baseURLs.") == true
        }
    }

    @Test(
        "a base URL whose host or port no socket has is a configuration error at build",
        arguments: [
            "127.0.0.1:99999", "127.0.0.1:65536", "127.0.0.1:0", "127.0.0.1:99999999999999999999", "127.0.0.1%2F.evil", "[::g]",
            "a\\@127.0.0.1",
        ])
    func aBaseURLWithAnImpossiblePort(_ authority: String) throws {
        var builder = ServiceRegistry.Builder(environment: .release, pipeline: Pipeline(interceptors: [], dispatcher: jsonStub("{}")))
        builder.register(TestService(baseURL: "http://\(authority)/v1"))
        #expect { try builder.build() } throws: {
            ($0 as? RunwayError)?.code == .configuration && ($0 as? RunwayError)?.field?.hasPrefix("listings.baseURLs.") == true
        }
        var fine = ServiceRegistry.Builder(environment: .release, pipeline: Pipeline(interceptors: [], dispatcher: jsonStub("{}")))
        fine.register(TestService(baseURL: "http://127.0.0.1:65535/v1"))
        _ = try fine.build()
    }

    @Test func anUnknownServiceFailsTheCallWithAConfigurationError() async throws {
        let stub = jsonStub("{}")
        let manager = ItemListAPIManager(registry: try makeRegistry(stub), serviceID: "nowhere")
        let log = EventLog()
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        let result = await outcome { try await manager.load() }
        #expect(result.failure?.code == .configuration)
        #expect(log.events == ["delegate.fail(configuration)"])
        #expect(stub.requests.isEmpty)
    }

    @Test func commonHeadersAndParametersAndTheServiceChainApply() async throws {
        let log = EventLog()
        let stub = StubDispatcher { _ in
            log.append("dispatcher")
            return Response(status: 200, body: Data("{}".utf8))
        }
        var service = TestService()
        service.commonHeaders = ["X-Client": "househunter"]
        service.commonParameters = ["app": "hh", "page": 1]
        service.interceptors = [RecordingLogInterceptor(name: "service", log: log)]
        let registry = try makeRegistry(stub, services: [service], interceptors: [RecordingLogInterceptor(name: "app", log: log)])
        let manager = ItemListAPIManager(registry: registry)
        try await manager.load(params: ["page": 3, "q": "two rooms"])
        let request = try #require(stub.requests.first)
        #expect(request.url.absoluteString == "http://listings.test/v1/items?app=hh&page=3&q=two%20rooms")
        #expect(request.headers["X-Client"] == "househunter")
        #expect(log.events == ["app>", "service>", "dispatcher", "<service", "<app"])
    }

    /// A service whose common header and parameter follow a setting that changes (a locale).
    struct LocaleService: Service {
        let id: ServiceID = .listings
        let baseURLs = BaseURLs("http://listings.test/v1")
        let locale: EventLog
        var commonHeaders: HTTPHeaders { ["Accept-Language": locale.events.last ?? "none"] }
        var commonParameters: [String: JSON] { ["lang": .string(locale.events.last ?? "none")] }
    }

    @Test("a service's common headers and parameters are read for each call, not once when the registry is built")
    func commonHeadersAndParametersAreReadPerCall() async throws {
        let stub = jsonStub("{}")
        let locale = EventLog()
        locale.append("en")
        let registry = try makeRegistry(stub, services: [LocaleService(locale: locale)])
        let manager = ItemListAPIManager(registry: registry)
        locale.append("fr")
        try await manager.load()
        locale.append("de")
        _ = try await registry.send(api: "ping", of: .listings)
        try await manager.load()
        let sent = stub.requests
        #expect(sent.map { $0.headers["Accept-Language"] } == ["fr", "de", "de"])
        #expect(sent.map { $0.url.query } == ["lang=fr", nil, "lang=de"])
    }

    @Test func queryParametersArePercentEncodedLikeFoundation() async throws {
        let stub = jsonStub("{}")
        let manager = ItemListAPIManager(registry: try makeRegistry(stub))
        let texts = ["a&b=c", "上海 浦东", "~-._", "😀 ok", "100%", "x+y/z?#", "", "ÅÉ\u{301}"]
        var params: [String: JSON] = [:]
        for (index, text) in texts.enumerated() { params["k\(index) \(text)"] = .string(text) }
        params["list"] = [.string("a b"), 2, true]
        params["number"] = -42
        params["flag"] = false
        params["ratio"] = 2.5
        try await manager.load(params: params)
        let request = try #require(stub.requests.first)
        // The oracle: Foundation's encoder, over the same sorted pairs.
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        func encoded(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "?" }
        var pairs: [String] = []
        for (key, value) in params.sorted(by: { $0.key < $1.key }) {
            let values: [JSON] = if case .array(let elements) = value { elements } else { [value] }
            for element in values { pairs.append(encoded(key) + "=" + encoded(element.queryText)) }
        }
        #expect(request.url.query(percentEncoded: true) == pairs.joined(separator: "&"))
    }

    @Test func aRepeatedCallReusesItsURLOnlyForParametersWrittenTheSameWay() async throws {
        // The engine keeps the last query URL for identical parameters: values that are `==`
        // but written differently (composed and decomposed "é") must not share it.
        let stub = jsonStub("{}")
        let manager = ItemListAPIManager(registry: try makeRegistry(stub))
        let calls: [[String: JSON]] = [
            ["x": 0.0], ["x": 0.0], ["x": 1], ["q": "\u{E9}"], ["q": "e\u{301}"], ["q": "\u{E9}"],
            ["a": 1, "b": 2], ["b": 2, "a": 1], ["a": 1, "b": 3], [:], ["x": 0.0],
        ]
        for params in calls { try await manager.load(params: params) }
        #expect(
            stub.requests.map { $0.url.query(percentEncoded: true) ?? "" } == [
                "x=0.0", "x=0.0", "x=1", "q=%C3%A9", "q=e%CC%81", "q=%C3%A9",
                "a=1&b=2", "a=1&b=2", "a=1&b=3", "", "x=0.0",
            ])
    }

    @Test func postSendsParametersAsAJSONBody() async throws {
        let stub = jsonStub("{}")
        let manager = ItemListAPIManager(registry: try makeRegistry(stub), method: .post)
        try await manager.load(params: ["name": "Ann", "tags": ["a", "b"]])
        let request = try #require(stub.requests.first)
        #expect(request.method == .post)
        #expect(request.url.absoluteString == "http://listings.test/v1/items")
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(try JSON(parsing: request.body ?? Data()) == ["name": "Ann", "tags": ["a", "b"]])
    }

    @Test func aBusinessCodeIsMappedByTheServiceAndTheResponseIsKept() async throws {
        var service = TestService()
        service.tokenExpiredCode = 1001
        let manager = ItemListAPIManager(registry: try makeRegistry(jsonStub(#"{"code":1001}"#), services: [service]))
        let result = await outcome { try await manager.load() }
        let error = try #require(result.failure)
        #expect(error.code == .needsLogin)
        #expect(error.stage == .service(.listings))
        #expect(error.response?.status == 200)
    }

    @Test(arguments: [(500, RunwayError.Code.serverError), (404, .serverError), (401, .needsLogin)])
    func statusCodesMapToErrorCodes(status: Int, code: RunwayError.Code) async throws {
        let manager = ItemListAPIManager(registry: try makeRegistry(jsonStub("<html>oops</html>", status: status)))
        let result = await outcome { try await manager.load() }
        #expect(result.failure?.code == code)
        #expect(result.failure?.response?.status == status)
    }

    @Test func anEngineSharedByTwoManagersRefusesTheSecondLoudly() async throws {
        /// A manager that takes the engine it is given.
        final class Borrower: APIManager {
            let engine: ManagerEngine
            let apiName: String
            let serviceID: ServiceID = .listings
            init(_ engine: ManagerEngine, _ apiName: String) {
                self.engine = engine
                self.apiName = apiName
            }
        }
        let stub = jsonStub("{}")
        let engine = ManagerEngine(registry: try makeRegistry(stub), delivery: .inline)
        let first = Borrower(engine, "items")
        let second = Borrower(engine, "orders")
        _ = try await first.load()
        let refused = await outcome { try await second.load() }
        #expect(refused.failure?.code == .configuration)
        #expect(refused.failure?.message.contains("belongs to another manager") == true)
        #expect(second.loadData() == false)
        _ = try await first.load()  // the owner goes on
        #expect(stub.requests.map(\.url.path) == ["/v1/items", "/v1/items"])
    }

    @Test func aHeadManagerSucceedsWithTheHeadAlone() async throws {
        try await withTestServer { server in
            let registry = try makeRegistry(CurlDispatcher(), services: [TestService(baseURL: server.url("/").absoluteString)])
            let manager = ItemListAPIManager(registry: registry, apiName: "echo", method: .head)
            let result = await outcome { try await manager.load() }
            #expect(result.success == .null, "\(String(describing: result.failure))")
            #expect(server.stats.requests(path: "/echo") == 1)
        }
    }

    @Test func aNonJSONOrEmptySuccessIsATypedErrorWithTheBodyKept() async throws {
        let html = ItemListAPIManager(registry: try makeRegistry(jsonStub("<html>")))
        let first = await outcome { try await html.load() }
        #expect(first.failure?.code == .responseInvalid)
        #expect(first.failure?.response?.body == Data("<html>".utf8))
        #expect(html.rawData == nil)

        let empty = ItemListAPIManager(registry: try makeRegistry(jsonStub("", status: 204)))
        let second = await outcome { try await empty.load() }
        #expect(second.failure?.code == .noContent)
    }
}

/// Records requests and responses by name into an EventLog.
struct RecordingLogInterceptor: Interceptor {
    let name: String
    let log: EventLog
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        log.append("\(name)>")
        let response = try await next(request, context)
        log.append("<\(name)")
        return response
    }
}
