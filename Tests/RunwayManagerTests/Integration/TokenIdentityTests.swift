import Foundation
import Hummingbird
import NIOCore
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

/// Whose token a call of a service with a ``TokenAuthenticator`` carries, against the test server.
@Suite struct TokenIdentityTests {
    /// Another user signs in while a call of the first waits for a refresh: the call is not
    /// sent with the new user's token (it was, and returned that user's data), against the
    /// test server.
    @Test func aCallIsNeverSentWithTheTokenOfAnotherIdentity() async throws {
        let routes: TestServer.Routes = { router in
            router.get("/v1/mine") { request, _ -> Hummingbird.Response in
                let auth = request.headers[.authorization] ?? "none"
                let body = ResponseBody(byteBuffer: ByteBuffer(string: #"{"auth":"\#(auth)"}"#))
                if auth == "Bearer alice-stale" { return Hummingbird.Response(status: .unauthorized, body: body) }
                return Hummingbird.Response(status: .ok, body: body)
            }
        }
        try await withTestServer(routes: routes) { server in
            let gate = Gate()
            let safetyNet = gate.open(after: .seconds(120))
            defer { safetyNet.cancel() }
            let authenticator = TokenAuthenticator(token: "alice-stale", identity: "alice") { _ in
                await gate.wait()
                return "alice-refreshed"
            }
            var service = TestService(baseURL: server.url("/v1").absoluteString)
            service.authenticator = authenticator
            let manager = ItemListAPIManager(registry: try makeRegistry(CurlDispatcher(), services: [service]), apiName: "mine")
            let alices = Task { await outcome { try await manager.load() } }
            #expect(await eventually { authenticator.refreshCount == 1 })
            authenticator.setToken("bob-token", identity: "bob")
            gate.open()
            #expect(await alices.value.failure?.code == .needsLogin)
            #expect(server.stats.requests(path: "/v1/mine") == 1)
            // The same identity with a new token (a login again): the call goes.
            authenticator.setToken("alice-fresh", identity: "alice")
            #expect(try await manager.load() == ["auth": "Bearer alice-fresh"])
        }
    }

    /// `/v1/order` and `/v1/order-401` (GET, POST): with the stale token, a 200 whose body says
    /// "token expired" (code 4011), or a 401; else `{"ok":true}`.
    static let orderRoutes: TestServer.Routes = { router in
        for (path, status) in [("/v1/order", HTTPResponse.Status.ok), ("/v1/order-401", .unauthorized)] {
            for method in [HTTPRequest.Method.get, .post] {
                router.on(RouterPath(path), method: method) { request, _ -> Hummingbird.Response in
                    guard request.headers[.authorization] == "Bearer stale" else {
                        return Hummingbird.Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"ok":true}"#)))
                    }
                    return Hummingbird.Response(status: status, body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"code":4011}"#)))
                }
            }
        }
    }

    /// A token expiry read from a 200's body does not replay a POST (the server may have acted
    /// on it); a 401, an idempotent method or an `Idempotency-Key` does.
    @Test func aPostIsReplayedAfterARefreshOnlyWhenTheServerDidNotActOnIt() async throws {
        try await withTestServer(routes: Self.orderRoutes) { server in
            func call(_ method: HTTPMethod, _ api: String, headers: HTTPHeaders = [:]) async throws -> (Result<JSON, RunwayError>, Int) {
                let before = server.stats.requests(path: "/v1/" + api)
                let authenticator = TokenAuthenticator(token: "stale") { _ in "fresh" }
                var service = TestService(baseURL: server.url("/v1").absoluteString)
                service.authenticator = authenticator
                service.tokenExpiredCode = 4011
                service.commonHeaders = headers
                let registry = try makeRegistry(CurlDispatcher(), services: [service])
                let manager = ItemListAPIManager(registry: registry, apiName: api, method: method)
                let result = await outcome { try await manager.load() }
                #expect(authenticator.refreshCount == 1)
                return (result, server.stats.requests(path: "/v1/" + api) - before)
            }
            // Told by a business code in a 200: the POST is not sent again, the token is refreshed.
            let (bodyExpiry, bodyRequests) = try await call(.post, "order")
            #expect(bodyExpiry.failure?.code == .needsLogin)
            #expect(bodyExpiry.failure?.message.contains("not sent again") == true)
            #expect(bodyRequests == 1)
            // A 401: the server did not act on it; replayed.
            let (refused, refusedRequests) = try await call(.post, "order-401")
            #expect(refused.success == ["ok": true])
            #expect(refusedRequests == 2)
            // An idempotent method, or a POST with an Idempotency-Key: replayed.
            let (get, getRequests) = try await call(.get, "order")
            #expect(get.success == ["ok": true])
            #expect(getRequests == 2)
            let (keyed, keyedRequests) = try await call(.post, "order", headers: ["Idempotency-Key": "order-1"])
            #expect(keyed.success == ["ok": true])
            #expect(keyedRequests == 2)
        }
    }
}
