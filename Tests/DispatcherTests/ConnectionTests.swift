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
        try await withTestServer(tls: pki.server, responseDelay: .milliseconds(300)) { server in
            let request = makeRequest(server.url("/json")) {
                $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
            }
            // One request first, so the connection and its ALPN result are known.
            _ = try await dut.send(dispatcher, request)
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<100 {
                    group.addTask { try await dut.send(dispatcher, request).status }
                }
                for try await status in group {
                    #expect(status == 200)
                }
            }
            // Sequentially this would take 30 s; multiplexed it takes about one delay.
            #expect(ContinuousClock.now - start < .seconds(10))
            #expect(server.stats.http2Requests == 101)
            #expect(server.stats.connectionsAccepted == 1)
        }
    }
}
