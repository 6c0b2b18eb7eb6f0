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

    /// libcurl stopped an address at a NUL, took an out-of-range port as a transport failure
    /// that might have been sent, and let a host that cannot match send the request to the URL's
    /// host as if there were no override.
    @Test(
        "a connect override no connection can follow is .invalidRequest before any I/O",
        arguments: DispatcherUnderTest.all(supporting: .connectOverrides))
    func connectOverrideThatCannotBeFollowed(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let port = server.port
            for override in [
                ConnectOverride(host: "127.0.0.1", port: port, connectHost: "127.0.0.1", connectPort: 1_000_000),
                ConnectOverride(host: "127.0.0.1", port: port, connectHost: "127.0.0.1", connectPort: -3),
                ConnectOverride(host: "127.0.0.1", port: 65_536, connectHost: "127.0.0.1", connectPort: port),
                ConnectOverride(host: "127.0.0.1", connectHost: "127.0.0.1\u{0}.evil", connectPort: port),
                ConnectOverride(host: "127.0.0.1", connectHost: "127.0.0.1\r\n", connectPort: port),
                ConnectOverride(host: "127.0.0.1", connectHost: "a b", connectPort: port),
                ConnectOverride(host: "127.0.0.1", connectHost: "127.0.0.1:\(port)"),
                ConnectOverride(host: "127.0.0.1", connectHost: "[127.0.0.1]", connectPort: port),
                ConnectOverride(host: "127.0.0.1", connectHost: "[::1", connectPort: port),
                ConnectOverride(host: "127.0.0.1", connectHost: "evil.example/x", connectPort: port),
                ConnectOverride(host: "127.0.0.1:\(port)", connectHost: "127.0.0.1", connectPort: port),
                ConnectOverride(host: "user@127.0.0.1", connectHost: "127.0.0.1", connectPort: port),
            ] {
                let request = makeRequest(server.url("/json")) { $0.connectOverrides = [override] }
                #expect(throws: RunwayError.self, "\(override)") { try request.validate() }
                let error = await runwayError { try await dut.send(dispatcher, request) }
                #expect(error?.code == .invalidRequest, "\(override): \(String(describing: error))")
                #expect(error?.neverSent == true, "\(override)")
                #expect(error?.message.contains("connect override") == true, "\(override): \(String(describing: error))")
            }
            #expect(server.stats.totalRequests == 0)
            // What libcurl reads: names, IPv6 addresses with or without brackets, a zone, no
            // address (the URL's host), the edge ports.
            for override in [
                ConnectOverride(host: "api.test", port: 0, connectHost: "10.0.0.1", connectPort: 65_535),
                ConnectOverride(host: "::1", connectHost: "[fe80::1%eth0]"),
                ConnectOverride(host: "[::1]", connectHost: "fe80::1"),
                ConnectOverride(host: "bücher.example", connectHost: "", connectPort: 8080),
            ] {
                let request = makeRequest(server.url("/json")) { $0.connectOverrides = [override] }
                #expect(throws: Never.self, "\(override)") { try request.validate() }
            }
        }
    }

    @Test(
        "a connect override for an IPv6 URL host reaches its address",
        arguments: DispatcherUnderTest.all(supporting: .connectOverrides))
    func connectOverrideForIPv6Host(_ dut: DispatcherUnderTest) async throws {
        try await withTestServer { server in
            // Nothing listens on [::1] at the URL's port: only the override reaches the server.
            let unused = try #require(URL(string: "http://[::1]:9/echo"))
            for host in ["::1", "[::1]"] {
                let request = makeRequest(unused) {
                    $0.connectOverrides = [ConnectOverride(host: host, port: 9, connectHost: "127.0.0.1", connectPort: server.port)]
                }
                let echo = try decodeEcho(try await dut.send(dut.make(), request))
                #expect(echo.authority == "[::1]:9", "\(host)")
            }
            #expect(server.stats.requests(path: "/echo") == 2)
        }
    }
}
