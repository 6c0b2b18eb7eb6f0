import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

#if canImport(Glibc)
import Glibc
import TestHelpers
#endif

/// Proxies against real ones on 127.0.0.1: `tinyproxy` (HTTP, `CONNECT`, Basic authentication),
/// `danted` (SOCKS5) and a small SOCKS5 server with username authentication
/// (``ProxyProcess/socks5WithAuth(user:password:)``). The tests that set proxy variables in the
/// environment are ``ProxyEnvironmentTests``, in a process of their own.
@Suite("Proxies")
struct ProxyTests {
    static let user = "alice"
    static let password = "pr0xy-s3cret"

    static var credentials: Proxy.Credentials { Proxy.Credentials(user: user, password: password) }

    static func tinyproxy(_ proxy: ProxyProcess, credentials: Proxy.Credentials? = ProxyTests.credentials) -> Proxy {
        .http(host: "127.0.0.1", port: proxy.port, credentials: credentials)
    }

    // MARK: HTTP proxy

    @Test("an HTTP proxy forwards plain http requests, with credentials", arguments: DispatcherUnderTest.all(supporting: .proxies))
    func httpForwarding(_ dut: DispatcherUnderTest) async throws {
        try await withProxy(try await .tinyproxy(credentials: (Self.user, Self.password))) { proxy in
            try await withTestServer { server in
                let request = makeRequest(server.url("/echo")) { $0.proxy = Self.tinyproxy(proxy) }
                let response = try await dut.send(dut.make(), request)
                let echo = try decodeEcho(response)
                #expect(echo.headers["via"]?.contains("tinyproxy") == true, "\(echo.headers)")
                #expect(server.stats.requests(path: "/echo") == 1)
                #expect(await proxy.logEventually(contains: "GET http://127.0.0.1:\(server.port)/echo"), "\(proxy.log)")
            }
        }
    }

    /// The connect phase through a tunnel is the CONNECT exchange and the origin's TLS handshake:
    /// a parallel run on two busy cores once took over the default 10 s for it.
    static let tunnelConnectTimeout: Duration = .seconds(60)

    @Test(
        "https goes through CONNECT and still verifies and pins the origin",
        arguments: DispatcherUnderTest.all(supporting: .proxies, .customCA, .pinning))
    func httpsThroughConnect(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let dispatcher = dut.make()
        try await withProxy(try await .tinyproxy(credentials: (Self.user, Self.password))) { proxy in
            try await withTestServer(tls: pki.server) { server in
                let trusted = makeRequest(server.url("/echo")) {
                    $0.proxy = Self.tinyproxy(proxy)
                    $0.connectTimeout = Self.tunnelConnectTimeout
                    $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                    $0.tls.pinnedPublicKeys = [pki.serverKeyPin]
                }
                let response = try await dut.send(dispatcher, trusted)
                #expect(response.status == 200)
                // A tunnel: the proxy saw a CONNECT and could not add a header inside TLS.
                #expect(try decodeEcho(response).headers["via"] == nil)
                #expect(await proxy.logEventually(contains: "CONNECT 127.0.0.1:\(server.port)"), "\(proxy.log)")
                #expect(server.stats.requests(path: "/echo") == 1)

                let wrongPin = makeRequest(server.url("/echo")) {
                    $0.proxy = Self.tinyproxy(proxy)
                    $0.connectTimeout = Self.tunnelConnectTimeout
                    $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                    $0.tls.pinnedPublicKeys = [pki.otherKeyPin]
                }
                let pinError = await runwayError { try await dut.send(dispatcher, wrongPin) }
                #expect(pinError?.code == .tls, "\(String(describing: pinError))")
                let untrusted = makeRequest(server.url("/echo")) {
                    $0.proxy = Self.tinyproxy(proxy)
                    $0.connectTimeout = Self.tunnelConnectTimeout
                }
                let trustError = await runwayError { try await dut.send(dispatcher, untrusted) }
                #expect(trustError?.code == .tls, "\(String(describing: trustError))")
                #expect(server.stats.requests(path: "/echo") == 1)
            }
        }
    }

