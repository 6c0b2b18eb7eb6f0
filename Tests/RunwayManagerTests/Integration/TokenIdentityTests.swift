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
}
