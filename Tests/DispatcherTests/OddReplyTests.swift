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
    /// The loop reads `Content-Length` over the bytes (to size the body buffer); anything else is not one.
    @Test(
        arguments: [
            ("Content-Length: 42", 42), ("content-LENGTH:7", 7), ("Content-Length:\t 300 ", 300),
            ("Content-Type: text/plain", nil), ("Content-Length: abc", nil), ("Content-Length: ", nil),
            ("Content_Length: 5", nil), ("Content-Length; 5", nil), ("Content-Lengths: 5", nil),
        ] as [(String, Int?)])
    func contentLength(line: String, expected: Int?) {
        let bytes = Array(line.utf8)
        #expect(bytes.withUnsafeBytes { CurlTransfer.contentLength($0) } == expected)
    }
}
