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
        #expect(bytes.withUnsafeBytes { CurlTransfer.contentLength($0) } == expected)
    }
}
