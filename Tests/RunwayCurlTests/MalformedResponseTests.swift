import Foundation
import Runway
import RunwayCompression
import RunwayCurl
import RunwayTestServer
import TestHelpers
import Testing

/// Responses whose head or encoding does not describe their body faithfully, from a raw socket:
/// each is read as sent or refused with `.responseInvalid`, never a success with other bytes.
@Suite("libcurl: malformed responses")
struct MalformedResponseTests {
    static let modes: [CurlDispatcher.Configuration.ResponseDecoding] = [.awaitingTask, .loopThread]

    /// What `CurlDispatcher` makes of `reply` (then `extra`, the body's bytes), sent to a GET.
    private func send(
        _ reply: String, extra: [UInt8] = [], mode: CurlDispatcher.Configuration.ResponseDecoding = .awaitingTask
    ) async throws -> Response {
        let responder = try RawResponder(reply, extra: extra)
        defer { responder.stop() }
        let dispatcher = CurlDispatcher(configuration: .init(responseDecoding: mode))
        return try await dispatcher.dispatch(makeRequest(responder.url("/x")), context: RequestContext())
    }

    private static func gzip(_ text: String) throws -> [UInt8] {
        Array(try Gzip.compress(Data(text.utf8)))
    }

    @Test("a field line that begins with HTTP/ is a field, not the start of another response", arguments: modes)
    func httpPrefixedField(_ mode: CurlDispatcher.Configuration.ResponseDecoding) async throws {
        let body = try Self.gzip("the whole body, decoded")
        let response = try await send(
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nX-Before: 1\r\nHTTP/2: y\r\n"
                + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n",
            extra: body, mode: mode)
        #expect(response.status == 200)
        #expect(response.body == Data("the whole body, decoded".utf8))
        #expect(response.headers["X-Before"] == "1")
        #expect(response.headers["HTTP/2"] == "y")
        #expect(response.headers["Content-Encoding"] == "gzip")
    }

    /// libcurl 7.88 reads each as a status line, a 200 from HTTP/1.0, and Runway's checks of the
    /// head would not run.
    @Test(
        "a status line whose protocol name is not HTTP in capitals is .responseInvalid",
        arguments: [
            "http/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\nerror", "Http/1.1 500 Oops\r\nContent-Length: 5\r\n\r\nerror",
            "http/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            "HTTP/1.1 100 Continue\r\n\r\nhttp/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\nerror",
        ])
    func statusLineNotHTTP(_ reply: String) async throws {
        let error = await runwayError { try await send(reply) }
        #expect(error?.code == .responseInvalid, "\(String(describing: error))")
        #expect(error?.message.contains("not an HTTP status line") == true, "\(String(describing: error))")
    }

    @Test(
        "a status line of HTTP/2 on an HTTP/1.1 connection is .responseInvalid",
        arguments: ["HTTP/2 200\r\nContent-Length: 2\r\n\r\nok", "HTTP/2.0 404 Not Found\r\nContent-Length: 2\r\n\r\nno"])
    func http2StatusLineOverHTTP1(_ reply: String) async throws {
        let error = await runwayError { try await send(reply) }
        #expect(error?.code == .responseInvalid, "\(String(describing: error))")
        #expect(error?.message.contains("another version than the connection's HTTP/1.1") == true, "\(String(describing: error))")
    }

    @Test("repeated Content-Encoding fields are all undone, the last one first", arguments: modes)
    func repeatedEncodingFields(_ mode: CurlDispatcher.Configuration.ResponseDecoding) async throws {
        let body = Array(try Gzip.compress(Gzip.compress(Data("encoded twice".utf8))))
        let response = try await send(
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nX-Between: 1\r\nContent-Encoding: gzip\r\n"
                + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n",
            extra: body, mode: mode)
        #expect(response.body == Data("encoded twice".utf8))
    }

    @Test("every member of a multi-member gzip body is decoded", arguments: modes)
    func multiMemberGzip(_ mode: CurlDispatcher.Configuration.ResponseDecoding) async throws {
        let body = try Self.gzip("first member; ") + Self.gzip("second member")
        let response = try await send(
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n",
            extra: body, mode: mode)
        #expect(response.body == Data("first member; second member".utf8))
    }

    @Test("bytes after the end of the compressed body are .responseInvalid, never dropped", arguments: modes)
    func bytesAfterTheCompressedBody(_ mode: CurlDispatcher.Configuration.ResponseDecoding) async throws {
        let body = try Self.gzip("payload") + Array("GARBAGE-AFTER-STREAM".utf8)
        let error = await runwayError {
            try await send(
                "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n",
                extra: body, mode: mode)
        }
        #expect(error?.code == .responseInvalid)
    }

