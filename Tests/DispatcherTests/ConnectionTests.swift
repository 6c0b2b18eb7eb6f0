import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

/// Connection reuse and HTTP/2 multiplexing, counted by the server.
extension DispatcherSuite {
    @Test("1,000 sequential requests share one connection", arguments: DispatcherUnderTest.all)
    func connectionReuse(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let request = makeRequest(server.url("/json"))
            for _ in 0..<1000 {
                let response = try await dut.send(dispatcher, request)
                #expect(response.status == 200)
            }
            #expect(server.stats.requests(path: "/json") == 1000)
            #expect(server.stats.connectionsAccepted == 1)
        }
    }

    @Test(
        "100 concurrent requests are multiplexed on one HTTP/2 connection",
        arguments: DispatcherUnderTest.all(supporting: .http2, .customCA))
    func http2Multiplexing(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let dispatcher = dut.make()
        // `/together` answers only once all 100 requests have arrived: they are in flight at once
        // (counted, not timed), which one connection allows only multiplexed.
        let gate = Gate()
        let arrived = Counter()
        let routes: TestServer.Routes = { router in
            router.get("/together") { _, _ in
                if arrived.increment() == 100 { gate.open() }
                await gate.wait()
                return "together"
            }
        }
        try await withTestServer(tls: pki.server, routes: routes) { server in
            let warmUp = makeRequest(server.url("/json")) { $0.tls.certificateAuthorities = .file(pki.caCertificatePath) }
            let request = makeRequest(server.url("/together")) { $0.tls.certificateAuthorities = .file(pki.caCertificatePath) }
            // One request first, so the connection and its ALPN result are known.
            _ = try await dut.send(dispatcher, warmUp)
            let safetyNet = gate.open(after: .seconds(120))
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<100 {
                    group.addTask { try await dut.send(dispatcher, request).status }
                }
                for try await status in group {
                    #expect(status == 200)
                }
            }
            safetyNet.cancel()
            #expect(await safetyNet.value == false, "only \(arrived.value) of the 100 requests were in flight at once")
            #expect(server.stats.http2Requests == 101)
            #expect(server.stats.connectionsAccepted == 1)
        }
    }
}
