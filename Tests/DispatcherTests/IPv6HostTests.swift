import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

/// A host written as an IPv6 address, on the loopback's `::1`.
extension DispatcherSuite {
    @Test(
        "a host written as an IPv6 address is reached, or refused before any I/O by a dispatcher that cannot reach it",
        arguments: DispatcherUnderTest.all)
    func ipv6AddressHost(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let server = try await TestServer.start(host: "::1")
        let url = try #require(URL(string: "http://[::1]:\(server.port)/echo?via=v6"))
        if dut.capabilities.contains(.ipv6Literals) {
            let response = await outcomeOf { try await dut.send(dispatcher, makeRequest(url)) }
            #expect(response?.status == 200, "\(String(describing: response))")
            #expect(server.stats.totalRequests == 1)
        } else {
            let error = await runwayError { try await dut.send(dispatcher, makeRequest(url)) }
            #expect(error?.code == .configuration, "\(String(describing: error))")
            #expect(error?.message.contains("IPv6") == true, "\(String(describing: error))")
            #expect(server.stats.totalRequests == 0)
        }
        await server.shutdown()
    }

    /// The response, or `nil` (the failure recorded) so the server is always shut down.
    private func outcomeOf(_ body: () async throws -> Response) async -> Response? {
        do {
            return try await body()
        } catch {
            Issue.record(error)
            return nil
        }
    }
}
