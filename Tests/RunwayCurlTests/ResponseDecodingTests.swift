import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import TestHelpers
import Testing

/// Who inflates a compressed response in ``CurlDispatcher``: the awaiting task (the default) or
/// the loop thread as the body arrives. Both must give the caller the same decoded body and the
/// same typed errors.
@Suite("libcurl response decoding")
struct ResponseDecodingTests {
    static let modes: [CurlDispatcher.Configuration.ResponseDecoding] = [.awaitingTask, .loopThread]

    private func dispatcher(_ mode: CurlDispatcher.Configuration.ResponseDecoding) -> CurlDispatcher {
        CurlDispatcher(configuration: .init(responseDecoding: mode))
    }

    private func send(_ dispatcher: CurlDispatcher, _ request: Request) async throws -> Response {
        try await dispatcher.dispatch(request, context: RequestContext())
    }

    @Test("every form a server sends is decoded to the same bytes", arguments: modes)
    func forms(_ mode: CurlDispatcher.Configuration.ResponseDecoding) async throws {
        let dispatcher = dispatcher(mode)
        try await withTestServer { server in
            for form in ["gzip", "x-gzip", "deflate", "raw-deflate", "gzip-twice"] {
                let response = try await send(dispatcher, makeRequest(server.url("/encoded/150000?as=\(form)")))
                #expect(response.status == 200, "\(form)")
                #expect(response.body == DeterministicBytes.data(count: 150_000), "\(form)")
                // Headers stay as the server sent them, whoever decoded.
                #expect(response.headers["Content-Encoding"] != nil, "\(form)")
            }
            let empty = try await send(dispatcher, makeRequest(server.url("/encoded/0?as=empty")))
            #expect(empty.status == 200)
            #expect(empty.body.isEmpty)
        }
    }

    @Test("over HTTP/2 too", arguments: modes)
    func http2(_ mode: CurlDispatcher.Configuration.ResponseDecoding) async throws {
        let pki = try await TestPKI.load()
        let dispatcher = dispatcher(mode)
        try await withTestServer(tls: pki.server, http2: true) { server in
            for form in ["gzip", "deflate"] {
                let request = makeRequest(server.url("/encoded/80000?as=\(form)")) {
                    $0.tls.certificateAuthorities = .file(pki.caCertificatePath)
                }
                let response = try await send(dispatcher, request)
                #expect(response.metrics.httpVersion == "2")
                #expect(response.body == DeterministicBytes.data(count: 80_000), "\(form)")
            }
        }
    }

    @Test("a corrupt, truncated or unrequested encoding is .responseInvalid", arguments: modes)
    func badBodies(_ mode: CurlDispatcher.Configuration.ResponseDecoding) async throws {
        let dispatcher = dispatcher(mode)
        try await withTestServer { server in
            for form in ["corrupt", "truncated", "br"] {
                let request = makeRequest(server.url("/encoded/100000?as=\(form)"))
                let error = await runwayError { try await send(dispatcher, request) }
                #expect(error?.code == .responseInvalid, "\(form): \(String(describing: error))")
                if mode == .awaitingTask {
                    #expect(error?.response?.status == 200, "\(form): the response is kept")
                }
            }
            // The dispatcher is fine afterwards.
            let response = try await send(dispatcher, makeRequest(server.url("/encoded/1000")))
            #expect(response.body == DeterministicBytes.data(count: 1000))
        }
    }

    @Test("a cut or corrupt zlib-wrapped deflate body says what is wrong with it, whoever inflates", arguments: modes)
    func badDeflateSaysWhy(_ mode: CurlDispatcher.Configuration.ResponseDecoding) async throws {
        let dispatcher = dispatcher(mode)
        try await withTestServer { server in
            for (form, words) in [("deflate-truncated", "truncated"), ("deflate-bad-check", "incorrect data check")] {
                let error = await runwayError { try await send(dispatcher, makeRequest(server.url("/encoded/100000?as=\(form)"))) }
                #expect(error?.code == .responseInvalid, "\(form): \(String(describing: error))")
                // Not what a second try as raw deflate makes of the zlib header.
                #expect(error?.message.contains(words) == true, "\(form): \(String(describing: error))")
            }
        }
    }

