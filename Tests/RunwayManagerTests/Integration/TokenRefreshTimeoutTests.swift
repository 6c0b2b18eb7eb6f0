import Foundation
import Hummingbird
import NIOCore
import RunwayCurl
import RunwayTestServer
import Testing

@testable import Runway

/// How long a call of a service with a ``TokenAuthenticator`` waits for a refresh, against the
/// test server.
@Suite struct TokenRefreshTimeoutTests {
    /// `GET /v1/items` with a timeout of its own.
    final class ItemsAPIManager: APIManager {
        let engine: ManagerEngine
        let apiName = "items"
        let serviceID: ServiceID = .listings
        let loadPolicy: LoadPolicy = .concurrent
        let timeout: Duration
        var requestOptions: RequestOptions { RequestOptions(timeout: timeout) }

        init(registry: ServiceRegistry, timeout: Duration = .seconds(1)) {
            engine = ManagerEngine(registry: registry, delivery: .inline)
            self.timeout = timeout
        }
    }

    /// Runs `body` against a test server whose `/v1/items` answers `{"ok":true}` to
    /// `Bearer <accepted>` and `401` to any other token, for a service whose token is stale and
    /// whose refresh gives `fresh` once the gate opens (after two minutes at the latest).
    private func withExpiredToken(
        accepting accepted: String, _ body: (TestServer, Gate, TokenAuthenticator, ServiceRegistry) async throws -> Void
    ) async throws {
        let routes: TestServer.Routes = { router in
            router.get("/v1/items") { request, _ -> Hummingbird.Response in
                let ok = request.headers[.authorization] == "Bearer \(accepted)"
                return Hummingbird.Response(
                    status: ok ? .ok : .unauthorized, body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"ok":\#(ok)}"#)))
            }
        }
        try await withTestServer(routes: routes) { server in
            let gate = Gate()
            let safetyNet = gate.open(after: .seconds(120))
            defer { safetyNet.cancel() }
            let authenticator = staleAuthenticator(refreshedWhen: gate)
            var service = TestService(baseURL: server.url("/v1").absoluteString)
            service.authenticator = authenticator
            try await body(server, gate, authenticator, try makeRegistry(CurlDispatcher(), services: [service]))
        }
    }

    /// A refresh whose server never answers: the call that found the token expired, and one
    /// made while the refresh runs, end with `.timeout` at their own timeout (they waited for
    /// as long as the refresh took, here until the gate opens after two minutes).
    @Test func aCallWaitsForARefreshThatNeverEndsNoLongerThanItsTimeout() async throws {
        try await withExpiredToken(accepting: "fresh") { server, gate, authenticator, registry async throws in
            let expired = Task { await outcome { try await ItemsAPIManager(registry: registry).load() } }
            #expect(await eventually { authenticator.refreshCount == 1 })
            let later = Task { await outcome { try await ItemsAPIManager(registry: registry).load() } }
            let first = await expired.value.failure
            #expect(first?.code == .timeout && first?.neverSent == false, "\(String(describing: first))")
            let second = await later.value.failure
            #expect(second?.code == .timeout && second?.neverSent == true, "\(String(describing: second))")
            #expect(!gate.isOpened, "the calls waited for the refresh")
            #expect(server.stats.requests(path: "/v1/items") == 1)
            // The refresh ends: calls go with its token.
            gate.open()
            #expect(try await ItemsAPIManager(registry: registry).load() == ["ok": true])
            #expect(authenticator.refreshCount == 1)
        }
    }

    /// A refresh that never ends, and the app signs in again meanwhile (`setToken`): the call
    /// waiting for the refresh replays at once with the app's token, a call made afterwards
    /// does not wait for the refresh either, and the refresh's token, when it comes at last,
    /// does not replace the app's.
    @Test func aTokenTheAppSetsEndsTheWaitForARefreshThatNeverEnds() async throws {
        try await withExpiredToken(accepting: "signed-in-again") { server, gate, authenticator, registry async throws in
            let patient: @Sendable () -> ItemsAPIManager = { ItemsAPIManager(registry: registry, timeout: .seconds(60)) }
            let expired = Task { await outcome { try await patient().load() } }
            #expect(await eventually { authenticator.refreshCount == 1 })
            authenticator.setToken("signed-in-again")
            #expect(await expired.value.success == ["ok": true])
            #expect(try await patient().load() == ["ok": true])
            #expect(!gate.isOpened, "the calls waited for the refresh")
            #expect(server.stats.requests(path: "/v1/items") == 3)
            // The abandoned refresh ends: its token is dropped.
            gate.open()
            #expect(await eventually { authenticator.endedRefreshCount == 1 })
            #expect(authenticator.token == "signed-in-again")
            #expect(try await patient().load() == ["ok": true])
            #expect(authenticator.refreshCount == 1)
        }
    }

    /// A `401` that also renews the session cookie: the jar keeps the cookie, and the call
    /// replayed after the refresh carries it, not the cookie the server just replaced.
    @Test func aCookieSetByTheExpiredResponseGoesWithTheReplay() async throws {
        let routes: TestServer.Routes = { router in
            router.get("/v1/items") { request, _ -> Hummingbird.Response in
                let cookie = request.headers[values: .cookie].joined(separator: "; ")
                guard request.headers[.authorization] == "Bearer fresh" else {
                    return Hummingbird.Response(status: .unauthorized, headers: [.setCookie: "session=renewed; Path=/"])
                }
                return Hummingbird.Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"cookie":"\#(cookie)"}"#)))
            }
        }
        try await withTestServer(routes: routes) { server in
            let jar = CookieJar()
            jar.store(setCookie: ["session=old; Path=/"], from: server.url("/"))
            var service = TestService(baseURL: server.url("/v1").absoluteString)
            service.authenticator = TokenAuthenticator(token: "stale") { _ in "fresh" }
            let registry = try makeRegistry(CurlDispatcher(), services: [service], interceptors: [.cookies(jar)])
            #expect(try await ItemsAPIManager(registry: registry).load() == ["cookie": "session=renewed"])
            #expect(jar.cookieHeader(for: server.url("/")) == "session=renewed")
            #expect(server.stats.requests(path: "/v1/items") == 2)
        }
    }
}