    @Test("an HTTPS proxy: TLS to the proxy, verified; http forwarded and https tunnelled inside it, with credentials")
    func httpsProxy() async throws {
        let pki = try await TestPKI.load()
        let dispatcher = CurlDispatcher()
        try await withProxy(try await .tinyproxy(credentials: (Self.user, Self.password))) { tinyproxy in
            try await withProxy(try await .tlsFront(to: tinyproxy.port, identity: pki.server)) { front in
                let proxy = Proxy.https(
                    host: "127.0.0.1", port: front.port, credentials: Self.credentials,
                    certificateAuthorities: .file(pki.caCertificatePath))
                try await withTestServer { server in
                    let request = makeRequest(server.url("/echo")) { $0.proxy = proxy }
                    let echo = try decodeEcho(try await dispatcher.dispatch(request, context: RequestContext()))
                    #expect(echo.headers["via"]?.contains("tinyproxy") == true, "\(echo.headers)")
                    #expect(await front.logEventually(contains: "tls ok"), "\(front.log)")
                    #expect(await tinyproxy.logEventually(contains: "GET http://127.0.0.1:\(server.port)/echo"), "\(tinyproxy.log)")
                }
                try await withTestServer(tls: pki.server) { server in
                    let request = makeRequest(server.url("/echo")) {
                        $0.proxy = proxy
                        $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                        $0.tls.pinnedPublicKeys = [pki.serverKeyPin]
                    }
                    let response = try await dispatcher.dispatch(request, context: RequestContext())
                    #expect(response.status == 200)
                    #expect(try decodeEcho(response).headers["via"] == nil)
                    #expect(await tinyproxy.logEventually(contains: "CONNECT 127.0.0.1:\(server.port)"), "\(tinyproxy.log)")

                    // The origin is still verified by the request's own options, inside the tunnel.
                    let untrustedOrigin = makeRequest(server.url("/echo")) { $0.proxy = proxy }
                    let originError = await runwayError { try await dispatcher.dispatch(untrustedOrigin, context: RequestContext()) }
                    let originFailure = try #require(originError)
                    #expect(originFailure.code == .tls, "\(originFailure)")
                    #expect(originFailure.field == nil)
                }
                // A proxy whose certificate the system's authorities do not know is refused, named.
                let untrusted = Proxy.https(host: "127.0.0.1", port: front.port, credentials: Self.credentials)
                try await withTestServer { server in
                    let request = makeRequest(server.url("/echo")) { $0.proxy = untrusted }
                    let error = await runwayError { try await dispatcher.dispatch(request, context: RequestContext()) }
                    let failure = try #require(error)
                    let log = front.log
                    #expect(failure.code == .tls, "\(failure) \(log)")
                    #expect(failure.field == "proxy")
                    #expect(failure.message.contains("HTTPS proxy 127.0.0.1:\(front.port)"))
                    #expect(!failure.message.contains(Self.password))
                    #expect(server.stats.requests(path: "/echo") == 0)
                }
                let parsed = try Proxy(url: "https://alice:secret@127.0.0.1:\(front.port)")
                #expect(parsed.description == "https://<redacted>@127.0.0.1:\(front.port)")
                #expect(try Proxy(url: "https://proxy.example").description == "https://proxy.example:443")
            }
        }
    }

    @Test("streamed bodies go through a proxy both ways: a response read as it arrives, an upload of unknown length")
    func streamingThroughAProxy() async throws {
        let dispatcher = CurlDispatcher()
        try await withProxy(try await .tinyproxy(credentials: (Self.user, Self.password))) { proxy in
            try await withTestServer { server in
                var download = makeRequest(server.url("/bytes/3000000")) { $0.proxy = Self.tinyproxy(proxy) }
                download.streamsResponseBody = true
                let response = try await dispatcher.dispatch(download, context: RequestContext())
                var received = Data()
                for try await chunk in try #require(response.bodyStream) { received.append(chunk) }
                #expect(received == DeterministicBytes.data(count: 3_000_000))

                var upload = makeRequest(.post, server.url("/upload")) { $0.proxy = Self.tinyproxy(proxy) }
                upload.bodyStream = .sequence {
                    AsyncStream<Data> { continuation in
                        for _ in 0..<100 { continuation.yield(Data(repeating: 42, count: 10_000)) }
                        continuation.finish()
                    }
                }
                let uploaded = try await dispatcher.dispatch(upload, context: RequestContext())
                #expect(String(decoding: uploaded.body, as: UTF8.self) == #"{"received":1000000}"#)
                #expect(await proxy.logEventually(contains: "POST http://127.0.0.1:\(server.port)/upload"), "\(proxy.log)")
            }
        }
    }

