import Foundation
import Logging
import Runway
import RunwayCurl
import RunwayLogging
import RunwayTestServer
import RunwayTesting
import Testing

/// Secrets found from outside in places the first redaction did not look, and values that could
/// forge lines of the log.
extension LoggingInterceptorTests {
    /// The URLs a `Referer`, a `Link` (each `<…>`) and a `Refresh` (its `url=`) name lose their
    /// secret query values; the rest of each value is as it was.
    @Test func urlsInRefererLinkAndRefreshHeadersAreRedacted() async throws {
        let stub = StubDispatcher { _ in
            Response(
                status: 200,
                headers: HTTPHeaders([
                    ("Refresh", "5; url='https://app.test/next?token=rf-1&page=2'"),
                    ("Link", #"<https://api.test/items?access_token=lk-2&page=3>; rel="next", </items?page=1>; rel="first""#),
                ]))
        }
        let request = try Request("https://api.test/a", headers: ["Referer": "https://app.test/p?access_token=rr-3&tab=info"])
        _ = try await Pipeline(interceptors: [.logging(logger)], dispatcher: stub).send(request)
        #expect(text.contains("-H 'Referer: https://app.test/p?access_token=<redacted>&tab=info'"), "\(text)")
        #expect(text.contains("Refresh: 5; url='https://app.test/next?token=<redacted>&page=2'"), "\(text)")
        #expect(
            text.contains(#"Link: <https://api.test/items?access_token=<redacted>&page=3>; rel="next", </items?page=1>; rel="first""#),
            "\(text)")
        for secret in ["rf-1", "lk-2", "rr-3"] { #expect(!text.contains(secret), "\(secret) reached the log") }
    }
}

extension LoggingInterceptorTests {
    /// `;` separates query items for some servers: a secret after one is hidden too, the URL
    /// otherwise as it was; so is one in a form body, and one among a path segment's parameters.
    @Test func semicolonSeparatedParametersAreRedacted() async throws {
        let pipeline = Pipeline(interceptors: [.logging(logger)], dispatcher: StubDispatcher(status: 200))
        _ = try await pipeline.send(try Request("https://api.test/s?a=1;password=sc-1;b=2&token=sc-2"))
        _ = try await pipeline.send(
            try Request(
                method: .post, "https://api.test/f", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Data("user=ann;pin=sc-3".utf8)))
        #expect(text.contains("curl -X GET 'https://api.test/s?a=1;password=<redacted>;b=2&token=<redacted>'"), "\(text)")
        #expect(text.contains("GET https://api.test/s?a=1;password=<redacted>;b=2&token=<redacted> → 200"), "\(text)")
        #expect(text.contains("--data-binary 'user=ann;pin=<redacted>'"), "\(text)")
        // A path segment's own parameters (matrix parameters, a servlet's session id).
        _ = try await pipeline.send(try Request("https://api.test/cart;jsessionid=sc-4/items;v=2;token=sc-5?page=1"))
        #expect(text.contains("GET https://api.test/cart;jsessionid=<redacted>/items;v=2;token=<redacted>?page=1 → 200"), "\(text)")
        for secret in ["sc-1", "sc-2", "sc-3", "sc-4", "sc-5"] { #expect(!text.contains(secret), "\(secret) reached the log") }
    }
}

extension LoggingInterceptorTests {
    /// A body that is a form but for one line break at its end is read as a form, whether the
    /// break is LF or CR LF, with or without a `Content-Type`.
    @Test(arguments: ["\n", "\r\n"], [nil, "text/plain"])
    func aFormEndingInALineBreakIsRedacted(_ lineBreak: String, _ type: String?) async throws {
        let stub = StubDispatcher { _ in Response(status: 200, body: Data("code=1&token=lb-2\(lineBreak)".utf8)) }
        let headers: HTTPHeaders = type.map { ["Content-Type": $0] } ?? [:]
        _ = try await Pipeline(interceptors: [.logging(logger)], dispatcher: stub).send(
            try Request(method: .post, "https://api.test/f", headers: headers, body: Data("user=ann&password=lb-1\(lineBreak)".utf8)))
        #expect(text.contains("user=ann&password=<redacted>"), "\(text)")
        #expect(text.contains("code=1&token=<redacted>"), "\(text)")
        for secret in ["lb-1", "lb-2"] { #expect(!text.contains(secret), "\(secret) reached the log") }
    }
}

extension LoggingInterceptorTests {
    /// A CR LF in a header value cannot forge a line of the log, before validation rejects the
    /// request or in a response: control characters are written as escapes, in the `curl` line
    /// as bash's `$'…'` quoting (so the command still sends the same bytes).
    @Test func controlCharactersInWhatIsLoggedAreEscaped() async throws {
        let injected = try Request("https://api.test/inj", headers: ["X-Note": "a\r\nAuthorization: forged"])
        await #expect(throws: RunwayError.self) {
            try await Pipeline(interceptors: [.logging(logger)], dispatcher: StubDispatcher(status: 200)).send(injected)
        }
        #expect(text.contains(#"-H $'X-Note: a\r\nAuthorization: forged'"#), "\(text)")
        let badName = try Request("https://api.test/name", headers: HTTPHeaders([("X-A\nwarning: forged", "v")]))
        await #expect(throws: RunwayError.self) {
            try await Pipeline(interceptors: [.logging(logger)], dispatcher: StubDispatcher(status: 200)).send(badName)
        }
        let failure = try #require(handler.entries.last { $0.level == .warning })
        #expect("\(failure.message)".contains(#"X-A\nwarning: forged"#), "\(failure.message)")

        let stub = StubDispatcher { _ in
            Response(
                status: 200, headers: HTTPHeaders([("X-Echo", "b\nHTTP 500"), ("X-Bell", "c\u{7}\u{85}d")]),
                body: Data("first\nGET https://api.test/ → 200\tdone".utf8))
        }
        _ = try await Pipeline(interceptors: [.logging(logger)], dispatcher: stub).send(
            try Request(method: .post, "https://api.test/p", headers: ["Content-Type": "text/plain"], body: Data("it's\none\ttwo\\".utf8)))
        #expect(text.contains(#"--data-binary $'it\'s\none\ttwo\\'"#), "\(text)")
        let dump = try #require(handler.entries.last { "\($0.message)".hasPrefix("← ") })
        #expect(
            "\(dump.message)"
                == "← HTTP 200\nX-Echo: b\\nHTTP 500\nX-Bell: c\\u{7}\\u{85}d\n\nfirst\\nGET https://api.test/ → 200\\tdone")
        for entry in handler.entries where "\(entry.message)".hasPrefix("→ ") {
            #expect(!"\(entry.message)".unicodeScalars.contains { $0 == "\n" || $0 == "\r" }, "\(entry.message)")
        }
    }
}

extension LoggingInterceptorTests {
    /// An XML body (a SOAP call, an XML API) loses the content of its hidden elements, whatever
    /// their namespace prefix and children, and the values of its hidden attributes; a reply
    /// typed as XML or starting with `<` does too. The rest of the XML is as it was.
    @Test func xmlBodiesAreRedacted() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        let envelope = """
            <?xml version="1.0"?>
            <soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" xmlns:token="urn:t">
            <soap:Body><Login user="ann" apiKey='xk-1'><!-- a note --><wsse:Password Type="text">xp-2</wsse:Password>\
            <Credentials><Id>7</Id><Secret>xp-3</Secret></Credentials><Note>a &lt; b</Note></Login></soap:Body>
            </soap:Envelope>
            """
        let request = Runway.Request(
            method: .post, url: server.url("/status/200"), headers: ["Content-Type": "application/soap+xml"], body: Data(envelope.utf8))
        let response = try await Pipeline(interceptors: [.logging(logger)], dispatcher: CurlDispatcher()).send(request)
        #expect(response.status == 200)
        // The dump quotes the body as bash's `$'…'`, where a `'` is `\'`.
        #expect(text.contains(#"<Login user="ann" apiKey=\'<redacted>\'><!-- a note -->"#), "\(text)")
        #expect(text.contains(#"<wsse:Password Type="text"><redacted></wsse:Password><Credentials><redacted></Credentials>"#), "\(text)")
        #expect(text.contains(#"xmlns:token="urn:t""#) && text.contains("<Note>a &lt; b</Note>"), "\(text)")

        let stub = StubDispatcher { _ in
            Response(status: 200, body: Data("<r><session_id>xs-4</session_id><token>xs-5".utf8))
        }
        _ = try await Pipeline(interceptors: [.logging(logger)], dispatcher: stub).send(try Request("https://api.test/x"))
        #expect(text.contains("<r><session_id><redacted></session_id><token><redacted>"), "\(text)")
        for secret in ["xk-1", "xp-2", "xp-3", "xs-4", "xs-5"] { #expect(!text.contains(secret), "\(secret) reached the log") }
    }
}
