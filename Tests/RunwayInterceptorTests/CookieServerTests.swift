import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

/// The cookie interceptor in front of libcurl and a real server: a session cookie set by one
/// response goes back with the next requests to that host, and only there.
@Suite struct CookieServerTests {
    /// `/jar/**` answers with the `Cookie` header it received as its body, and sets a cookie for
    /// each `X-Set-Cookie` header of the request; `X-Status` and `X-Location` shape the response.
    private static func routes(_ router: Router<TestRequestContext>) {
        router.get("/jar/**") { request, _ -> Response in
            var headers = HTTPFields()
            for value in request.headers[values: HTTPField.Name("X-Set-Cookie")!] {
                headers.append(HTTPField(name: .setCookie, value: value))
            }
            // Only a login redirects, so a followed redirect ends where it leads.
            let redirects = request.uri.path.hasSuffix("/login")
            if redirects, let location = request.headers[HTTPField.Name("X-Location")!] { headers[.location] = location }
            let status = redirects ? request.headers[HTTPField.Name("X-Status")!].flatMap { Int($0) } ?? 200 : 200
            let received = request.headers[values: .cookie].joined(separator: " | ")
            return Response(
                status: HTTPResponse.Status(code: status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: received)))
        }
    }

    private func send(
        _ pipeline: Pipeline, _ url: URL, setting cookies: [String] = [], headers: HTTPHeaders = [:],
        options: RequestOptions = RequestOptions()
    ) async throws -> (status: Int, cookie: String) {
        let headers = HTTPHeaders(headers.map { ($0.name, $0.value) } + cookies.map { ("X-Set-Cookie", $0) })
        let response = try await pipeline.send(
            RunwayCore.Request(url: url, headers: headers, options: options), context: RequestContext(apiName: "jar"))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    /// Runs `body` with a jar, a pipeline over it, a TLS server, a plain one on the same host, and
    /// the options that trust the TLS server's certificate.
    private func withSecureAndPlainServers(
        _ body: (CookieJar, Pipeline, TestServer, TestServer, RequestOptions) async throws -> Void
    ) async throws {
        let pki = try await TestPKI.load()
        try await withTestServer(tls: pki.server, routes: Self.routes) { secure in
            try await withTestServer(routes: Self.routes) { plain in
                let jar = CookieJar()
                var tls = RequestOptions()
                tls.tls.certificateAuthorities = .file(pki.caCertificatePath)
                try await body(jar, Pipeline(interceptors: [.cookies(jar)], dispatcher: CurlDispatcher()), secure, plain, tls)
            }
        }
    }

    @Test func aSessionCookieGoesBackToItsHostAndPathOnly() async throws {
        try await withTestServer(routes: Self.routes) { server in
            let jar = CookieJar()
            let pipeline = Pipeline(interceptors: [.cookies(jar)], dispatcher: CurlDispatcher())
            let login = try await send(
                pipeline, server.url("/jar/login"),
                setting: ["sid=abc123; Path=/; HttpOnly", "theme=dark; Max-Age=3600", "scoped=1; Path=/jar/account"])
            #expect(login.cookie == "")
            #expect(Set(jar.cookies.map(\.name)) == ["sid", "theme", "scoped"])

            // `theme` has no Path: it gets the login's, /jar, and goes before the one of /.
            #expect(try await send(pipeline, server.url("/jar/me")).cookie == "theme=dark; sid=abc123")
            #expect(try await send(pipeline, server.url("/jar/account/x")).cookie == "scoped=1; theme=dark; sid=abc123")
            #expect(try await send(pipeline, server.url("/other")).status == 404)
            // The same server by another name is another host: nothing goes there.
            #expect(try await send(pipeline, server.url("/jar/me", hostName: "localhost")).cookie == "")

            // The server ends the session (a cookie is removed by its name, domain and path).
            _ = try await send(pipeline, server.url("/jar/logout"), setting: ["sid=; Max-Age=0; Path=/"])
            #expect(try await send(pipeline, server.url("/jar/me")).cookie == "theme=dark")
        }
    }

    @Test func cookiesARedirectSetsAreKeptAndSentWhereItLeads() async throws {
        try await withTestServer(routes: Self.routes) { server in
            let jar = CookieJar()
            let pipeline = Pipeline(interceptors: [.cookies(jar)], dispatcher: CurlDispatcher())
            // The default policy hands the 302 back: its cookie is kept.
            let redirect = try await send(
                pipeline, server.url("/jar/login"), setting: ["sid=from-302"],
                headers: ["X-Status": "302", "X-Location": "/jar/home"])
            #expect(redirect.status == 302)
            #expect(try await send(pipeline, server.url("/jar/home")).cookie == "sid=from-302")

            // Followed by libcurl, the response comes from a URL the chain does not see: nothing
            // it sets is kept (the page it leads to sets the cookie again, from the same header).
            var follow = RequestOptions()
            follow.redirects = .follow()
            let followed = try await send(
                pipeline, server.url("/jar/login"), setting: ["later=1"], headers: ["X-Status": "302", "X-Location": "/jar/home"],
                options: follow)
            #expect(followed.status == 200)
            #expect(followed.cookie == "sid=from-302")
            #expect(jar.cookies.map(\.name) == ["sid"])
        }
    }

    @Test func refusedCookiesAreNotKeptAndTheResponseIsUntouched() async throws {
        try await withTestServer(routes: Self.routes) { server in
            let jar = CookieJar()
            let pipeline = Pipeline(interceptors: [.cookies(jar)], dispatcher: CurlDispatcher())
            let response = try await send(
                pipeline, server.url("/jar/set"),
                setting: ["a=1; Domain=example.com", "b=1; Domain=localhost", "c=1; Secure", "d=1; Domain=127.0.0.1", "e"])
            #expect(response.status == 200)
            #expect(jar.cookies.map(\.name) == ["d"])
            #expect(try await send(pipeline, server.url("/jar/me")).cookie == "d=1")
        }
    }

    @Test func aSiteCannotSetACookieForEverySiteUnderItsPublicSuffix() async throws {
        try await withTestServer(routes: Self.routes) { server in
            let jar = CookieJar()
            let pipeline = Pipeline(interceptors: [.cookies(jar)], dispatcher: CurlDispatcher())
            let port = try #require(server.url("/").port)
            var named = RequestOptions()
            named.connectOverrides = ["shop.example.co.uk", "www.example.co.uk", "bank.co.uk"].map {
                ConnectOverride(host: $0, connectHost: "127.0.0.1")
            }
            func at(_ host: String, _ path: String) -> URL { URL(string: "http://\(host):\(port)\(path)")! }
            let set = try await send(
                pipeline, at("shop.example.co.uk", "/jar/set"), setting: ["wide=1; Domain=co.uk", "site=1; Domain=example.co.uk"],
                options: named)
            #expect(set.status == 200)
            #expect(jar.cookies.map(\.name) == ["site"])
            #expect(try await send(pipeline, at("www.example.co.uk", "/jar/me"), options: named).cookie == "site=1")
            #expect(try await send(pipeline, at("bank.co.uk", "/jar/me"), options: named).cookie == "")
        }
    }

    @Test func aDomainCookieNeverGoesToAnAddress() async throws {
        try await withTestServer(routes: Self.routes) { server in
            let jar = CookieJar()
            let pipeline = Pipeline(interceptors: [.cookies(jar)], dispatcher: CurlDispatcher())
            // A host whose name ends in numbers sets a cookie for the domain those numbers make...
            var named = RequestOptions()
            named.connectOverrides = [ConnectOverride(host: "x.0.0.1", connectHost: "127.0.0.1")]
            let port = try #require(server.url("/").port)
            _ = try await send(pipeline, URL(string: "http://x.0.0.1:\(port)/jar/set")!, setting: ["num=1; Domain=0.0.1"], options: named)
            #expect(jar.cookies.map(\.domain) == ["0.0.1"])
            // ...which is no domain of an address: 127.0.0.1 does not get it.
            #expect(try await send(pipeline, server.url("/jar/me")).cookie == "")
        }
    }

    @Test func prefixedCookiesAreKeptOnlyWhenTheyKeepWhatTheirPrefixPromises() async throws {
        try await withSecureAndPlainServers { jar, pipeline, secure, plain, tls in
            // Over plain HTTP, or over HTTPS without `Secure`, no prefixed cookie is kept.
            _ = try await send(pipeline, plain.url("/jar/set"), setting: ["__Host-sid=forged; Path=/", "__secure-a=forged", "open=1"])
            _ = try await send(pipeline, secure.url("/jar/set"), setting: ["__Secure-b=1", "__HOST-c=1; Path=/"], options: tls)
            // A `__Host-` cookie must also be the host's alone (no `Domain`) and for every path.
            _ = try await send(
                pipeline, secure.url("/jar/set"),
                setting: [
                    "__Host-d=1; Secure; Domain=127.0.0.1; Path=/", "__Host-e=1; Secure; Path=/jar", "__Host-f=1; Secure",
                    "__Host-sid=real; Secure; Path=/", "__Secure-token=real; Secure; Path=/jar",
                ], options: tls)
            #expect(Set(jar.cookies.map(\.name)) == ["open", "__Host-sid", "__Secure-token"])
            #expect(
                try await send(pipeline, secure.url("/jar/me"), options: tls).cookie == "open=1; __Secure-token=real; __Host-sid=real")
        }
    }

    @Test func aRequestsOwnCookieHeaderGoesAsItIs() async throws {
        try await withTestServer(routes: Self.routes) { server in
            let jar = CookieJar()
            let pipeline = Pipeline(interceptors: [.cookies(jar)], dispatcher: CurlDispatcher())
            _ = try await send(pipeline, server.url("/jar/login"), setting: ["sid=jar"])
            let own = try await send(pipeline, server.url("/jar/me"), headers: ["Cookie": "sid=mine"])
            #expect(own.cookie == "sid=mine")
        }
    }

    @Test func aSecureCookieGoesOverHTTPSOnly() async throws {
        try await withSecureAndPlainServers { jar, pipeline, secure, plain, tls in
            _ = try await send(pipeline, secure.url("/jar/login"), setting: ["sid=s; Secure", "open=o"], options: tls)
            #expect(try await send(pipeline, secure.url("/jar/me"), options: tls).cookie == "sid=s; open=o")
            // The plain server is the same host on another port: it gets the open cookie only.
            #expect(try await send(pipeline, plain.url("/jar/me")).cookie == "open=o")
            // ...and may not replace the secure one.
            _ = try await send(pipeline, plain.url("/jar/set"), setting: ["sid=forged"])
            #expect(try await send(pipeline, secure.url("/jar/me"), options: tls).cookie == "sid=s; open=o")
        }
    }

    @Test func restoredCookiesAreHeldToTheRulesOfReceivedOnes() async throws {
        try await withTestServer(routes: Self.routes) { server in
            // A saved file, hand-edited or corrupt: a domain as a user writes it, blanks, a CR LF
            // meant to inject a header, a broken prefix promise, a path that is no path, a stale one.
            let jar = CookieJar(cookies: [
                Cookie(name: " sid ", value: "abc ", domain: ".LocalHost.", hostOnly: false),
                Cookie(name: "pin", value: "1", domain: "LOCALHOST", path: ""),
                Cookie(name: "evil", value: "1\r\nX-Injected: 1", domain: "localhost"),
                Cookie(name: "bad\nname", value: "1", domain: "localhost"),
                Cookie(name: "a=b", value: "1", domain: "localhost"),
                Cookie(name: "split", value: "1; admin=1", domain: "localhost"),
                Cookie(name: "huge", value: String(repeating: "x", count: 5_000), domain: "localhost"),
                Cookie(name: "__Host-forged", value: "1", domain: "localhost"),
                Cookie(name: "relative", value: "1", domain: "localhost", path: "jar"),
                Cookie(name: "blank", value: "1", domain: "."),
                Cookie(name: "stale", value: "1", domain: "localhost", expires: Date(timeIntervalSinceNow: -60)),
                Cookie(name: "far", value: "1", domain: "localhost", expires: Date.distantFuture),
            ])
            #expect(Set(jar.cookies.map(\.name)) == ["sid", "pin", "far"])
            #expect(try #require(jar.cookies.first { $0.name == "far" }?.expires) < Date(timeIntervalSinceNow: 401 * 86_400))
            let pipeline = Pipeline(interceptors: [.cookies(jar)], dispatcher: CurlDispatcher())
            let sent = try await send(pipeline, server.url("/jar/me", hostName: "localhost"))
            #expect(sent.status == 200)
            #expect(sent.cookie == "sid=abc; pin=1; far=1")
        }
    }

    @Test func aCookieSetByARetriedResponseIsKeptAndGoesWithTheNextAttempt() async throws {
        // A busy backend answers 503 and pins the client to another with a sticky-session cookie.
        let attempts = Counter()
        let routes: TestServer.Routes = { router in
            router.get("/sticky") { request, _ -> Response in
                let cookie = request.headers[values: .cookie].joined(separator: " | ")
                attempts.increment()
                guard cookie.contains("backend=b2") else {
                    let headers: HTTPFields = [.setCookie: "backend=b2; Path=/", .retryAfter: "0"]
                    return Response(status: .serviceUnavailable, headers: headers)
                }
                return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: cookie)))
            }
        }
        try await withTestServer(routes: routes) { server in
            let jar = CookieJar()
            jar.store(setCookie: ["sid=1"], from: server.url("/"))
            let pipeline = Pipeline(
                interceptors: [.cookies(jar), try .retry(maxAttempts: 3, initialBackoff: .milliseconds(1))], dispatcher: CurlDispatcher())
            let response = try await pipeline.send(RunwayCore.Request(url: server.url("/sticky")), context: RequestContext(apiName: "x"))
            // The second attempt went with the cookie the first one's 503 set.
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "sid=1; backend=b2")
            #expect(attempts.value == 2)
            #expect(Set(jar.cookies.map(\.name)) == ["sid", "backend"])
        }
    }

    @Test func aRetryAfterAFailureKeepsItsAnswersCookiesFromTheURLItSentAgain() async throws {
        // The login redirects to a page whose connection resets; retry sends the login again,
        // which now answers with a session cookie without a Path: its default path is the
        // login's directory (/seq), not the page's where the first attempt was led (/seq/app).
        let logins = Counter()
        let responder = try ScriptedResponder { exchange in
            guard exchange.target.hasPrefix("/seq/login") else { return .reset }
            logins.increment()
            let answer =
                logins.value == 1
                ? "HTTP/1.1 302 Found\r\nLocation: /seq/app/home\r\nContent-Length: 0\r\n\r\n"
                : "HTTP/1.1 200 OK\r\nSet-Cookie: sid=1\r\nContent-Length: 0\r\n\r\n"
            return .reply(Array(answer.utf8))
        }
        defer { responder.stop() }
        let jar = CookieJar()
        let pipeline = Pipeline(
            interceptors: [.cookies(jar), try .retry(maxAttempts: 3, initialBackoff: .milliseconds(1)), try .redirects(max: 5)],
            dispatcher: CurlDispatcher())
        let response = try await pipeline.send(RunwayCore.Request(url: responder.url("/seq/login")), context: RequestContext(apiName: "x"))
        #expect(response.status == 200)
        #expect(logins.value == 2)
        #expect(jar.cookies.map(\.path) == ["/seq"])
    }
}
