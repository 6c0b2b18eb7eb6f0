import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Runway
import RunwayCurl
import RunwayDNSBypass
import RunwayServerSentEvents
import RunwaySigning
import RunwaySync
import RunwayTestServer
import TestHelpers
import Testing

/// Event streams through the standard interceptors that must act on every connection: each
/// reconnection is signed afresh (the server verifies it, and refuses a replayed nonce) and
/// routed by the DNS bypass to a host name that resolves nowhere else.
@Suite struct EventStreamChainTests {
    static let host = "events.runway.test"

    @Test("every reconnection is signed afresh, verified by the server, and routed by the DNS bypass")
    func reconnectionsGoThroughSigningAndTheBypass() async throws {
        let verifier = try SignatureVerifier.hmacSHA256(secret: "event-secret")
        let verdicts = Locked<[String]>([])
        let nonces = Locked<[String]>([])
        let routes: TestServer.Routes = { router in
            router.get("/feed") { request, _ in
                let headers = request.headers
                let verdict: String
                do {
                    try verifier.verify(
                        method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
                        headers: { name in HTTPField.Name(name).flatMap { headers[$0] } }, body: nil)
                    verdict = "ok"
                } catch {
                    verdict = "\(error)"
                }
                let connection = verdicts.withLock { verdicts in
                    verdicts.append(verdict)
                    return verdicts.count
                }
                nonces.withLock { $0.append(headers[HTTPField.Name("X-Runway-Nonce")!] ?? "") }
                guard verdict == "ok" else { return Hummingbird.Response(status: .unauthorized) }
                switch connection {
                case 1, 2:
                    return EventStreamTests.eventStream { writer in
                        var writer = writer
                        try await writer.write(ByteBuffer(string: "retry: 10\nid: \(connection)\ndata: part \(connection)\n\n"))
                    }
                default:
                    return Hummingbird.Response(status: .noContent)
                }
            }
        }
        try await withTestServer(routes: routes) { server in
            let bypass = try DNSBypass(.init(hosts: [Self.host: ["127.0.0.1:\(server.port)"]], fallsBackToDNS: false))
            await bypass.start()
            let pipeline = Pipeline(
                interceptors: [try .signing(secret: "event-secret"), .dnsBypass(bypass)], dispatcher: CurlDispatcher())
            var received: [String] = []
            for try await event in pipeline.events(for: try Runway.Request("http://\(Self.host):\(server.port)/feed")) {
                received.append(event.data)
            }
            #expect(received == ["part 1", "part 2"])
            // Three connections, each verified: a nonce replayed by a reconnection would be refused.
            #expect(verdicts.withLock { $0 } == ["ok", "ok", "ok"])
            #expect(Set(nonces.withLock { $0 }).count == 3)
        }
    }
}
