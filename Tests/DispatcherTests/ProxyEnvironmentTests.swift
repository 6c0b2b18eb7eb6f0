import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import TestHelpers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Proxy variables in the environment (`http_proxy`, `no_proxy`, ...): followed only when a
/// request asks for ``Proxy/environment``, and refused by a dispatcher that cannot use a proxy
/// (URLSession, whose libcurl would follow them on its own).
///
/// These tests set the variables in the process's environment, which every test shares:
/// URLSession refuses any request while one is set, `curl` and other child processes inherit
/// them, and `setenv` races every thread reading the environment. So the suite runs in a process
/// of its own (``ProxyEnvironmentProcessTests`` starts it there), one test at a time.
@Suite("Proxies: the environment", .serialized, .enabled(if: OwnProcess.isRunning("ProxyEnvironmentTests")))
struct ProxyEnvironmentTests {
    @Test("proxy variables in the environment are ignored unless the app opts in", arguments: DispatcherUnderTest.all(supporting: .proxies))
    func environmentOnlyWhenAsked(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withProxy(try await .tinyproxy()) { proxy in
            try await withTestServer { server in
                let proxyURL = "http://127.0.0.1:\(proxy.port)"
                try await withEnvironment(["http_proxy": proxyURL, "HTTP_PROXY": proxyURL, "ALL_PROXY": proxyURL]) {
                    for setting in [nil, Proxy.direct] {
                        let direct = makeRequest(server.url("/echo")) { $0.proxy = setting }
                        let echo = try decodeEcho(try await dut.send(dispatcher, direct))
                        #expect(echo.headers["via"] == nil, "\(String(describing: setting)) went through the proxy")
                    }
                    #expect(server.stats.requests(path: "/echo") == 2)

                    let opted = makeRequest(server.url("/echo")) { $0.proxy = .environment }
                    let echo = try decodeEcho(try await dut.send(dispatcher, opted))
                    #expect(echo.headers["via"]?.contains("tinyproxy") == true)
                    #expect(await proxy.logEventually(contains: "GET http://127.0.0.1:\(server.port)/echo"))
                    #expect(proxy.log.components(separatedBy: "GET http://").count == 2, "\(proxy.log)")
                }
                // no_proxy names the host: straight to it. An explicit proxy ignores no_proxy.
                try await withEnvironment(["http_proxy": proxyURL, "no_proxy": "localhost, 127.0.0.1"]) {
                    let excluded = makeRequest(server.url("/echo")) { $0.proxy = .environment }
                    let direct = try decodeEcho(try await dut.send(dispatcher, excluded))
                    #expect(direct.headers["via"] == nil)
                    let explicit = makeRequest(server.url("/echo")) { $0.proxy = ProxyTests.tinyproxy(proxy, credentials: nil) }
                    let proxied = try decodeEcho(try await dut.send(dispatcher, explicit))
                    #expect(proxied.headers["via"] != nil)
                }
                // A block of addresses names every address in it.
                try await withEnvironment(["http_proxy": proxyURL, "no_proxy": "10.0.0.0/8,127.0.0.0/8"]) {
                    let excluded = makeRequest(server.url("/echo")) { $0.proxy = .environment }
                    let direct = try decodeEcho(try await dut.send(dispatcher, excluded))
                    #expect(direct.headers["via"] == nil)
                }
                try await withEnvironment(["http_proxy": "socks4://bob:hunter2@127.0.0.1:1"]) {
                    let bad = makeRequest(server.url("/echo")) { $0.proxy = .environment }
                    let error = await runwayError { try await dut.send(dispatcher, bad) }
                    #expect(error?.code == .configuration)
                    #expect(error?.message.contains("environment variable http_proxy") == true, "\(String(describing: error))")
                    #expect(error?.message.contains("hunter2") == false)
                }
                #expect(server.stats.requests(path: "/echo") == 6)
            }
        }
    }

    @Test("a dispatcher that cannot use a proxy refuses the request", arguments: DispatcherUnderTest.all(lacking: .proxies))
    func refusedWhereUnsupported(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withProxy(try await .tinyproxy()) { proxy in
            try await withTestServer { server in
                let explicit = makeRequest(server.url("/echo")) { $0.proxy = ProxyTests.tinyproxy(proxy, credentials: nil) }
                let error = await runwayError { try await dut.send(dispatcher, explicit) }
                #expect(error?.code == .configuration)
                #expect(error?.field == "proxy")
                try await withEnvironment(["http_proxy": "http://127.0.0.1:\(proxy.port)"]) {
                    let fromEnvironment = makeRequest(server.url("/echo")) { $0.proxy = .environment }
                    #expect(await runwayError { try await dut.send(dispatcher, fromEnvironment) }?.code == .configuration)
                }
                #expect(server.stats.totalRequests == 0)
                // No proxy set, but the environment names one that FoundationNetworking would follow.
                for name in ["http_proxy", "HTTP_PROXY", "ALL_PROXY"] {
                    try await withEnvironment([name: "http://127.0.0.1:\(proxy.port)"]) {
                        for setting in [nil, Proxy.direct] {
                            let plain = makeRequest(server.url("/echo")) { $0.proxy = setting }
                            let error = await runwayError { try await dut.send(dispatcher, plain) }
                            #expect(error?.code == .configuration, "\(name)")
                            #expect(error?.message.contains("environment variable \(name)") == true, "\(String(describing: error))")
                        }
                    }
                }
                #expect(server.stats.totalRequests == 0)
                // The environment naming no proxy for the host: sent, directly.
                try await withEnvironment(["http_proxy": "http://127.0.0.1:\(proxy.port)", "no_proxy": "127.0.0.1"]) {
                    let none = makeRequest(server.url("/echo")) { $0.proxy = .environment }
                    let direct = try await dut.send(dispatcher, none)
                    #expect(direct.status == 200)
                }
                #expect(proxy.log.contains("GET http://") == false)
            }
        }
    }
}

/// Runs ``ProxyEnvironmentTests`` in a process of its own, where no other test reads the
/// environment they change.
@Suite("Proxies: the environment, in a process of its own")
struct ProxyEnvironmentProcessTests {
    @Test("proxy variables in the environment, tested in a process where nothing else runs")
    func inItsOwnProcess() async throws {
        try await OwnProcess.run("ProxyEnvironmentTests")
    }
}

/// Sets `variables` in this process's environment for `body`, then puts back what was there.
private func withEnvironment(_ variables: [String: String], _ body: () async throws -> Void) async throws {
    var previous: [String: String?] = [:]
    for (name, value) in variables {
        previous[name] = ProcessInfo.processInfo.environment[name]
        setenv(name, value, 1)
    }
    defer {
        for (name, value) in previous {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }
    try await body()
}