    @Test(
        "a Content-Length that is not one length is .responseInvalid",
        arguments: [
            "Content-Length: 5\r\nContent-Length: 10", "Content-Length: 5 6", "Content-Length: 5, 11",
            "Content-Length: 99999999999999999999999", "Content-Length: abc", "Content-Length: -5",
        ])
    func badContentLength(_ fields: String) async throws {
        let error = await runwayError {
            try await send("HTTP/1.1 200 OK\r\n\(fields)\r\nConnection: close\r\n\r\nhello12345 and more")
        }
        #expect(error?.code == .responseInvalid, "\(fields)")
    }

    @Test(
        "a Content-Length or Transfer-Encoding with blanks before its colon is .responseInvalid, not a body framed without it",
        arguments: [
            "Content-Length : 2\r\nConnection: close\r\n\r\nokEXTRA", "transfer-encoding\t: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
            "CONTENT-LENGTH \t : 2\r\nConnection: close\r\n\r\nokEXTRA",
        ])
    func framingFieldWithBlankBeforeColon(_ rest: String) async throws {
        let error = await runwayError { try await send("HTTP/1.1 200 OK\r\n" + rest) }
        #expect(error?.code == .responseInvalid, "\(String(describing: error))")
        #expect(error?.message.contains("blanks before its colon") == true, "\(String(describing: error))")
        // Any other field is read without the blanks, as before.
        let response = try await send("HTTP/1.1 200 OK\r\nContent-Type : text/plain\r\nContent-Length: 2\r\n\r\nok")
        #expect(response.headers["Content-Type"] == "text/plain")
        #expect(response.body == Data("ok".utf8))
    }

    @Test(
        "a Content-Length or Transfer-Encoding continued on a folded line is .responseInvalid, not a body framed by its first line",
        arguments: [
            "Transfer-Encoding:\r\n chunked\r\nConnection: close\r\n\r\n2\r\nok\r\n0\r\n\r\n",
            "Transfer-Encoding: chunked\r\n , gzip\r\n\r\n2\r\nok\r\n0\r\n\r\n",
            "Content-Length: 2\r\n\t7\r\nConnection: close\r\n\r\nokEXTRA",
        ], modes)
    func foldedFramingField(_ rest: String, mode: CurlDispatcher.Configuration.ResponseDecoding) async throws {
        let error = await runwayError { try await send("HTTP/1.1 200 OK\r\n" + rest, mode: mode) }
        #expect(error?.code == .responseInvalid, "\(String(describing: error))")
        #expect(error?.message.contains("folded line") == true, "\(String(describing: error))")
        // A folded line continuing another field is read into it, as before.
        let response = try await send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Fold: a\r\n b\r\n\r\nok", mode: mode)
        #expect(response.headers["X-Fold"] == "a b")
        #expect(response.body == Data("ok".utf8))
    }

    @Test(
        "a Content-Encoding with blanks before its colon, or folded, is decoded on the loop as on the awaiting task",
        arguments: ["Content-Encoding : gzip\r\n", "content-encoding\t:gzip\r\n", "Content-Encoding:\r\n gzip\r\n"], modes)
    func unusualContentEncodingLine(_ field: String, mode: CurlDispatcher.Configuration.ResponseDecoding) async throws {
        let body = try Self.gzip("hello world, decoded")
        let response = try await send(
            "HTTP/1.1 200 OK\r\n\(field)Content-Length: \(body.count)\r\nConnection: close\r\n\r\n", extra: body, mode: mode)
        #expect(response.headers["Content-Encoding"] == "gzip")
        #expect(response.body == Data("hello world, decoded".utf8))
        // A coding Runway does not decode, written so, is refused, not handed over as the body.
        let error = await runwayError {
            try await send("HTTP/1.1 200 OK\r\nContent-Encoding : br\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", mode: mode)
        }
        #expect(error?.code == .responseInvalid, "\(String(describing: error))")
    }

    @Test("a download whose Content-Encoding has blanks before its colon, or is folded, is decoded into its file")
    func unusualContentEncodingLineInDownload() async throws {
        let body = try Self.gzip("hello world, decoded")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("runway-malformed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (index, field) in ["Content-Encoding : gzip\r\n", "Content-Encoding:\r\n gzip\r\n"].enumerated() {
            let responder = try RawResponder(
                "HTTP/1.1 200 OK\r\n\(field)Content-Length: \(body.count)\r\nConnection: close\r\n\r\n", extra: body)
            defer { responder.stop() }
            var request = makeRequest(responder.url("/x"))
            request.download = DownloadTarget(file: directory.appendingPathComponent("body-\(index)"))
            let response = try await CurlDispatcher().dispatch(request, context: RequestContext())
            let file = try #require(response.fileURL)
            #expect(try Data(contentsOf: file) == Data("hello world, decoded".utf8), "\(field)")
        }
    }

