import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Runway
import RunwayCurl
import RunwaySync
import RunwayTestServer
import RunwayTesting
import Testing

/// The redirect interceptor in front of libcurl and a real server: each redirect to the call's
/// origin goes down the rest of the chain as a request of its own; any other comes back.
@Suite struct RedirectServerTests {
    /// A pipeline of `interceptors` around a recorder that sees each request the chain sends.
    private func pipeline(_ interceptors: [any Interceptor], log: RecordingInterceptor.Log) -> Pipeline {
        Pipeline(interceptors: interceptors + [RecordingInterceptor(name: "wire", log: log)], dispatcher: CurlDispatcher())
    }

    private func sentPaths(_ log: RecordingInterceptor.Log) -> [String] {
        log.events.compactMap { event in
            guard case .request(_, let url) = event else { return nil }
            return URL(string: url)?.path
        }
    }

    @Test func eachRedirectToTheSameOriginGoesDownTheChain() async throws {
        try await withTestServer { server in
            let log = RecordingInterceptor.Log()
            let response = try await pipeline([try .redirects()], log: log).send(Runway.Request(url: server.url("/redirect/3")))
            #expect(response.status == 200)
            #expect(response.body == Data(#"{"redirects":"done"}"#.utf8))
            #expect(sentPaths(log) == ["/redirect/3", "/redirect/2", "/redirect/1", "/redirect/0"])
            for hop in 0...3 { #expect(server.stats.requests(path: "/redirect/\(hop)") == 1) }
        }
    }

    /// A `Location` with escapes beside characters a URL cannot hold raw keeps its escapes: the
    /// parser, given `[`, encoded the whole text again (`%5B` went as `%255B`).
    @Test func aLocationKeepsItsEscapes() async throws {
        try await withTestServer { server in
            let log = RecordingInterceptor.Log()
            // url=/echo?a%5B%5D=1&b[c]=2, encoded as a query value.
            let start = server.url("/redirect-to?url=%2Fecho%3Fa%255B%255D%3D1%26b%5Bc%5D%3D2")
            let response = try await pipeline([try .redirects()], log: log).send(Runway.Request(url: start))
            #expect(response.status == 200)
            let echo = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
            #expect(echo?["query"] as? String == "a%5B%5D=1&b%5Bc%5D=2")
        }
    }

    /// RFC 9110 §15.4, as browsers do: a 303 makes a `GET` of all but `HEAD`, a 301 or 302 of a
    /// `POST`; 307 and 308 keep the method and the body.
    @Test(arguments: [
        (301, HTTPMethod.post, "GET"), (302, .post, "GET"), (303, .post, "GET"), (303, .put, "GET"), (302, .put, "PUT"),
        (301, .delete, "DELETE"), (307, .post, "POST"), (308, .put, "PUT"), (307, .patch, "PATCH"),
    ])
    func theMethodAndBodyAfterEachRedirect(status: Int, method: HTTPMethod, sentMethod: String) async throws {
        try await withTestServer { server in
            let log = RecordingInterceptor.Log()
            let request = Runway.Request(
                method: method, url: server.url("/redirect-to?status=\(status)&url=/echo"),
                headers: ["Content-Type": "application/json", "X-Trace": "kept"], body: Data(#"{"order":7}"#.utf8))
            let response = try await pipeline([try .redirects()], log: log).send(request)
            #expect(response.status == 200)
            let echo = try JSONDecoder().decode(EchoResponse.self, from: response.body)
            #expect(echo.method == sentMethod)
            #expect(echo.headers["x-trace"] == "kept")
            if sentMethod == method.rawValue {
                #expect(echo.body == #"{"order":7}"#)
                #expect(echo.headers["content-type"] == "application/json")
            } else {
                #expect(echo.bodyLength == 0)
                #expect(echo.headers["content-type"] == nil)
            }
        }
    }

    @Test func aRedirectToAnotherOriginComesBackUnfollowed() async throws {
        try await withTestServer { server in
            try await withTestServer { other in
                let log = RecordingInterceptor.Log()
                let pipeline = pipeline([try .redirects()], log: log)
                // Another port on the same address; the same port under another name; another scheme.
                let port = try #require(server.baseURL.port)
                let targets = [
                    other.url("/echo").absoluteString, server.url("/echo", hostName: "localhost").absoluteString,
                    "https://127.0.0.1:\(port)/echo", "//localhost:\(port)/echo",
                ]
                for target in targets {
                    let escaped = try #require(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
                    let response = try await pipeline.send(Runway.Request(url: server.url("/redirect-to?url=\(escaped)")))
                    #expect(response.status == 302, "\(target)")
                    #expect(response.headers["Location"] == target)
                }
                #expect(sentPaths(log) == Array(repeating: "/redirect-to", count: targets.count))
                #expect(other.stats.totalRequests == 0)
                #expect(server.stats.requests(path: "/echo") == 0)
            }
        }
    }

    /// `http` on port 80 to `https` on port 443 of the same host is an upgrade, followed; the
    /// host's name is routed to the two test servers by connect overrides. The way back is not.
    @Test func anUpgradeToHTTPSOnTheSameHostIsFollowedADowngradeIsNot() async throws {
        let pki = try await TestPKI.load()
        let routes: TestServer.Routes = { router in
            router.get("/old") { _, _ in
                Hummingbird.Response(status: .movedPermanently, headers: [.location: "https://api.runway.test/echo"])
            }
            router.get("/down") { _, _ in Hummingbird.Response(status: .found, headers: [.location: "http://api.runway.test/echo"]) }
        }
        try await withTestServer(tls: pki.server, routes: routes) { secure in
            try await withTestServer(routes: routes) { plain in
                var options = RequestOptions()
                options.tls.certificateAuthorities = .file(pki.caCertificatePath)
                options.connectOverrides = [
                    ConnectOverride(host: "api.runway.test", port: 80, connectHost: "127.0.0.1", connectPort: plain.baseURL.port),
                    ConnectOverride(host: "api.runway.test", port: 443, connectHost: "127.0.0.1", connectPort: secure.baseURL.port),
                ]
                let log = RecordingInterceptor.Log()
                let pipeline = pipeline([try .redirects()], log: log)
                let upgraded = try await pipeline.send(
                    Runway.Request(url: try #require(URL(string: "http://api.runway.test/old")), options: options))
                #expect(upgraded.status == 200)
                #expect(secure.stats.requests(path: "/echo") == 1)
                let downgraded = try await pipeline.send(
                    Runway.Request(url: try #require(URL(string: "https://api.runway.test/down")), options: options))
                #expect(downgraded.status == 302)
                #expect(plain.stats.requests(path: "/echo") == 0)
            }
        }
    }

    @Test func moreRedirectsThanAllowedFailBeforeTheNextIsSent() async throws {
        try await withTestServer { server in
            let log = RecordingInterceptor.Log()
            let error = await #expect(throws: RunwayError.self) {
                try await pipeline([try .redirects(max: 2)], log: log).send(Runway.Request(url: server.url("/redirect/5")))
            }
            #expect(error?.code == .tooManyRedirects)
            #expect(error?.stage == .interceptor("redirects"))
            #expect(error?.response?.status == 302)
            #expect(error?.response?.headers["Location"] == "/redirect/2")
            #expect(sentPaths(log) == ["/redirect/5", "/redirect/4", "/redirect/3"])
            #expect(server.stats.requests(path: "/redirect/2") == 0)
        }
    }

    @Test func aRedirectThatCannotBeFollowedComesBack() async throws {
        let routes: TestServer.Routes = { router in
            router.get("/no-location") { _, _ in Hummingbird.Response(status: .found) }
            router.get("/bad-location") { _, _ in Hummingbird.Response(status: .movedPermanently, headers: [.location: "http://[::1"]) }
            router.get("/other-scheme") { _, _ in
                Hummingbird.Response(status: .seeOther, headers: [.location: "app://listing/detail?id=42"])
            }
            router.get("/not-modified") { _, _ in Hummingbird.Response(status: .notModified, headers: [.location: "/echo"]) }
        }
        try await withTestServer(routes: routes) { server in
            let log = RecordingInterceptor.Log()
            let pipeline = pipeline([try .redirects()], log: log)
            for (path, status) in [("/no-location", 302), ("/bad-location", 301), ("/other-scheme", 303), ("/not-modified", 304)] {
                #expect(try await pipeline.send(Runway.Request(url: server.url(path))).status == status)
            }
            #expect(log.events.count == 8)
        }
    }

    /// A body that can be sent once was read by the first request: a 307 that would send it again
    /// comes back as the response. One made anew for each send goes again.
    @Test func aStreamedBodyIsSentAgainOnlyWhenItCan() async throws {
        try await withTestServer { server in
            let log = RecordingInterceptor.Log()
            let pipeline = pipeline([try .redirects()], log: log)
            let url = server.url("/redirect-to?status=307&url=/echo")
            let chunks = [Data("part one, ".utf8), Data("part two".utf8)]

            var once = Runway.Request(method: .put, url: url)
            once.bodyStream = .sequence(
                AsyncStream { continuation in
                    for chunk in chunks { continuation.yield(chunk) }
                    continuation.finish()
                })
            #expect(try await pipeline.send(once).status == 307)
            #expect(server.stats.requests(path: "/echo") == 0)

            var again = Runway.Request(method: .put, url: url)
            again.bodyStream = .sequence { chunks.async }
            let response = try await pipeline.send(again)
            #expect(response.status == 200)
            #expect(try JSONDecoder().decode(EchoResponse.self, from: response.body).body == "part one, part two")
        }
    }

    @Test func aRequestThatAsksTheDispatcherToFollowIsPassedOn() async throws {
        try await withTestServer { server in
            let log = RecordingInterceptor.Log()
            var request = Runway.Request(url: server.url("/redirect/2"))
            request.options.redirects = .follow(max: 5)
            let response = try await pipeline([try .redirects()], log: log).send(request)
            #expect(response.status == 200)
            #expect(response.metrics.redirectCount == 2)
            #expect(sentPaths(log) == ["/redirect/2"])
        }
    }

    @Test func aStreamedRedirectIsDroppedAndTheLastResponseStreams() async throws {
        try await withTestServer { server in
            let log = RecordingInterceptor.Log()
            var request = Runway.Request(url: server.url("/redirect/2"))
            request.streamsResponseBody = true
            let response = try await pipeline([try .redirects()], log: log).send(request)
            #expect(response.status == 200)
            var body = Data()
            for try await chunk in try #require(response.bodyStream) { body += chunk }
            #expect(body == Data(#"{"redirects":"done"}"#.utf8))
            #expect(sentPaths(log) == ["/redirect/2", "/redirect/1", "/redirect/0"])
        }
    }

    /// A login that answers `303` with the session cookie, to a page that sets one of its own
    /// without a `Path` (so it is the page's directory's): each is kept from the URL that set it,
    /// and the page gets the session.
    @Test func cookiesEachRedirectSetsAreKeptAndSentWithTheNextRequest() async throws {
        let routes: TestServer.Routes = { router in
            router.post("/auth/login") { _, _ in
                Hummingbird.Response(status: .seeOther, headers: [.location: "/home/start", .setCookie: "sid=s1; Path=/"])
            }
            router.get("/home/**") { request, _ in
                Response(
                    status: .ok, headers: [.setCookie: "seen=1"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: request.headers[.cookie] ?? "")))
            }
        }
        try await withTestServer(routes: routes) { server in
            let jar = CookieJar()
            let log = RecordingInterceptor.Log()
            let pipeline = pipeline([.cookies(jar), try .redirects()], log: log)
            let login = try await pipeline.send(Runway.Request(method: .post, url: server.url("/auth/login"), body: Data("user=a".utf8)))
            #expect(login.status == 200)
            #expect(String(decoding: login.body, as: UTF8.self) == "sid=s1")
            // `seen` came from /home/start: its path is /home, not the login's /auth.
            #expect(jar.cookies.first { $0.name == "seen" }?.path == "/home")
            let next = try await pipeline.send(Runway.Request(url: server.url("/home/next")))
            #expect(String(decoding: next.body, as: UTF8.self) == "seen=1; sid=s1")
        }
    }

    /// Inside retry: a failed attempt starts over from the call's URL, and every request it sends
    /// counts toward the attempts.
    @Test func aRetriedCallStartsOverFromItsOwnURL() async throws {
        let failures = Locked(1)
        let routes: TestServer.Routes = { router in
            router.get("/moved") { _, _ in Hummingbird.Response(status: .temporaryRedirect, headers: [.location: "/busy"]) }
            router.get("/busy") { _, _ in
                let fail = failures.withLock { left in
                    defer { left -= 1 }
                    return left > 0
                }
                return Hummingbird.Response(status: fail ? .serviceUnavailable : .ok)
            }
        }
        try await withTestServer(routes: routes) { server in
            let log = RecordingInterceptor.Log()
            let retry = try RetryInterceptor.retry(maxAttempts: 3, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(5))
            let response = try await pipeline([retry, try .redirects()], log: log).send(Runway.Request(url: server.url("/moved")))
            #expect(response.status == 200)
            #expect(sentPaths(log) == ["/moved", "/busy", "/moved", "/busy"])
        }
    }

    /// A `POST` answered `303` was acted on: when the `GET` it leads to cannot connect, retry
    /// must not send the `POST` again as if nothing had been sent.
    @Test func aRequestARedirectLedToIsNeverTakenForNeverSent() async throws {
        let log = RecordingInterceptor.Log()
        let stub = StubDispatcher { request in
            guard request.url.path == "/orders" else { throw RunwayError(.cannotConnect, "refused", neverSent: true) }
            return Runway.Response(status: 303, headers: ["Location": "/orders/7"])
        }
        let retry = try RetryInterceptor.retry(maxAttempts: 3, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(5))
        let pipeline = Pipeline(interceptors: [retry, try .redirects(), RecordingInterceptor(name: "wire", log: log)], dispatcher: stub)
        let url = try #require(URL(string: "https://api.test/orders"))
        let error = await #expect(throws: RunwayError.self) { try await pipeline.send(Runway.Request(method: .post, url: url)) }
        #expect(error?.code == .cannotConnect)
        #expect(error?.neverSent == false)
        #expect(sentPaths(log) == ["/orders", "/orders/7"])
    }

    /// A call's progress stream covers its last request, however many it sent: each request
    /// reports in turn, and the stream ends with the call (a dispatcher alone would end it with
    /// the first transfer, a redirect's or a failed attempt's).
    @Test func theProgressStreamEndsWithTheCallsLastRequest() async throws {
        let failures = Locked(1)
        let routes: TestServer.Routes = { router in
            router.get("/busy-then-bytes") { request, context in
                let fail = failures.withLock { left in
                    defer { left -= 1 }
                    return left > 0
                }
                if fail { return Hummingbird.Response(status: .serviceUnavailable) }
                return Hummingbird.Response(status: .found, headers: [.location: "/bytes/100000"])
            }
        }
        try await withTestServer(routes: routes) { server in
            let retry = try RetryInterceptor.retry(maxAttempts: 3, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(5))
            let log = RecordingInterceptor.Log()
            let pipeline = pipeline([retry, try .redirects()], log: log)
            var request = Runway.Request(url: server.url("/busy-then-bytes"))
            let (progress, reporter) = TransferProgress.makeStream(bufferingNewest: 100_000)
            request.progress = reporter
            let response = try await pipeline.send(request)
            #expect(response.body.count == 100_000)
            #expect(sentPaths(log) == ["/busy-then-bytes", "/busy-then-bytes", "/bytes/100000"])
            var last = TransferProgress()
            for await report in progress { last = report }
            #expect(last.bytesReceived == 100_000)
            #expect(last.totalBytesToReceive == 100_000)
        }
    }

    @Test func fewerThanOneRedirectIsAConfigurationError() {
        for max in [0, -1] {
            #expect(throws: RunwayError.self) { try RedirectInterceptor(maxRedirects: max) }
        }
        #expect((try? RedirectInterceptor.redirects())?.maxRedirects == 5)
    }
}

extension Array where Element: Sendable {
    /// The elements as an async sequence.
    fileprivate var async: AsyncStream<Element> {
        AsyncStream { continuation in
            for element in self { continuation.yield(element) }
            continuation.finish()
        }
    }
}
