import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

/// Connecting to another address than the URL's host (DNS bypass).
extension DispatcherSuite {
    @Test(
        "a connect override reaches another address and keeps the host name",
        arguments: DispatcherUnderTest.all(supporting: .connectOverrides))
    func connectOverride(_ dut: DispatcherUnderTest) async throws {
        try await withTestServer(host: "127.0.0.2") { server in
            let url = try #require(URL(string: "http://api.runway.test:\(server.port)/echo"))
            let request = makeRequest(url) {
                $0.connectOverrides = [ConnectOverride(host: "api.runway.test", port: server.port, connectHost: "127.0.0.2")]
            }
            let echo = try decodeEcho(try await dut.send(dut.make(), request))
            #expect(echo.authority == "api.runway.test:\(server.port)")
            #expect(server.stats.requests(path: "/echo") == 1)
        }
    }

    @Test("connect overrides a dispatcher cannot honour are refused", arguments: DispatcherUnderTest.all(lacking: .connectOverrides))
    func unsupportedConnectOverride(_ dut: DispatcherUnderTest) async throws {
        try await withTestServer(host: "127.0.0.2") { server in
            let url = try #require(URL(string: "http://api.runway.test:\(server.port)/echo"))
            let request = makeRequest(url) {
                $0.connectOverrides = [ConnectOverride(host: "api.runway.test", connectHost: "127.0.0.2")]
            }
            #expect(await runwayError { try await dut.send(dut.make(), request) }?.code == .configuration)
            #expect(server.stats.totalRequests == 0)
        }
    }
}
