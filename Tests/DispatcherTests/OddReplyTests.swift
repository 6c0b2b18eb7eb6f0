import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

@testable import RunwayCurl

/// Replies no HTTP server library sends, from a raw socket: each a typed error or a faithful
/// reading, never a crash or a misleading code.
extension DispatcherSuite {
    @Test(
        "a reply that is not HTTP is .responseInvalid, not an unsupported scheme",
        arguments: [
            "this is not http at all\r\n\r\n", "HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n",
        ])
    func notHTTP(_ reply: String) async throws {
        let responder = try RawResponder(reply)
        defer { responder.stop() }
        let error = await runwayError { try await CurlDispatcher().dispatch(makeRequest(responder.url("/x")), context: RequestContext()) }
        #expect(error?.code == .responseInvalid)
    }

    @Test(
        "a header or trailer line libcurl cannot read as a field is .responseInvalid, not a transport failure",
        arguments: [
            "HTTP/1.1 200 OK\r\n Content-Length: 2\r\n\r\nok",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nNot a field\r\n\r\n",
        ], [false, true])
    func unreadableFieldLine(_ reply: String, streams: Bool) async throws {
        let responder = try RawResponder(reply)
        defer { responder.stop() }
        var request = makeRequest(responder.url("/x"))
        request.streamsResponseBody = streams
        let error = await runwayError { try await sendReadingTheBody(CurlDispatcher(), request) }
        #expect(error?.code == .responseInvalid, "\(String(describing: error))")
        #expect(error?.message.contains("not valid HTTP") == true, "\(String(describing: error))")
    }

    @Test("a response header over libcurl's limit is .responseTooLarge")
    func hugeHeader() async throws {
        let responder = try RawResponder(
            "HTTP/1.1 200 OK\r\nX-Big: " + String(repeating: "a", count: 200_000) + "\r\nContent-Length: 0\r\n\r\n")
        defer { responder.stop() }
        let error = await runwayError { try await CurlDispatcher().dispatch(makeRequest(responder.url("/x")), context: RequestContext()) }
        #expect(error?.code == .responseTooLarge)
    }

