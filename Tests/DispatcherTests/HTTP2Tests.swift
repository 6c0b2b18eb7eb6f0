import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

/// What an HTTP/2 server may send that libcurl 7.88 mishandles on its own, from a server that
/// writes its frames itself (`Scripts/h2_server.py`).
extension DispatcherSuite {
    /// The server, over TLS with the test CA's certificate; it exits when the test process ends.
    static func startHTTP2Server(_ pki: TestPKI) async throws -> PythonServer {
        try await PythonServer.start(
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/h2_server.py"),
            [pki.server.certificatePath, pki.server.privateKeyPath])
    }

    /// libcurl's HTTP/2 filter reads 32 KiB at a time: the rest of a larger header block (and
    /// the body after it) stayed in its buffers or OpenSSL's, with the socket no longer
    /// readable, and the call waited for its timeout.
    @Test(
        "an HTTP/2 response whose header block is larger than libcurl's 32 KiB buffer arrives at once",
        arguments: DispatcherUnderTest.all(supporting: .http2, .customCA))
    func largeHTTP2HeaderBlock(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let server = try await Self.startHTTP2Server(pki)
        defer { server.stop() }
        let dispatcher = dut.make()
        // One field of 40,000 and one of 60,000 bytes (on a new connection, then on the kept
        // one), 400 fields of 100.
        for (fields, bytes) in [(1, 40_000), (1, 60_000), (400, 100)] {
            let url = URL(string: "https://localhost:\(server.port)/head?fields=\(fields)&bytes=\(bytes)")!
            let request = makeRequest(url) {
                $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                // A stall fails the call with `.timeout`. (Not a wall-clock bound: with the whole
                // suite running, the awaiting task can wait seconds for a thread.)
                $0.timeout = .seconds(30)
                $0.idleTimeout = .seconds(5)
            }
            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 200)
            #expect(response.metrics.httpVersion == "2")
            #expect(response.body == Data("ok".utf8))
            #expect((0..<fields).allSatisfy { response.headers["x-big-\($0)"]?.utf8.count == bytes }, "\(fields) × \(bytes)")
        }
        // nghttp2 refuses a field over 64 KiB, and resets the stream: an error, not a wait.
        let url = URL(string: "https://localhost:\(server.port)/head?fields=1&bytes=70000")!
        let request = makeRequest(url) {
            $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
            $0.timeout = .seconds(30)
        }
        let error = await runwayError { try await dut.send(dispatcher, request) }
        #expect(error?.code == .connectionLost, "\(String(describing: error))")
    }

    /// nghttp2 refuses such a response and ends its stream with PROTOCOL_ERROR, which libcurl
    /// 7.88 reports as a stream error: that is no lost connection, and a retry policy must not
    /// send the request again for it.
    @Test(
        "an HTTP/2 response that breaks the protocol's rules is .responseInvalid, not a lost connection",
        arguments: DispatcherUnderTest.all(supporting: .http2, .customCA))
    func malformedHTTP2Response(_ dut: DispatcherUnderTest) async throws {
        let pki = try await TestPKI.load()
        let server = try await Self.startHTTP2Server(pki)
        defer { server.stop() }
        let dispatcher = dut.make()
        func request(_ path: String) -> Request {
            makeRequest(URL(string: "https://localhost:\(server.port)\(path)")!) {
                $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                $0.timeout = .seconds(30)
            }
        }
        for path in ["/status?s=abc", "/status?s=20", "/fields?X-Upper=1"] {
            let error = await runwayError { try await dut.send(dispatcher, request(path)) }
            #expect(error?.code == .responseInvalid, "\(path): \(String(describing: error))")
        }
        // The stream ended, not the connection: the next request is answered.
        #expect(try await dut.send(dispatcher, request("/status?s=200")).status == 200)
    }
}
