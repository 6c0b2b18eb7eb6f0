import Foundation
import Runway
import RunwayCompression
import RunwayCurl
import RunwayTestServer
import Testing

/// Compression against the in-process server through libcurl.
@Suite struct CompressionServerTests {
    @Test func aGzipBombIsAResponseTooLargeError() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        var request = Runway.Request(url: server.url("/gzip-bomb/64"))
        request.options.maxResponseSize = 1 << 20
        request.options.acceptCompressedResponses = false

        // Without the interceptor this request takes the ~64 KiB of gzip bytes as they are.
        let raw = try await Pipeline(interceptors: [], dispatcher: CurlDispatcher()).send(request)
        #expect(raw.body.prefix(2) == Data([0x1F, 0x8B]))
        #expect(raw.body.count < 1 << 20)

        // With it, the response is decoded, and the decoded 64 MiB hit the 1 MiB limit.
        await #expect {
            try await Pipeline(interceptors: [try .compression()], dispatcher: CurlDispatcher()).send(request)
        } throws: { ($0 as? RunwayError)?.code == .responseTooLarge }
    }

    @Test func compressedResponsesAreDecodedTransparently() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        let response = try await Pipeline(interceptors: [try .compression()], dispatcher: CurlDispatcher()).send(
            Runway.Request(url: server.url("/gzip/100000")))
        #expect(response.body.count == 100_000)
        #expect(response.headers["X-Uncompressed-Length"] == "100000")
    }

    @Test func theServerReceivesAGzippedBodyThatDecodesToTheOriginal() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        let body = Data(String(repeating: #"{"district":"xuhui","rent":2500},"#, count: 300).utf8)
        let request = Runway.Request(method: .post, url: server.url("/echo"), headers: ["Content-Type": "application/json"], body: body)
        let response = try await Pipeline(interceptors: [try .compression(threshold: 1024)], dispatcher: CurlDispatcher()).send(request)
        let echo = try JSONDecoder().decode(EchoResponse.self, from: response.body)
        #expect(echo.headers["content-encoding"] == "gzip")
        #expect(echo.bodyLength < body.count / 10)
        #expect(try Gzip.decompress(try #require(echo.bodyData), limit: 1 << 20) == body)
        #expect(echo.headers["content-length"] == String(echo.bodyLength))
    }
}