    @Test("a folded header line continues the previous value", arguments: DispatcherUnderTest.all)
    func foldedHeader(_ dut: DispatcherUnderTest) async throws {
        let responder = try RawResponder(
            "HTTP/1.1 200 OK\r\nX-Fold: part1\r\n \t part2\r\nX-Next: n\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        defer { responder.stop() }
        let response = try await dut.send(dut.make(), makeRequest(responder.url("/x")))
        #expect(response.headers["X-Fold"] == "part1 part2")
        #expect(response.headers["X-Next"] == "n")
        #expect(response.body == Data("ok".utf8))
    }

    @Test("repeated Set-Cookie fields arrive apart, an Expires date whole, and a cookie jar keeps each", arguments: DispatcherUnderTest.all)
    func repeatedSetCookie(_ dut: DispatcherUnderTest) async throws {
        let cookies = ["a=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Path=/", "b=2; Path=/", "c=3; Expires=Thu, 01 Jan 2099 00:00:00 GMT"]
        let responder = try RawResponder(
            "HTTP/1.1 200 OK\r\n" + cookies.map { "Set-Cookie: \($0)\r\n" }.joined() + "Content-Length: 0\r\nConnection: close\r\n\r\n")
        defer { responder.stop() }
        let jar = CookieJar()
        let pipeline = Pipeline(interceptors: [.cookies(jar)], dispatcher: dut.make())
        let response = try await pipeline.send(makeRequest(responder.url("/x")), context: RequestContext())
        #expect(response.headers.values(for: "Set-Cookie") == cookies)
        #expect(jar.cookieHeader(for: responder.url("/x")) == "a=1; b=2; c=3")
    }

    @Test("trailer fields stay out of the header fields and cannot reframe the body", arguments: [false, true])
    func trailers(streams: Bool) async throws {
        // A chunked body's trailer section: libcurl hands its lines to the header callback.
        let responder = try RawResponder(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Head: h\r\n\r\n2\r\nok\r\n0\r\n"
                + "X-Trailer: t\r\nContent-Length: 99\r\nTransfer-Encoding: gzip\r\nX-Head: forged\r\n\r\n")
        defer { responder.stop() }
        var request = makeRequest(responder.url("/x"))
        request.streamsResponseBody = streams
        let response = try await CurlDispatcher().dispatch(request, context: RequestContext())
        var body = response.body
        if let stream = response.bodyStream {
            for try await chunk in stream { body.append(chunk) }
        }
        #expect(body == Data("ok".utf8))
        #expect(response.headers.values(for: "X-Head") == ["h"])
        #expect(response.headers["X-Trailer"] == nil)
        #expect(response.headers["Content-Length"] == nil)
    }

    @Test("a field name followed by blanks before its colon is read without them")
    func blankBeforeColon() async throws {
        let responder = try RawResponder("HTTP/1.1 200 OK\r\nX-Spaced \t: v\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        defer { responder.stop() }
        let response = try await CurlDispatcher().dispatch(makeRequest(responder.url("/x")), context: RequestContext())
        #expect(response.headers["X-Spaced"] == "v")
        #expect(response.body == Data("ok".utf8))
    }

    @Test("a header value that is not UTF-8 is read as ISO-8859-1, no byte lost; UTF-8 stays UTF-8", arguments: [false, true])
    func latin1HeaderValue(streams: Bool) async throws {
        // "café" in ISO-8859-1 (0xE9), in UTF-8, and a folded line continuing a Latin-1 value.
        let head =
            Array("HTTP/1.1 200 OK\r\nX-Name: caf".utf8) + [0xE9] + Array("\r\nX-Utf8: caf\u{E9}\r\nX-Fold: a\r\n ".utf8)
            + [0xFC, 0xDF] + Array("\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".utf8)
        let responder = try RawResponder(reply: head)
        defer { responder.stop() }
        var request = makeRequest(responder.url("/x"))
        // A streamed response's fields are parsed on the loop thread, a buffered one's by the caller.
        request.streamsResponseBody = streams
        let response = try await CurlDispatcher().dispatch(request, context: RequestContext())
        #expect(response.headers["X-Name"] == "caf\u{E9}")
        #expect(response.headers["X-Name"].map { Array($0.unicodeScalars.map(\.value)) } == [0x63, 0x61, 0x66, 0xE9])
        #expect(response.headers["X-Utf8"] == "caf\u{E9}")
        #expect(response.headers["X-Fold"] == "a \u{FC}\u{DF}")
        if let stream = response.bodyStream {
            for try await _ in stream {}
        }
    }
}

/// The libcurl dispatcher's own headers.
@Suite("libcurl request headers")
struct CurlRequestHeaderTests {
    @Test func theConfiguredUserAgentGoesUnlessTheRequestSetsItsOwn() async throws {
        let dispatcher = CurlDispatcher(configuration: .init(userAgent: "HouseHunter/2.0"))
        try await withTestServer { server in
            let plain = try await dispatcher.dispatch(makeRequest(server.url("/echo")), context: RequestContext())
            #expect(try decodeEcho(plain).headers["user-agent"] == "HouseHunter/2.0")
            let own = try await dispatcher.dispatch(
                makeRequest(server.url("/echo"), headers: ["User-Agent": "Mine/1"]), context: RequestContext())
            #expect(try decodeEcho(own).headers["user-agent"] == "Mine/1")
        }
    }
}

@Suite("libcurl header reading")
struct CurlHeaderReadingTests {
    /// The loop reads `Content-Length` over the bytes (to size the body buffer, and to refuse a
    /// head that does not say where the body ends); any other line is not one.
    @Test(
        arguments: [
            ("Content-Length: 42", .length(42)), ("content-LENGTH:7", .length(7)), ("Content-Length:\t 300 ", .length(300)),
            ("Content-Length: 5, 5", .length(5)), ("Content-Length: 5,", .length(5)), ("Content-Length: 0", .length(0)),
            ("Content-Type: text/plain", .otherField), ("Content_Length: 5", .otherField), ("Content-Length; 5", .otherField),
            ("Content-Lengths: 5", .otherField), ("Content-Length: abc", .invalid), ("Content-Length: ", .invalid),
            ("Content-Length:", .invalid), ("Content-Length: 5 6", .invalid), ("Content-Length: 5, 11", .invalid),
            ("Content-Length: -5", .invalid), ("Content-Length: +5", .invalid), ("Content-Length: 0x10", .invalid),
            ("Content-Length: 99999999999999999999999", .invalid), ("Content-Length: 9223372036854775807", .length(Int.max)),
        ] as [(String, CurlTransfer.LengthField)])
    func contentLength(line: String, expected: CurlTransfer.LengthField) {
        let bytes = Array(line.utf8)
        #expect(CurlTransfer.contentLength(bytes.span) == expected)
    }
}
