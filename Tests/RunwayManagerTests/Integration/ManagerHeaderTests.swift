import Foundation
import Hummingbird
import NIOCore
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

/// A manager's own header fields (`headers(params:)`) through CurlDispatcher and a real server.
@Suite struct ManagerHeaderTests {
    /// A POST whose fields come from the manager: an `Idempotency-Key` from the parameters and an
    /// `X-Client` that replaces the service's.
    final class OrderAPIManager: APIManager {
        let engine: ManagerEngine
        let apiName = "orders"
        let serviceID: ServiceID = .listings
        let loadPolicy = LoadPolicy.concurrent
        let method = HTTPMethod.post
        let sendsKey: Bool

        init(registry: ServiceRegistry, sendsKey: Bool) {
            engine = ManagerEngine(registry: registry, delivery: .inline)
            self.sendsKey = sendsKey
        }

        func headers(params: [String: JSON]) -> HTTPHeaders {
            var headers: HTTPHeaders = ["X-Client": "orders-screen"]
            if sendsKey, let key = params["order"]?.string { headers.add(name: "Idempotency-Key", value: key) }
            return headers
        }
    }

    /// `POST /v1/orders`: `{"code":1001}` (token expired, in a 200) unless the token is `fresh`,
    /// then `{"code":0}`. `seen` gets one line per request: `key client other authorization`.
    private func routes(_ seen: EventLog) -> TestServer.Routes {
        { router in
            router.post("/v1/orders") { request, _ -> Hummingbird.Response in
                let field = { (name: String) in request.headers.first { $0.name.canonicalName == name.lowercased() }?.value ?? "-" }
                let authorization = field("Authorization")
                seen.append("\(field("Idempotency-Key")) \(field("X-Client")) \(field("X-Other")) \(authorization)")
                let body = authorization == "Bearer fresh" ? #"{"code":0}"# : #"{"code":1001}"#
                return Hummingbird.Response(
                    status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
            }
        }
    }

    private func withRegistry(_ seen: EventLog, _ body: (ServiceRegistry, TokenAuthenticator) async throws -> Void) async throws {
        let server = try await TestServer.start(routes: routes(seen))
        let authenticator = TokenAuthenticator(token: "stale") { _ in "fresh" }
        var service = TestService(id: .listings, baseURL: server.url("/v1").absoluteString)
        service.authenticator = authenticator
        service.tokenExpiredCode = 1001
        service.commonHeaders = ["X-Client": "app", "X-Other": "kept"]
        do {
            try await body(try makeRegistry(CurlDispatcher(), services: [service]), authenticator)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    @Test("a manager's Idempotency-Key lets a POST told of an expired token go again, with the same key and fields")
    func idempotencyKeyReplaysAfterRefresh() async throws {
        let seen = EventLog()
        try await withRegistry(seen) { registry, authenticator in
            let manager = OrderAPIManager(registry: registry, sendsKey: true)
            let json = try await manager.load(params: ["order": "K1", "amount": 5])
            #expect(json == ["code": 0])
            #expect(authenticator.refreshCount == 1)
            // Sent twice, with the key and the manager's X-Client both times; the service's other field stays.
            #expect(seen.events == ["K1 orders-screen kept Bearer stale", "K1 orders-screen kept Bearer fresh"])
        }
    }

    @Test("without an Idempotency-Key, the same POST is sent once and fails with .needsLogin")
    func withoutKeyNotSentTwice() async throws {
        let seen = EventLog()
        try await withRegistry(seen) { registry, _ in
            let manager = OrderAPIManager(registry: registry, sendsKey: false)
            let result = await outcome { try await manager.load(params: ["order": "K2"]) }
            #expect(result.failure?.code == .needsLogin, "\(result)")
            #expect(seen.events == ["- orders-screen kept Bearer stale"])
        }
    }
}
