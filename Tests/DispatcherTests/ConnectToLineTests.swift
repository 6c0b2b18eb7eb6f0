import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

@testable import RunwayCurl

/// The `CURLOPT_CONNECT_TO` line the curl dispatcher writes for a connect override.
extension DispatcherSuite {
    @Test(
        "a connect override's line is HOST:PORT:ADDRESS:PORT, an IPv6 host or address bracketed, a port left out empty",
        arguments: [
            ConnectOverride(host: "api.runway.test", port: 8443, connectHost: "127.0.0.2", connectPort: 9000),
            ConnectOverride(host: "api.runway.test", connectHost: "127.0.0.2"),
            ConnectOverride(host: "API.Runway.Test.", port: 0, connectHost: "::1", connectPort: 65535),
            ConnectOverride(host: "api.test", connectHost: "[::1]", connectPort: 443),
            ConnectOverride(host: "api.test", port: 80, connectHost: "fe80::1:2:3", connectPort: 7),
            ConnectOverride(host: "::1", port: 8080, connectHost: "127.0.0.1", connectPort: 9000),
            ConnectOverride(host: "[::1]", connectHost: "::1"),
            ConnectOverride(host: "x", port: Int.max, connectHost: "10.0.0.1", connectPort: Int.min),
            ConnectOverride(host: "x", port: -5, connectHost: "a", connectPort: 1_000_000),
            ConnectOverride(host: "", connectHost: ""),
            ConnectOverride(
                host: "a.long.name.of.many.labels.example.com", port: 12_345, connectHost: "192.168.100.200", connectPort: 54_321),
        ])
    func connectToLine(_ override: ConnectOverride) {
        // The line as plain string operations make it.
        func bracketed(_ name: String) -> String { name.contains(":") && !name.hasPrefix("[") ? "[" + name + "]" : name }
        let expected = [
            bracketed(override.host), override.port.map(String.init) ?? "", bracketed(override.connectHost),
            override.connectPort.map(String.init) ?? "",
        ]
        .joined(separator: ":")
        #expect(CurlTransfer.withConnectToLine(override) { String(cString: $0) } == expected)
    }

    @Test("a connect override reaches an IPv6 address, in brackets on libcurl's line")
    func connectOverrideToIPv6() async throws {
        try await withTestServer(host: "::1") { server in
            let url = try #require(URL(string: "http://api.runway.test:\(server.port)/echo"))
            let request = makeRequest(url) {
                $0.connectOverrides = [ConnectOverride(host: "api.runway.test", connectHost: "::1", connectPort: server.port)]
            }
            let echo = try decodeEcho(try await Pipeline(interceptors: [], dispatcher: CurlDispatcher()).send(request))
            #expect(echo.authority == "api.runway.test:\(server.port)")
            #expect(server.stats.requests(path: "/echo") == 1)
        }
    }
}