    @Test(
        "a followed redirect whose Location is not a URL is .responseInvalid: the server's fault, not the caller's URL",
        arguments: ["http://[bad", "http://127.0.0.1:99999/"])
    func malformedRedirectLocation(_ location: String) async throws {
        let responder = try RawResponder("HTTP/1.1 302 Found\r\nLocation: \(location)\r\nContent-Length: 0\r\n\r\n")
        defer { responder.stop() }
        let request = makeRequest(responder.url("/x")) { $0.redirects = .follow(max: 3) }
        let error = await runwayError { try await CurlDispatcher().dispatch(request, context: RequestContext()) }
        #expect(error?.code == .responseInvalid, "\(String(describing: error))")
        #expect(error?.message.contains("redirected (302) to a Location that is not a URL") == true, "\(String(describing: error))")
    }

    @Test("one length repeated is that length")
    func repeatedSameLength() async throws {
        let response = try await send("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5, 5\r\n\r\nhello")
        #expect(response.body == Data("hello".utf8))
    }

    @Test(
        "a status outside 100 to 599, or a header line without a colon, is .responseInvalid",
        arguments: [
            "HTTP/1.1 999 High\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 600 X\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nNo colon on this line\r\nContent-Length: 2\r\n\r\nok",
        ])
    func badHead(_ reply: String) async throws {
        let error = await runwayError { try await send(reply) }
        #expect(error?.code == .responseInvalid)
    }

    @Test("a head libcurl refuses says what kind of line it may be, not only libcurl's words")
    func refusedHeadExplains() async throws {
        let error = await runwayError { try await send("HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nhello") }
        #expect(error?.code == .responseInvalid)
        #expect(error?.message.contains("not valid HTTP") == true)
        #expect(error?.message.contains("Content-Length") == true)
    }

    /// libcurl 7.88 appends a folded line (one that begins with a blank) to the last field it
    /// stored, and frees the fields of a handle's last transfer when its next one starts: a reply
    /// whose first field line is folded, on a handle that carried a transfer before, was written
    /// into freed memory and corrupted the heap (the process died within a few such calls).
    @Test("a reply whose first field line is folded is .responseInvalid, after any number of calls on the dispatcher")
    func foldedFirstFieldLine() async throws {
        let responder = try ScriptedResponder { exchange in
            exchange.target.hasPrefix("/fold")
                ? .reply(Array("HTTP/1.1 200 OK\r\n folded-first: x\r\nContent-Length: 7\r\n\r\nOK-BODY".utf8))
                : .reply(Array("HTTP/1.1 200 OK\r\nX-Last: field\r\nContent-Length: 7\r\n\r\nOK-BODY".utf8))
        }
        defer { responder.stop() }
        let dispatcher = CurlDispatcher()
        for _ in 0..<20 {
            let plain = try await dispatcher.dispatch(makeRequest(responder.url("/ok")), context: RequestContext())
            #expect(plain.body == Data("OK-BODY".utf8))
            #expect(plain.headers["X-Last"] == "field")
            let error = await runwayError {
                try await dispatcher.dispatch(makeRequest(responder.url("/fold")), context: RequestContext())
            }
            #expect(error?.code == .responseInvalid)
        }
    }

    @Test("a folded first field line after a followed redirect is .responseInvalid, not a success")
    func foldedFirstFieldLineAfterRedirect() async throws {
        let responder = try ScriptedResponder { exchange in
            exchange.target.hasPrefix("/fold")
                ? .reply(Array("HTTP/1.1 200 OK\r\n folded-first: x\r\nContent-Length: 7\r\n\r\nOK-BODY".utf8))
                : .reply(Array("HTTP/1.1 302 Found\r\nLocation: /fold\r\nContent-Length: 0\r\n\r\n".utf8))
        }
        defer { responder.stop() }
        let dispatcher = CurlDispatcher()
        let error = await runwayError {
            try await dispatcher.dispatch(
                makeRequest(responder.url("/start")) { $0.redirects = .follow(max: 3) }, context: RequestContext())
        }
        #expect(error?.code == .responseInvalid)
        #expect(error?.message.contains("folded") == true)
    }

    @Test("a carriage return inside a field value is read as a space, on the awaiting task and on the loop", arguments: [false, true])
    func bareCarriageReturn(streamed: Bool) async throws {
        let responder = try RawResponder("HTTP/1.1 200 OK\r\nX-Cr: a\rb\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        defer { responder.stop() }
        var request = makeRequest(responder.url("/x"))
        request.streamsResponseBody = streamed
        let response = try await CurlDispatcher().dispatch(request, context: RequestContext())
        #expect(response.headers["X-Cr"] == "a b")
        #expect(response.status == 200)
    }

    @Test("a header line without a field name before its colon is .responseInvalid")
    func fieldWithoutName() async throws {
        let error = await runwayError { try await send("HTTP/1.1 200 OK\r\n: novalue\r\nContent-Length: 2\r\n\r\nok") }
        #expect(error?.code == .responseInvalid)
        #expect(error?.message.contains("no field name") == true)
    }
}