    @Test(
        "an HTTP proxy's refusal of the credentials is .cannotConnect naming the proxy",
        arguments: DispatcherUnderTest.all(supporting: .proxies))
    func httpProxyRefusesCredentials(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let dispatcher = dut.make()
        try await withProxy(try await .tinyproxy(credentials: (Self.user, Self.password))) { proxy in
            let name = "HTTP proxy 127.0.0.1:\(proxy.port)"
            try await withTestServer { server in
                // Forwarded, no credentials: the proxy's 407 is the answer, kept in the error.
                let none = makeRequest(server.url("/echo")) { $0.proxy = Self.tinyproxy(proxy, credentials: nil) }
                let missing = await runwayError { try await dut.send(dispatcher, none) }
                #expect(missing?.code == .cannotConnect)
                #expect(missing?.field == "proxy")
                #expect(missing?.response?.status == 407)
                #expect(missing?.message.contains("\(name) asks for credentials") == true, "\(String(describing: missing))")
                #expect(server.stats.totalRequests == 0)
            }
            try await withTestServer(tls: pki.server) { server in
                // Tunnelled, wrong password: tinyproxy answers the CONNECT with 401.
                let wrong = makeRequest(server.url("/echo")) {
                    $0.proxy = Self.tinyproxy(proxy, credentials: .init(user: Self.user, password: "wrong-horse"))
                    $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                }
                let refused = await runwayError { try await dut.send(dispatcher, wrong) }
                #expect(refused?.code == .cannotConnect)
                #expect(refused?.field == "proxy")
                #expect(refused?.message.contains("\(name) refused the credentials") == true, "\(String(describing: refused))")
                #expect(refused?.message.contains("wrong-horse") == false)
                // Tunnelled, no credentials: 407 to the CONNECT.
                let none = makeRequest(server.url("/echo")) {
                    $0.proxy = Self.tinyproxy(proxy, credentials: nil)
                    $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                }
                let missing = await runwayError { try await dut.send(dispatcher, none) }
                #expect(missing?.code == .cannotConnect)
                #expect(
                    missing?.message.contains("\(name) asks for credentials and none are set (HTTP 407)") == true,
                    "\(String(describing: missing))")
                #expect(server.stats.totalRequests == 0)
            }
        }
    }

    @Test("a proxy nobody listens on is .cannotConnect naming the proxy", arguments: DispatcherUnderTest.all(supporting: .proxies))
    func unreachableProxy(_ dut: DispatcherUnderTest) async throws {
        try await withRefusingPort { port in
            try await withTestServer { server in
                let proxies: [(Proxy, String)] = [
                    (.http(host: "127.0.0.1", port: port, credentials: Self.credentials), "HTTP proxy 127.0.0.1:\(port)"),
                    (.socks5(host: "127.0.0.1", port: port, credentials: Self.credentials), "SOCKS5 proxy 127.0.0.1:\(port)"),
                ]
                for (proxy, name) in proxies {
                    let request = makeRequest(server.url("/echo")) { $0.proxy = proxy }
                    let error = await runwayError { try await dut.send(dut.make(), request) }
                    #expect(error?.code == .cannotConnect)
                    #expect(error?.field == "proxy")
                    #expect(error?.neverSent == true)
                    #expect(error?.message.contains("cannot connect to the \(name)") == true, "\(String(describing: error))")
                    #expect(error?.message.contains(Self.password) == false)
                }
                #expect(server.stats.totalRequests == 0)
            }
        }
    }

    // MARK: SOCKS5

    @Test(
        "SOCKS5 through Dante, names resolved by the proxy, http and https",
        arguments: DispatcherUnderTest.all(supporting: .proxies, .customCA))
    func socks5ThroughDante(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let dispatcher = dut.make()
        try await withProxy(try await .dante()) { proxy in
            for tls in [false, true] {
                try await withTestServer(tls: tls ? pki.server : nil) { server in
                    let request = makeRequest(server.url("/echo", hostName: "localhost")) {
                        $0.proxy = .socks5(host: "127.0.0.1", port: proxy.port)
                        $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                    }
                    let response = try await dut.send(dispatcher, request)
                    #expect(response.status == 200)
                    #expect(server.stats.requests(path: "/echo") == 1)
                    // Dante logs each connection it makes for a client, with the origin's port.
                    #expect(await proxy.logEventually(contains: ".\(server.port)"), "\(proxy.log)")
                }
            }
            try await withRefusingPort { port in
                let request = makeRequest(URL(string: "http://127.0.0.1:\(port)/echo")!) {
                    $0.proxy = .socks5(host: "127.0.0.1", port: proxy.port)
                }
                let error = await runwayError { try await dut.send(dispatcher, request) }
                #expect(error?.code == .cannotConnect)
                #expect(
                    error?.message.contains("SOCKS5 proxy 127.0.0.1:\(proxy.port) could not connect to the origin") == true,
                    "\(String(describing: error))")
            }
        }
    }

    @Test("SOCKS5 with username and password, and names resolved here or there", arguments: DispatcherUnderTest.all(supporting: .proxies))
    func socks5WithCredentials(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withProxy(try await .socks5WithAuth(user: Self.user, password: Self.password)) { proxy in
            try await withTestServer { server in
                let url = server.url("/echo", hostName: "localhost")
                let remote = makeRequest(url) { $0.proxy = .socks5(host: "127.0.0.1", port: proxy.port, credentials: Self.credentials) }
                let viaRemote = try await dut.send(dispatcher, remote)
                #expect(viaRemote.status == 200)
                #expect(await proxy.logEventually(contains: "auth ok \(Self.user)"))
                #expect(await proxy.logEventually(contains: "connect domain localhost \(server.port)"), "\(proxy.log)")

                let local = makeRequest(url) {
                    $0.proxy = .socks5(host: "127.0.0.1", port: proxy.port, credentials: Self.credentials, resolvesNamesRemotely: false)
                }
                let viaLocal = try await dut.send(dispatcher, local)
                #expect(viaLocal.status == 200)
                #expect(await proxy.logEventually(contains: "connect ipv4 127.0.0.1 \(server.port)"), "\(proxy.log)")
                #expect(server.stats.requests(path: "/echo") == 2)

                let name = "SOCKS5 proxy 127.0.0.1:\(proxy.port)"
                let wrong = makeRequest(url) {
                    $0.proxy = .socks5(host: "127.0.0.1", port: proxy.port, credentials: .init(user: Self.user, password: "wrong-horse"))
                }
                let refused = await runwayError { try await dut.send(dispatcher, wrong) }
                #expect(refused?.code == .cannotConnect)
                #expect(refused?.field == "proxy")
                #expect(refused?.message.contains("\(name) refused the credentials") == true, "\(String(describing: refused))")
                #expect(refused?.message.contains("wrong-horse") == false)
                let none = makeRequest(url) { $0.proxy = .socks5(host: "127.0.0.1", port: proxy.port) }
                let missing = await runwayError { try await dut.send(dispatcher, none) }
                #expect(missing?.code == .cannotConnect)
                #expect(missing?.message.contains("\(name) asks for credentials") == true, "\(String(describing: missing))")
                #expect(server.stats.requests(path: "/echo") == 2)
            }
        }
    }

    // MARK: Per service

    @Test("a service's proxy applies to its calls; a request's own setting wins")
    func perService() async throws {
        try await withProxy(try await .tinyproxy(credentials: (Self.user, Self.password))) { proxy in
            try await withTestServer { server in
                let base = server.baseURL.absoluteString
                var builder = ServiceRegistry.Builder(
                    environment: .develop, pipeline: Pipeline(interceptors: [], dispatcher: CurlDispatcher()))
                builder.register(
                    ProxiedService(
                        baseURLs: BaseURLs(develop: base, releaseCandidate: base, release: base), proxy: Self.tinyproxy(proxy)))
                let registry = try builder.build()

                let sent = try await registry.send(api: "echo", of: ProxiedService.serviceID, method: .get)
                #expect(try decodeEcho(sent).headers["via"] != nil)
                let loaded = try await EchoAPIManager(engine: ManagerEngine(registry: registry)).load()
                #expect(loaded["headers"]?["via"]?.string?.contains("tinyproxy") == true)

                let direct = try await registry.send(
                    api: "echo", of: ProxiedService.serviceID, method: .get, options: RequestOptions(proxy: .direct))
                #expect(try decodeEcho(direct).headers["via"] == nil)
                #expect(server.stats.requests(path: "/echo") == 3)
                #expect(proxy.log.components(separatedBy: "GET http://").count == 3, "\(proxy.log)")
            }
        }
    }

    // MARK: Configuration

    @Test("a proxy that cannot work is .configuration, and no message shows its credentials")
    func invalidConfiguration() async throws {
        for text in [
            "ftp://proxy:21", "socks4://bob:hunter2@proxy:1080", "http://:8080", "http://proxy:0",
            "http://proxy:70000", "http://proxy:8080/path", "http://bob:hunter2@proxy host:1",
            "http://corp%3Abob:hunter2@proxy:3128",
        ] {
            do {
                let proxy = try Proxy(url: text)
                Issue.record("\(text) was read as \(proxy)")
            } catch {
                #expect(error.code == .configuration, "\(text)")
                #expect(error.field == "proxy")
                #expect(!error.message.contains("hunter2"), "\(error.message)")
            }
        }
        // SOCKS5 sends the user name in a field of its own (RFC 1929): a colon is fine there.
        #expect(try Proxy(url: "socks5://corp%3Abob:pw@proxy").description == "socks5://<redacted>@proxy:1080")
        let read = try Proxy(url: "socks5h://bob:p%40ss@[::1]:1081")
        #expect(read == .socks5(host: "::1", port: 1081, credentials: .init(user: "bob", password: "p@ss")))
        #expect(read.description == "socks5h://<redacted>@[::1]:1081")
        #expect(try Proxy(url: "proxy.example:3128") == .http(host: "proxy.example", port: 3128))
        #expect(try Proxy(url: "socks5://127.0.0.1") == .socks5(host: "127.0.0.1", port: 1080, resolvesNamesRemotely: false))
        var options = RequestOptions(proxy: read)
        options.timeout = .seconds(5)
        #expect(!"\(options)".contains("p@ss") && !"\(options)".contains("bob"), "\(options)")
        #expect(PartnerService().proxy?.description == "http://<redacted>@proxy.corp.example:3128")
        #expect(Proxy.direct.description == "direct" && Proxy.environment.description == "environment")

        // Built in code, checked when sent, before any I/O.
        for proxy in [
            Proxy.http(host: "", port: 8080), .http(host: "proxy", port: 0), .socks5(host: "proxy", port: 65536),
            .socks5(host: "pro/xy"), .http(host: "proxy", port: 3128, credentials: .init(user: "", password: "x")),
            .https(host: "proxy", port: 3128, credentials: .init(user: "corp:bob", password: "x")),
        ] {
            let request = try Request(method: .get, "http://127.0.0.1:1/", options: RequestOptions(proxy: proxy))
            let error = await runwayError { try await CurlDispatcher().dispatch(request, context: RequestContext()) }
            #expect(error?.code == .configuration, "\(proxy)")
            #expect(error?.field == "proxy")
        }
    }

    @Test("the Proxies article's example is this file's, verbatim")
    func articleExample() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let article = try String(
            contentsOf: root.appendingPathComponent("Sources/RunwayCurl/RunwayCurl.docc/Proxies.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        let block = try #require(article.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "```").first)
        let quoted = try #require(
            source.components(separatedBy: "// BEGIN Proxies.md\n").dropFirst().first?.components(separatedBy: "// END Proxies.md").first)
        let code = block.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("import ") }
        let trimmed = code.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(trimmed == quoted.trimmingCharacters(in: .whitespacesAndNewlines))
        // The block's imports are this file's, so they are enough for the code it shows.
        let fileImports = Set(source.split(separator: "\n").filter { $0.hasPrefix("import ") })
        for line in block.split(separator: "\n") where line.hasPrefix("import ") {
            #expect(fileImports.contains(line), "the article imports what this file does not: \(line)")
        }
    }
}

/// A service whose proxy the test sets.
struct ProxiedService: Service {
    static let serviceID: ServiceID = "proxied"
    let id = ProxiedService.serviceID
    let baseURLs: BaseURLs
    let proxy: Proxy?
}

/// `GET echo` of ``ProxiedService``.
final class EchoAPIManager: APIManager {
    let engine: ManagerEngine
    let apiName = "echo"
    let serviceID = ProxiedService.serviceID

    init(engine: ManagerEngine) { self.engine = engine }
}

// The Proxies article's example (Sources/RunwayCurl/RunwayCurl.docc/Proxies.md), verbatim but
// for its imports; `articleExample` checks that the two agree.
// BEGIN Proxies.md
extension ServiceID {
    static let partner: ServiceID = "partner"
}

/// Every call to the partner's API goes through the company's HTTP proxy.
struct PartnerService: Service {
    let id: ServiceID = .partner
    let baseURLs = BaseURLs(
        develop: "https://dev.partner.example.com",
        releaseCandidate: "https://rc.partner.example.com",
        release: "https://partner.example.com")
    var proxy: Proxy? {
        .http(host: "proxy.corp.example", port: 3128, credentials: .init(user: "app", password: "s3cret"))
    }
}

/// One request through a SOCKS5 proxy that resolves the origin's name itself.
func status(through dispatcher: CurlDispatcher) async throws -> Response {
    var request = try Request(method: .get, "https://api.example.com/status")
    request.options.proxy = .socks5(host: "127.0.0.1", port: 1080)
    return try await dispatcher.dispatch(request, context: RequestContext())
}

/// Only an app that asks for it takes its proxy from http_proxy, https_proxy and no_proxy.
let fromEnvironment = RequestOptions(proxy: .environment)
// END Proxies.md
