import Foundation
import Hummingbird
import Runway
import RunwayCache
import RunwayCurl
import RunwayTestServer
import Synchronization
import Testing

/// Whose response a cached entry is, and which responses are never kept: through a registry,
/// a manager, libcurl and the test server.
@Suite(.timeLimit(.minutes(5))) struct CacheIdentityTests {
    /// A service whose 200 `{"code":5000}` is a business error, optionally with a token.
    struct AccountService: Service {
        let id: ServiceID = "account"
        let baseURLs: BaseURLs
        var authenticator: TokenAuthenticator?

        func error(for response: Runway.Response, json: JSON?) -> RunwayError? {
            if json?["code"]?.int == 5000 { return RunwayError(.serverError, "backend busy", response: response) }
            if response.status == 401 { return RunwayError(.needsLogin, "expired", response: response) }
            return defaultError(for: response)
        }
    }

    final class AccountAPIManager: APIManager {
        let engine: ManagerEngine
        let apiName: String
        let serviceID: ServiceID = "account"

        init(_ apiName: String, registry: ServiceRegistry) {
            self.apiName = apiName
            engine = ManagerEngine(registry: registry, delivery: .inline)
        }
    }

    /// `/v1/who`: the Authorization it got; `/v1/busy`: a business error the first time;
    /// `/v1/cookie`: sets a session cookie; `/v1/expiring`: 401 unless `Bearer fresh`.
    static func routes(_ router: Router<TestRequestContext>) {
        let busyCalls = CallCounter()
        router.get("/v1/who") { request, _ in
            json(#"{"auth":"\#(request.headers[.authorization] ?? "none")"}"#)
        }
        router.get("/v1/busy") { _, _ in
            json(busyCalls.next() == 1 ? #"{"code":5000}"# : #"{"ok":true}"#)
        }
        router.get("/v1/cookie") { _, _ in
            var response = json(#"{"ok":true}"#)
            response.headers[.setCookie] = "session=user-1-secret"
            return response
        }
        router.get("/v1/expiring") { request, _ in
            request.headers[.authorization] == "Bearer fresh"
                ? json(#"{"auth":"fresh"}"#)
                : Hummingbird.Response(status: .unauthorized, body: ResponseBody(byteBuffer: ByteBuffer(string: "{}")))
        }
    }

    static func json(_ text: String) -> Hummingbird.Response {
        Hummingbird.Response(
            status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    func registry(_ server: TestServer, cache: ResponseCache, authenticator: TokenAuthenticator? = nil) throws -> ServiceRegistry {
        var builder = ServiceRegistry.Builder(
            environment: .release, pipeline: Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher()))
        builder.register(AccountService(baseURLs: BaseURLs(server.url("/v1").absoluteString), authenticator: authenticator))
        return try builder.build()
    }

    @Test func oneUsersCachedResponseNeverAnswersAnother() async throws {
        try await withTestServer(routes: Self.routes) { server in
            let cache = try ResponseCache(policies: ["who": .memory()])
            let authenticator = TokenAuthenticator(token: "alice-token") { _ in "unused" }
            let who = AccountAPIManager("who", registry: try registry(server, cache: cache, authenticator: authenticator))
            #expect(try await who.load()["auth"] == "Bearer alice-token")
            #expect(try await who.load()["auth"] == "Bearer alice-token")
            #expect(server.stats.requests(path: "/v1/who") == 1)

            authenticator.setToken("bob-token")
            #expect(try await who.load()["auth"] == "Bearer bob-token")
            #expect(server.stats.requests(path: "/v1/who") == 2)
            // Back to Alice: her entry is still hers.
            authenticator.setToken("alice-token")
            #expect(try await who.load()["auth"] == "Bearer alice-token")
            #expect(server.stats.requests(path: "/v1/who") == 2)
        }
    }

    @Test func anIdentityKeepsEntriesAcrossARefresh() async throws {
        try await withTestServer(routes: Self.routes) { server in
            let cache = try ResponseCache(policies: ["expiring": .memory()])
            let authenticator = TokenAuthenticator(token: "stale", identity: "user-42") { _ in "fresh" }
            let expiring = AccountAPIManager("expiring", registry: try registry(server, cache: cache, authenticator: authenticator))
            #expect(try await expiring.load()["auth"] == "fresh")
            #expect(authenticator.refreshCount == 1)
            // The same user after the refresh: a hit.
            #expect(try await expiring.load()["auth"] == "fresh")
            #expect(server.stats.requests(path: "/v1/expiring") == 2)
            authenticator.setToken("fresh", identity: "user-43")
            _ = try await expiring.load()
            #expect(server.stats.requests(path: "/v1/expiring") == 3)
        }
    }

    /// Signs Bob in as the first call passes: after the cache has keyed it under Alice, before
    /// token refresh adds the token.
    struct SignInMidCall: Interceptor {
        let authenticator: TokenAuthenticator
        let calls = CallCounter()
        var name: String { "sign-in-mid-call" }

        func intercept(_ request: Runway.Request, context: Runway.RequestContext, next: Pipeline.Next) async throws -> Runway.Response {
            if calls.next() == 1 { authenticator.setToken("bob-token", identity: "bob") }
            return try await next(request, context)
        }
    }

    /// Bob signs in on the device while Alice's call is on its way: the call is not sent with
    /// Bob's token (it ends with `.needsLogin`) and nothing is cached. It was sent with Bob's
    /// token, and his response, cached under Alice's scope (read when the call started),
    /// answered Alice's next call.
    @Test func aCallNeverCarriesTheTokenOfAUserWhoSignedInWhileItWasOnItsWay() async throws {
        try await withTestServer(routes: Self.routes) { server in
            let cache = try ResponseCache(policies: ["who": .memory()])
            let authenticator = TokenAuthenticator(token: "alice-token", identity: "alice") { _ in "unused" }
            var builder = ServiceRegistry.Builder(
                environment: .release,
                pipeline: Pipeline(
                    interceptors: [cache.interceptor, SignInMidCall(authenticator: authenticator)], dispatcher: CurlDispatcher()))
            builder.register(AccountService(baseURLs: BaseURLs(server.url("/v1").absoluteString), authenticator: authenticator))
            let who = AccountAPIManager("who", registry: try builder.build())
            await #expect { try await who.load() } throws: { ($0 as? RunwayError)?.code == .needsLogin }
            #expect(server.stats.requests(path: "/v1/who") == 0)

            authenticator.setToken("alice-token", identity: "alice")
            #expect(try await who.load()["auth"] == "Bearer alice-token")
            #expect(server.stats.requests(path: "/v1/who") == 1)
        }
    }

    @Test func credentialsInHeadersKeepEntriesApartToo() async throws {
        try await withTestServer(routes: Self.routes) { server in
            let cache = try ResponseCache(policies: ["who": .memory()])
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            let context = RequestContext(apiName: "who")
            func who(_ authorization: String) async throws -> String {
                let request = Runway.Request(url: server.url("/v1/who"), headers: ["Authorization": authorization])
                return try JSON(parsing: try await pipeline.send(request, context: context).body)["auth"]?.string ?? ""
            }
            #expect(try await who("Bearer alice") == "Bearer alice")
            #expect(try await who("Bearer bob") == "Bearer bob")
            #expect(try await who("Bearer alice") == "Bearer alice")
            #expect(server.stats.requests(path: "/v1/who") == 2)
        }
    }

    @Test func everyCredentialHeaderKeepsEntriesApart() throws {
        let cache = try ResponseCache(policies: ["who": .memory()])
        let context = RequestContext(apiName: "who")
        let url = try #require(URL(string: "https://api.test/v1/who"))
        func key(_ headers: HTTPHeaders) -> CacheKey { cache.key(for: Runway.Request(url: url, headers: headers), context: context) }
        for name in ["X-Api-Key", "X-Goog-Api-Key", "Ocp-Apim-Subscription-Key", "Proxy-Authorization", "X-Session-Id", "Cookie"] {
            #expect(key([name: "alice"]) != key([name: "bob"]), "\(name)")
            #expect(key([name: "alice"]) == key([name: "alice"]), "\(name)")
            #expect(key([name: "alice"]) != key([:]), "\(name)")
        }
        // Which call, not whose: one entry.
        #expect(key(["Idempotency-Key": "1", "Accept": "a"]) == key(["Idempotency-Key": "2", "Accept": "b"]))
        // Field order does not matter.
        #expect(key(["X-Api-Key": "k", "Cookie": "c"]) == key(["Cookie": "c", "X-Api-Key": "k"]))
    }

    @Test func clientCertificatesKeepEntriesApart() async throws {
        let cache = try ResponseCache(policies: ["who": .memory()])
        let context = RequestContext(apiName: "who")
        let url = try #require(URL(string: "https://api.test/v1/who"))
        func key(_ certificate: ClientCertificate?) -> CacheKey {
            var request = Runway.Request(url: url)
            request.options.tls.clientCertificate = certificate
            return cache.key(for: request, context: context)
        }
        let alice = ClientCertificate.pemFiles(certificate: "/certs/alice.pem", privateKey: "/certs/alice.key")
        let bob = ClientCertificate.pemFiles(certificate: "/certs/bob.pem", privateKey: "/certs/bob.key")
        let aliceInMemory = ClientCertificate.pem(certificate: Data("alice's certificate".utf8))
        #expect(key(alice) != key(bob))
        #expect(key(alice) != key(nil))
        #expect(key(alice) == key(.pemFiles(certificate: "/certs/alice.pem", privateKey: "/certs/alice.key")))
        #expect(key(aliceInMemory) != key(.pem(certificate: Data("bob's certificate".utf8))))
        #expect(key(aliceInMemory) == key(.pem(certificate: Data("alice's certificate".utf8))))

        // Through a pipeline (plain HTTP: the certificate goes nowhere, but it is whose call it is).
        try await withTestServer(routes: Self.routes) { server in
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            func call(_ certificate: ClientCertificate) async throws {
                var request = Runway.Request(url: server.url("/v1/who"))
                request.options.tls.clientCertificate = certificate
                _ = try await pipeline.send(request, context: context)
            }
            let bobInMemory = ClientCertificate.pem(certificate: Data("bob's certificate".utf8))
            try await call(aliceInMemory)
            try await call(bobInMemory)
            try await call(aliceInMemory)
            #expect(server.stats.requests(path: "/v1/who") == 2)
        }
    }

    @Test func aBusinessErrorSentWithStatus200IsNotCached() async throws {
        try await withTestServer(routes: Self.routes) { server in
            let cache = try ResponseCache(policies: ["busy": .memory()])
            let busy = AccountAPIManager("busy", registry: try registry(server, cache: cache))
            await #expect { try await busy.load() } throws: { ($0 as? RunwayError)?.message == "backend busy" }
            #expect(try await busy.load() == ["ok": true])
            #expect(try await busy.load() == ["ok": true])
            #expect(server.stats.requests(path: "/v1/busy") == 2)
        }
    }

    /// A manager whose own validator wants a list of items.
    final class ItemsAPIManager: APIManager {
        let engine: ManagerEngine
        let apiName = "items"
        let serviceID: ServiceID = "account"

        init(registry: ServiceRegistry) {
            engine = ManagerEngine(registry: registry, delivery: .inline)
        }

        func validate(response: APIResponse) throws(RunwayError) {
            guard response.json["items"]?.array != nil else {
                throw RunwayError(.responseInvalid, "no items", response: response.response)
            }
        }
    }

    /// What the manager refuses (its validator's error, a page that is not JSON, an empty body
    /// its validator finds no items in) is not stored: each next call asks the server again, until one it takes is stored.
    @Test func aResponseTheManagerRefusesIsNotCached() async throws {
        let bodies = [#"{"ok":true}"#, "<html>sign in to the Wi-Fi</html>", "", #"{"items":[1]}"#]
        let calls = CallCounter()
        let routes: @Sendable (Router<TestRequestContext>) -> Void = { router in
            router.get("/v1/items") { _, _ in Self.json(bodies[min(calls.next(), bodies.count) - 1]) }
        }
        try await withTestServer(routes: routes) { server in
            let cache = try ResponseCache(policies: ["items": .memory()])
            let items = ItemsAPIManager(registry: try registry(server, cache: cache))
            await #expect { try await items.load() } throws: { ($0 as? RunwayError)?.message == "no items" }
            await #expect { try await items.load() } throws: { ($0 as? RunwayError)?.code == .responseInvalid }
            await #expect { try await items.load() } throws: { ($0 as? RunwayError)?.message == "no items" }
            #expect(cache.statistics.memoryEntries == 0)
            #expect(try await items.load() == ["items": [1]])
            #expect(cache.statistics.memoryEntries == 1)
            #expect(try await items.load() == ["items": [1]])
            #expect(items.lastResponse?.origin == .memoryCache)
        }
    }

    /// Each call carries its own service's reading of responses: a second registry built with
    /// the same cache (whose "account" service reads nothing as an error) changes nothing for
    /// the first registry's calls.
    @Test func oneCacheSharedByTwoRegistriesReadsEachCallsOwnService() async throws {
        struct PlainAccount: Service {
            let id: ServiceID = "account"
            let baseURLs: BaseURLs
        }
        try await withTestServer(routes: Self.routes) { server in
            let cache = try ResponseCache(policies: ["busy": .memory()])
            let strict = try registry(server, cache: cache)
            var lenient = ServiceRegistry.Builder(
                environment: .release, pipeline: Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher()))
            lenient.register(PlainAccount(baseURLs: BaseURLs(server.url("/v1").absoluteString)))
            _ = try lenient.build()

            let busy = AccountAPIManager("busy", registry: strict)
            await #expect { try await busy.load() } throws: { ($0 as? RunwayError)?.message == "backend busy" }
            #expect(cache.statistics.memoryEntries == 0)
            #expect(try await busy.load() == ["ok": true])
            #expect(server.stats.requests(path: "/v1/busy") == 2)
        }
    }

    @Test func aResponseThatSetsACookieIsNotCached() async throws {
        try await withTestServer(routes: Self.routes) { server in
            let cache = try ResponseCache(policies: ["cookie": .memory()])
            let cookie = AccountAPIManager("cookie", registry: try registry(server, cache: cache))
            _ = try await cookie.load()
            _ = try await cookie.load()
            #expect(server.stats.requests(path: "/v1/cookie") == 2)
            #expect(cache.statistics.memoryEntries == 0)
        }
    }

    /// `/vary`: the `Accept-Language` it got, with `Vary: Accept-Language`; `/vary-all`: the
    /// same with `Vary: *`.
    static func varyRoutes(_ router: Router<TestRequestContext>) {
        for (path, vary) in [("/vary", "Accept-Language"), ("/vary-all", "*")] {
            router.get(RouterPath(path)) { request, _ in
                Hummingbird.Response(
                    status: .ok, headers: [.contentType: "text/plain", .vary: vary],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: request.headers[.acceptLanguage] ?? "none")))
            }
        }
    }

    @Test func aResponseThatVariesAnswersOnlyRequestsThatSendTheSameFields() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "runway-cache-server-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cache.sqlite")
        try await withTestServer(routes: Self.varyRoutes) { server in
            let context = RequestContext(apiName: "doc")
            func get(_ path: String, _ language: String?, from cache: ResponseCache) async throws -> (String, ResponseOrigin) {
                let request = Runway.Request(url: server.url(path), headers: language.map { ["Accept-Language": $0] } ?? [:])
                let response = try await Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
                    .send(request, context: context)
                return (String(decoding: response.body, as: UTF8.self), response.origin)
            }
            let cache = try ResponseCache(policies: ["doc": .memoryAndDisk()], diskFile: file)
            #expect(try await get("/vary", "en", from: cache) == ("en", .network))
            // Another language (or none) is not answered with the English body.
            #expect(try await get("/vary", "fr", from: cache) == ("fr", .network))
            #expect(try await get("/vary", "fr", from: cache) == ("fr", .memoryCache))
            #expect(try await get("/vary", " fr ", from: cache) == ("fr", .memoryCache))
            #expect(try await get("/vary", nil, from: cache) == ("none", .network))
            #expect(try await get("/vary", "de", from: cache) == ("de", .network))
            // The disk keeps the fields the stored response was selected by.
            let reopened = try ResponseCache(policies: ["doc": .disk()], diskFile: file)
            #expect(try await get("/vary", "de", from: reopened) == ("de", .diskCache))
            #expect(try await get("/vary", "en", from: reopened) == ("en", .network))
            // `Vary: *` answers no other request: never stored.
            #expect(try await get("/vary-all", "en", from: cache) == ("en", .network))
            #expect(try await get("/vary-all", "en", from: cache) == ("en", .network))
            #expect(server.stats.requests(path: "/vary") == 5)
            #expect(server.stats.requests(path: "/vary-all") == 2)
        }
    }
}

/// Counts calls from any thread.
final class CallCounter: Sendable {
    private let count = Atomic<Int>(0)

    func next() -> Int { count.wrappingAdd(1, ordering: .relaxed).newValue }
}
