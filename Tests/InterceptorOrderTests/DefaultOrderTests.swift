import Foundation
import InMemoryLogging
import Logging
import Runway
import RunwayCache
import RunwayCompression
import RunwayDNSBypass
import RunwayHAR
import RunwayLogging
import RunwayMetrics
import RunwaySigning
import RunwayTesting
import Testing

/// A stand-in for a standard interceptor, under the standard name.
struct StandIn: Interceptor {
    let name: String
    let body: @Sendable (Request, RequestContext, Pipeline.Next) async throws -> Response
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        try await body(request, context, next)
    }
}

/// The server end of the chain, in process: it checks every signature with the real verifier
/// (a replayed nonce is a 401), refuses connections for 127.0.0.2, and answers `/flaky` with
/// 503 once.
final class VerifyingNetwork: Dispatcher, @unchecked Sendable {
    // @unchecked: `flakyServed` and `seen` are only touched under `lock`; `verifier` is immutable.
    private let lock = NSLock()
    private var flakyServed = false
    private var seen: [Request] = []
    let verifier: SignatureVerifier

    init(verifier: SignatureVerifier) { self.verifier = verifier }

    /// Requests that reached a server (not the refused ones).
    var received: [Request] { lock.withLock { seen } }

    func dispatch(_ request: Request, context: RequestContext) async throws -> Response {
        try request.validate()
        if request.options.connectOverrides.first?.connectHost == "127.0.0.2" {
            throw RunwayError(.cannotConnect, "refused", neverSent: true)
        }
        lock.withLock { seen.append(request) }
        do {
            try verifier.verify(request)
        } catch {
            return Response(status: 401, body: Data("\(error)".utf8))
        }
        if request.url.path == "/secure", request.headers["Authorization"] != "Bearer fresh" {
            return Response(status: 401)
        }
        if request.url.path == "/flaky",
            lock.withLock({ () -> Bool in
                defer { flakyServed = true }
                return !flakyServed
            })
        {
            return Response(status: 503)
        }
        return Response(status: 200, body: Data(#"{"ok":true}"#.utf8))
    }
}

@Suite struct DefaultOrderTests {
    static let secret = "order-test-secret-0123456789"
    let network: VerifyingNetwork
    let handler: InMemoryLogHandler
    let recorder = HARRecorder()
    let interceptors: [any Interceptor]

    init() throws {
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        self.handler = handler
        let logger = Logger(label: "order") { _ in handler }
        network = VerifyingNetwork(verifier: try SignatureVerifier.hmacSHA256(secret: Self.secret))
        let bypass = try DNSBypass(.init(hosts: ["api.runway.test": ["127.0.0.2", "127.0.0.3"]], fallsBackToDNS: false))
        let tracing = StandIn(name: "tracing") { try await $2($0, $1) }
        let validation = StandIn(name: "validation") { request, context, next in
            if request.url.query?.contains("price=-1") == true {
                throw RunwayError(.paramsInvalid, "price must be positive", field: "price")
            }
            return try await next(request, context)
        }
        interceptors = [
            tracing,
            try MetricsInterceptor.metrics(),
            LoggingInterceptor.logging(logger),
            HARInterceptor.har(recorder),
            validation,
            CookieInterceptor.cookies(CookieJar()),
            try CacheInterceptor.cache(policies: ["listing.rent": .memory()]),
            try RequestMergingInterceptor.merging([:]),
            try RetryInterceptor.retry(maxAttempts: 3, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(5)),
            try RedirectInterceptor.redirects(),
            try CompressionInterceptor.compression(threshold: 64),
            try SigningInterceptor.signing(secret: Self.secret),
            DNSBypassInterceptor.dnsBypass(bypass),
        ]
    }

    var pipeline: Pipeline { Pipeline(interceptors: interceptors, dispatcher: network) }

    @Test func theDocumentedOrderIsPinned() {
        #expect(
            DefaultOrder.names == [
                "tracing", "metrics", "logging", "har", "validation", "cookies", "cache", "merging", "retry", "redirects", "compression",
                "signing", "dns-bypass",
            ])
        #expect(interceptors.map(\.name) == DefaultOrder.names)
        #expect(DefaultOrder.misplaced(in: interceptors).isEmpty)
    }

    /// Cookies before the cache: the cache keys a call by its `Cookie` header, so the next user
    /// who signs in never gets the previous user's cached answer. After the cache, the cache sees
    /// no cookie and answers the second user with the first user's data.
    @Test func cookiesBeforeTheCacheKeepUsersApart() async throws {
        let url = try #require(URL(string: "https://api.runway.test/me"))
        let stub = StubDispatcher { request in Response(status: 200, body: Data((request.headers["Cookie"] ?? "none").utf8)) }
        for cookiesFirst in [true, false] {
            let jar = CookieJar()
            let cookies = CookieInterceptor.cookies(jar)
            let cache = try CacheInterceptor.cache(policies: ["me": .memory()])
            let pipeline = Pipeline(interceptors: cookiesFirst ? [cookies, cache] : [cache, cookies], dispatcher: stub)
            func me() async throws -> String {
                String(decoding: try await pipeline.send(Request(url: url), context: RequestContext(apiName: "me")).body, as: UTF8.self)
            }
            jar.store(setCookie: ["sid=alice"], from: url)
            #expect(try await me() == "sid=alice")
            jar.removeAll()
            jar.store(setCookie: ["sid=bob"], from: url)
            #expect(try await me() == (cookiesFirst ? "sid=bob" : "sid=alice"))
            #expect(DefaultOrder.misplaced(in: pipeline.interceptors) == (cookiesFirst ? [] : ["cookies should come before cache"]))
        }
    }

    @Test func misplacedInterceptorsAreNamed() throws {
        var swapped = interceptors
        swapped.swapAt(8, 11)  // signing before retry: retries would reuse the nonce
        #expect(
            DefaultOrder.misplaced(in: swapped) == [
                "redirects should come before signing", "compression should come before signing", "retry should come before signing",
            ])
        var mergingLate = interceptors
        mergingLate.swapAt(7, 11)  // merging after signing: the combined request would go unsigned
        #expect(DefaultOrder.misplaced(in: mergingLate).contains("merging should come before signing"))
        let doubled = interceptors + [try RetryInterceptor.retry(maxAttempts: 2)]
        #expect(DefaultOrder.misplaced(in: doubled).contains("retry is registered more than once"))
        let custom = [StandIn(name: "user-agent") { try await $2($0, $1) }] + interceptors
        #expect(DefaultOrder.misplaced(in: custom).isEmpty)
    }