    @Test("the limit counts decoded bytes: a bomb stops there, a body at the limit passes", arguments: modes)
    func limit(_ mode: CurlDispatcher.Configuration.ResponseDecoding) async throws {
        let dispatcher = dispatcher(mode)
        try await withTestServer { server in
            let bomb = makeRequest(server.url("/gzip-bomb/64")) { $0.maxResponseSize = 4 << 20 }
            let error = await runwayError { try await send(dispatcher, bomb) }
            #expect(error?.code == .responseTooLarge)

            let atLimit = makeRequest(server.url("/encoded/65536?as=deflate")) { $0.maxResponseSize = 65536 }
            let passed = try await send(dispatcher, atLimit)
            #expect(passed.body.count == 65536)
            let overLimit = makeRequest(server.url("/encoded/65537?as=deflate")) { $0.maxResponseSize = 65536 }
            #expect(await runwayError { try await send(dispatcher, overLimit) }?.code == .responseTooLarge)
        }
    }

    @Test("what is asked for: gzip and deflate, whoever inflates, or nothing")
    func acceptEncoding() async throws {
        try await withTestServer { server in
            for mode in Self.modes {
                let echo = try decodeEcho(try await send(dispatcher(mode), makeRequest(server.url("/echo"))))
                #expect(echo.headers["accept-encoding"] == "gzip, deflate", "\(mode)")
            }

            let off = makeRequest(server.url("/echo")) { $0.acceptCompressedResponses = false }
            #expect(try decodeEcho(try await send(dispatcher(.awaitingTask), off)).headers["accept-encoding"] == nil)
        }
    }

    @Test("a caller's own Accept-Encoding is sent, and what Runway decodes still comes back decoded", arguments: modes)
    func callersOwnHeader(_ mode: CurlDispatcher.Configuration.ResponseDecoding) async throws {
        try await withTestServer { server in
            let sent = makeRequest(server.url("/echo"), headers: ["Accept-Encoding": "gzip;q=1.0"])
            #expect(try decodeEcho(try await send(dispatcher(mode), sent)).headers["accept-encoding"] == "gzip;q=1.0")
            let request = makeRequest(server.url("/encoded/5000?as=gzip"), headers: ["Accept-Encoding": "gzip"])
            let response = try await send(dispatcher(mode), request)
            #expect(response.body == DeterministicBytes.data(count: 5000))
            // Turned off: the body as sent, for a caller that inflates it itself.
            let off = makeRequest(server.url("/encoded/5000?as=gzip"), headers: ["Accept-Encoding": "gzip"]) {
                $0.acceptCompressedResponses = false
            }
            let raw = try await send(dispatcher(mode), off)
            #expect(raw.body.starts(with: [0x1F, 0x8B]))
            #expect(raw.headers["Content-Encoding"] == "gzip")
        }
    }

    @Test("an encoding the caller asked for and Runway does not decode comes back as sent", arguments: modes)
    func callersOwnUnknownEncoding(_ mode: CurlDispatcher.Configuration.ResponseDecoding) async throws {
        try await withTestServer { server in
            let request = makeRequest(server.url("/encoded/10?as=br"), headers: ["Accept-Encoding": "br"])
            let response = try await send(dispatcher(mode), request)
            #expect(response.body == Data("these bytes are not brotli".utf8))
            #expect(response.headers["Content-Encoding"] == "br")
        }
    }

    @Test(
        "downloads to a file are decoded as they arrive, in every form",
        arguments: ["gzip", "x-gzip", "deflate", "raw-deflate", "gzip-twice"])
    func download(_ form: String) async throws {
        try await withTestServer { server in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("runway-decoding-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            var request = makeRequest(server.url("/encoded/700000?as=\(form)"))
            request.download = DownloadTarget(file: directory.appendingPathComponent("body"))
            let response = try await send(dispatcher(.awaitingTask), request)
            let file = try #require(response.fileURL)
            #expect(try Data(contentsOf: file) == DeterministicBytes.data(count: 700_000))
        }
    }

    @Test(
        "a download whose encoded body is truncated or corrupt fails and leaves no file, final or partial",
        arguments: [
            "truncated", "corrupt", "br",
        ])
    func badDownload(_ form: String) async throws {
        try await withTestServer { server in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("runway-decoding-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            var request = makeRequest(server.url("/encoded/100000?as=\(form)"))
            let target = DownloadTarget(file: directory.appendingPathComponent("body"))
            request.download = target
            let error = await runwayError { try await send(dispatcher(.awaitingTask), request) }
            #expect(error?.code == .responseInvalid, "\(String(describing: error))")
            #expect(!FileManager.default.fileExists(atPath: target.file.path))
            #expect(!FileManager.default.fileExists(atPath: target.partialFile.path))
        }
    }
}