    @Test func aCacheHitIsLoggedRecordedAndNeitherSignedNorSent() async throws {
        let context = RequestContext(apiName: "listing.rent")
        let first = try await pipeline.send(try Request("https://api.runway.test/rent?city=sh"), context: context)
        #expect(first.origin == .network || first.origin == .stub)
        let sent = network.received.count
        let second = try await pipeline.send(
            try Request("https://api.runway.test/rent?city=sh"), context: RequestContext(apiName: "listing.rent"))
        #expect(second.origin == .memoryCache)
        #expect(network.received.count == sent)
        #expect(handler.entries.contains { "\($0.message)".contains("[memory-cache hit]") })
        #expect(recorder.har().log.entries.map(\.fromCache) == [nil, "memory"])
    }

    @Test func eachRetryIsReSignedAndPassesTheReplayCheck() async throws {
        let response = try await pipeline.send(try Request("https://api.runway.test/flaky"))
        #expect(response.status == 200)
        let received = network.received
        // Attempt 1: 127.0.0.2 refused (nothing sent, signature unused), 127.0.0.3 answered 503.
        // Attempt 2: re-signed, straight to 127.0.0.3 (127.0.0.2 was demoted), 200.
        #expect(received.map { $0.options.connectOverrides.first?.connectHost } == ["127.0.0.3", "127.0.0.3"])
        let nonces = received.compactMap { $0.headers[SigningHeaders().nonce] }
        #expect(nonces.count == 2 && Set(nonces).count == 2)
        // One line for the retry, one for the call's outcome.
        let lines = handler.entries.filter { $0.level == .info }.map { "\($0.message)" }
        #expect(lines.count == 2)
        #expect(lines.first?.contains("attempt 1 ✗ status 503") == true)
    }

    @Test func signingBeforeRetryWouldReplayTheNonce() async throws {
        var wrong = interceptors
        let signing = wrong.remove(at: try #require(wrong.firstIndex { $0.name == "signing" }))
        // Signing, then retry: one signature for every attempt.
        wrong.insert(signing, at: try #require(wrong.firstIndex { $0.name == "retry" }))
        let response = try await Pipeline(interceptors: wrong, dispatcher: network).send(try Request("https://api.runway.test/flaky"))
        #expect(response.status == 401)
    }

    @Test func theSignatureCoversTheGzipBytesSent() async throws {
        let body = Data(String(repeating: "district=xuhui&rent=2500&", count: 20).utf8)
        let response = try await pipeline.send(
            try Request(
                method: .post, "https://api.runway.test/search", headers: ["Content-Type": "application/x-www-form-urlencoded"], body: body)
        )
        #expect(response.status == 200)
        let sent = try #require(network.received.last)
        #expect(sent.headers["Content-Encoding"] == "gzip")
        #expect(try Gzip.decompress(try #require(sent.body), limit: 1 << 20) == body)
    }

    @Test func aValidationFailureIsLoggedNeverSignedNeverSent() async throws {
        await #expect {
            try await pipeline.send(try Request("https://api.runway.test/list?price=-1"))
        } throws: { ($0 as? RunwayError)?.code == .paramsInvalid && ($0 as? RunwayError)?.field == "price" }
        #expect(network.received.isEmpty)
        #expect(handler.entries.contains { $0.level == .warning && "\($0.message)".contains("paramsInvalid at interceptor validation") })
    }
}

/// A token refresh replays the call: the replay must be signed again (fresh nonce) and carry
/// the new token inside the signature, so the registry puts token refresh before signing.
@Suite struct TokenRefreshOrderTests {
    final class SecureAPI: APIManager {
        let engine: ManagerEngine
        let apiName = "secure"
        let serviceID: ServiceID = "accounts"
        init(registry: ServiceRegistry) { engine = ManagerEngine(registry: registry, delivery: .inline) }
    }

    struct Accounts: Service {
        let id: ServiceID = "accounts"
        let baseURLs = BaseURLs("https://api.runway.test")
        let authenticator: TokenAuthenticator?
    }

    @Test func theReplayAfterARefreshIsSignedAgain() async throws {
        let order = try DefaultOrderTests()
        let authenticator = TokenAuthenticator(token: "stale") { _ in "fresh" }
        var builder = ServiceRegistry.Builder(environment: .release, pipeline: order.pipeline)
        builder.register(Accounts(authenticator: authenticator))
        let registry = try builder.build()

        let result = try await SecureAPI(registry: registry).load()
        #expect(result == ["ok": true])
        #expect(authenticator.refreshCount == 1)
        let sent = order.network.received.filter { $0.url.path == "/secure" }
        #expect(sent.map { $0.headers["Authorization"] } == ["Bearer stale", "Bearer fresh"])
        let nonces = sent.compactMap { $0.headers[SigningHeaders().nonce] }
        #expect(nonces.count == 2 && Set(nonces).count == 2)
    }

    /// Placed by what it is: an interceptor of the app's own, under a name the standard order
    /// does not know, that declares itself per-attempt sees every attempt the refresh makes.
    @Test func tokenRefreshGoesBeforeTheFirstPerAttemptInterceptorWhateverItsName() async throws {
        struct Stamp: PerAttemptInterceptor {
            var name: String { "stamp-authorization" }
            func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
                var request = request
                request.headers["X-Stamped"] = request.headers["Authorization"] ?? "none"
                return try await next(request, context)
            }
        }
        let stub = StubDispatcher { request in
            request.headers["Authorization"] == "Bearer fresh"
                ? Response(status: 200, body: Data(#"{"ok":true}"#.utf8)) : Response(status: 401)
        }
        var builder = ServiceRegistry.Builder(environment: .release, pipeline: Pipeline(interceptors: [Stamp()], dispatcher: stub))
        let authenticator = TokenAuthenticator(token: "stale") { _ in "fresh" }
        builder.register(Accounts(authenticator: authenticator))
        let result = try await SecureAPI(registry: try builder.build()).load()
        #expect(result == ["ok": true])
        #expect(stub.requests.map { $0.headers["X-Stamped"] } == ["Bearer stale", "Bearer fresh"])
    }
}
