import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import TestHelpers
import Testing

/// Streamed response bodies through `CurlDispatcher`, against real servers on 127.0.0.1.
@Suite("Streaming responses: libcurl")
struct StreamingTests {
    /// A GET for `url` whose body is streamed.
    static func streamed(_ url: URL, configure: (inout RequestOptions) -> Void = { _ in }) -> Request {
        var request = makeRequest(url, configure: configure)
        request.streamsResponseBody = true
        return request
    }

    /// Reads the whole stream.
    static func collect(_ stream: ResponseBodyStream?) async throws(RunwayError) -> Data {
        guard let stream else { throw RunwayError(.responseInvalid, "no body stream") }
        var body = Data()
        for try await chunk in stream { body.append(chunk) }
        return body
    }

    /// The error that reading `stream` to its end throws, if any.
    static func readingError(_ stream: ResponseBodyStream?) async -> RunwayError? {
        do {
            _ = try await collect(stream)
            return nil
        } catch {
            return error
        }
    }

    @Test("the call returns with the head while the server still holds the body back")
    func headBeforeBody() async throws {
        let gate = Gate()
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: StreamingRoutes.routes(gate: gate)) { server in
            // The server sends the body once the gate opens: here, after the head is in. A
            // dispatcher that waited for the body would get it only when the safety net opens the
            // gate, and fail the test instead of hanging it.
            let safetyNet = gate.open(after: .seconds(120))
            defer { safetyNet.cancel() }
            let response = try await dispatcher.dispatch(Self.streamed(server.url("/held")), context: RequestContext())
            #expect(!gate.isOpened, "the call returned only once the body could come")
            #expect(response.status == 200)
            #expect(response.headers["Cache-Control"] == "no-store")
            #expect(response.body.isEmpty)
            gate.open()
            #expect(try await Self.collect(response.bodyStream) == Data("done".utf8))
        }
    }

    @Test("chunks arrive in order and equal the server's bytes (Content-Length)", arguments: [0, 1, 65_537, 3_000_000])
    func contentLengthBodies(_ size: Int) async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer { server in
            let response = try await dispatcher.dispatch(Self.streamed(server.url("/bytes/\(size)")), context: RequestContext())
            #expect(response.status == 200)
            let body = try await Self.collect(response.bodyStream)
            #expect(body.count == size)
            #expect(body == DeterministicBytes.data(count: size))
        }
    }

    @Test("chunks arrive in order and equal the server's bytes (chunked)", arguments: [0, 5, 70_000, 2_000_000])
    func chunkedBodies(_ size: Int) async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: StreamingRoutes.routes(gate: Gate())) { server in
            let response = try await dispatcher.dispatch(Self.streamed(server.url("/chunked/\(size)")), context: RequestContext())
            #expect(response.headers["Content-Length"] == nil)
            let body = try await Self.collect(response.bodyStream)
            #expect(body == DeterministicBytes.data(count: size))
        }
    }

    @Test("a connection reset mid-body ends the iteration with .connectionLost, after the bytes that came")
    func resetMidBody() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer { server in
            let response = try await dispatcher.dispatch(Self.streamed(server.url("/reset")), context: RequestContext())
            #expect(response.status == 200)
            var received = 0
            var failure: RunwayError?
            do {
                for try await chunk in response.bodyStream! { received += chunk.count }
            } catch {
                failure = error as? RunwayError
            }
            #expect(failure?.code == .connectionLost)
            #expect(received <= 1000)
        }
    }

    @Test("a chunked body cut by a clean close ends with .connectionLost, never a short body")
    func chunkedBodyCut() async throws {
        let responder = try ScriptedResponder { _ in
            .replyAndClose(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n".utf8))
        }
        defer { responder.stop() }
        // The dispatcher outlives the read: releasing it shuts its loop down, which ends a
        // transfer still running as `.cancelled` ("the dispatcher was shut down").
        let dispatcher = CurlDispatcher()
        let response = try await dispatcher.dispatch(Self.streamed(responder.url("/cut")), context: RequestContext())
        let error = await Self.readingError(response.bodyStream)
        #expect(error?.code == .connectionLost, "\(String(describing: error))")
        withExtendedLifetime(dispatcher) {}
    }

    @Test("a total timeout mid-body ends the iteration with .timeout")
    func timeoutMidBody() async throws {
        let gate = Gate()
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: StreamingRoutes.routes(gate: gate)) { server in
            defer { gate.open() }
            // `/held` sends its head at once and its body never (until the gate opens, at the
            // end), so the timeout ends the body. The head must come before the timeout, which a
            // busy machine can delay past a short one: each longer timeout is tried in turn.
            var readingError: RunwayError?
            for timeout in [Duration.milliseconds(400), .seconds(5), .seconds(60)] where readingError == nil {
                let request = Self.streamed(server.url("/held")) { $0.timeout = timeout }
                do {
                    let response = try await dispatcher.dispatch(request, context: RequestContext())
                    readingError = await Self.readingError(response.bodyStream)
                    #expect(readingError?.code == .timeout, "\(String(describing: readingError))")
                } catch {
                    // The head came too late for this timeout.
                    #expect((error as? RunwayError)?.code == .timeout, "\(error)")
                }
            }
            #expect(readingError != nil, "no head came within even the longest timeout")
        }
    }

    @Test("cancelling the reading task aborts the transfer, and the server sees it")
    func consumerCancellation() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer { server in
            let response = try await dispatcher.dispatch(Self.streamed(server.url("/slow?ms=600000")), context: RequestContext())
            let stream = try #require(response.bodyStream)
            let received = Counter()
            let reader = Task { () async throws(RunwayError) -> Int in
                for try await chunk in stream { received.add(chunk.count) }
                return received.value
            }
            // Cancelled while it reads.
            #expect(await eventually { received.value > 0 })
            reader.cancel()
            let result = await reader.result
            #expect(throws: RunwayError.self) { try result.get() }
            if case .failure(let error) = result { #expect((error as? RunwayError)?.code == .cancelled) }
            #expect(await server.waitForAbort())
            #expect(server.stats.aborts(path: "/slow") == 1)
        }
    }

    @Test("a cancelled reader stops at its next chunk, though chunks are buffered, and reads nothing more")
    func cancelledReaderWithChunksBuffered() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer { server in
            let response = try await dispatcher.dispatch(Self.streamed(server.url("/bytes/3000000")), context: RequestContext())
            let stream = try #require(response.bodyStream)
            let afterCancel = Counter()
            let reader = Task { () async throws(RunwayError) -> Int in
                var iterator = stream.makeAsyncIterator()
                _ = try await iterator.next()
                // Meanwhile the transfer fills the stream's buffer (1 MiB) from the connection.
                try? await Task.sleep(for: .milliseconds(300))
                withUnsafeCurrentTask { $0?.cancel() }
                while let chunk = try await iterator.next() { afterCancel.add(chunk.count) }
                return afterCancel.value
            }
            let result = await reader.result
            #expect(throws: RunwayError.self) { try result.get() }
            if case .failure(let error) = result { #expect((error as? RunwayError)?.code == .cancelled, "\(error)") }
            #expect(afterCancel.value == 0, "the cancelled reader still got \(afterCancel.value) bytes")
        }
    }

    @Test("dropping a streamed response unread aborts the transfer, and the server sees it")
    func droppedStream() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer { server in
            var response: Response? = try await dispatcher.dispatch(
                Self.streamed(server.url("/slow?ms=600000")), context: RequestContext())
            #expect(response?.status == 200)
            response = nil
            #expect(await server.waitForAbort())
            #expect(server.stats.aborts(path: "/slow") == 1)
        }
    }

    @Test("breaking out of the loop early aborts the transfer")
    func brokenLoop() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer { server in
            let response = try await dispatcher.dispatch(Self.streamed(server.url("/slow?ms=600000")), context: RequestContext())
            for try await chunk in response.bodyStream! where !chunk.isEmpty { break }
            #expect(await server.waitForAbort())
        }
    }

    @Test("a second iteration throws .configuration; the first is unharmed")
    func doubleIteration() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer { server in
            let response = try await dispatcher.dispatch(Self.streamed(server.url("/bytes/1000")), context: RequestContext())
            let stream = try #require(response.bodyStream)
            var first = stream.makeAsyncIterator()
            var second = stream.makeAsyncIterator()
            await #expect(throws: RunwayError.self) { _ = try await second.next() }
            do {
                _ = try await second.next()
            } catch let error as RunwayError {
                #expect(error.code == .configuration)
                #expect(error.message.contains("read once"))
            }
            var body = Data()
            while let chunk = try await first.next() { body.append(chunk) }
            #expect(body == DeterministicBytes.data(count: 1000))
            // Read to its end: a third iteration is refused too.
            #expect(await Self.readingError(stream)?.code == .configuration)
        }
    }

    @Test("a slow reader pauses the transfer (the client takes nothing more from the connection) and it then resumes to completion")
    func slowReaderPausesTheTransfer() async throws {
        let size = 48 << 20
        let sent = Counter()
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: StreamingRoutes.counted(size: size, sent: sent)) { server in
            // libcurl's download count: the bytes the client has taken from the connection.
            var request = Self.streamed(server.url("/counted"))
            let (progress, reporter) = TransferProgress.makeStream(bufferingNewest: 1)
            request.progress = reporter
            let taken = Counter()
            let watcher = Task {
                for await report in progress { taken.add(Int(report.bytesReceived) - taken.value) }
            }
            defer { watcher.cancel() }
            let response = try await dispatcher.dispatch(request, context: RequestContext())
            let stream = try #require(response.bodyStream)
            var iterator = stream.makeAsyncIterator()
            let first = try #require(try await iterator.next())
            // The reader takes nothing for a while: the client fills the stream's 1 MiB buffer,
            // pauses the transfer and takes no more from the connection. Not paused, it would
            // take the whole body (48 MiB at once on loopback: the server is not held back).
            // What the server has sent meanwhile says nothing of the client: the kernel's and
            // the test server's own buffers hold tens of MiB on some machines.
            let intake = await settled { taken.value }
            #expect(intake < 4 << 20, "the client took \(intake) bytes while its reader took \(first.count)")
            var received = first.count
            var matches = first == DeterministicBytes.data(count: first.count)
            while let chunk = try await iterator.next() {
                if matches, received < 8 << 20 { matches = chunk == DeterministicBytes.data(count: chunk.count, offset: received) }
                received += chunk.count
            }
            #expect(received == size)
            #expect(matches)
        }
    }

    @Test("over HTTP/2 a slow reader pauses its stream, and a second stream on the connection goes on meanwhile")
    func http2() async throws {
        let pki = try await TestPKI.load()
        let size = 8 << 20
        let sent = Counter()
        let dispatcher = CurlDispatcher()
        try await withTestServer(tls: pki.server, routes: StreamingRoutes.counted(size: size, sent: sent)) { server in
            let request = Self.streamed(server.url("/counted")) { $0.tls.certificateAuthorities = .file(pki.caCertificatePath) }
            let response = try await dispatcher.dispatch(request, context: RequestContext())
            #expect(response.metrics.httpVersion == "2")
            var iterator = try #require(response.bodyStream).makeAsyncIterator()
            var received = try #require(try await iterator.next()).count
            // The reader takes nothing: once the server has sent what the stream's window lets
            // it, the paused stream must not hold the connection up.
            _ = await settled { sent.value }
            let other = makeRequest(server.url("/json")) { $0.tls.certificateAuthorities = .file(pki.caCertificatePath) }
            #expect(try await dispatcher.dispatch(other, context: RequestContext()).status == 200)
            var matches = true
            while let chunk = try await iterator.next() {
                if matches { matches = chunk == DeterministicBytes.data(count: chunk.count, offset: received) }
                received += chunk.count
            }
            #expect(received == size)
            #expect(matches)
            #expect(server.stats.http2Requests == 2)
            #expect(server.stats.connectionsAccepted == 1)
        }
    }

    @Test("a redirect is followed before the head is handed over")
    func redirectThenStream() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer { server in
            let request = Self.streamed(server.url("/redirect/2")) { $0.redirects = .follow() }
            let response = try await dispatcher.dispatch(request, context: RequestContext())
            #expect(response.status == 200)
            #expect(response.metrics.redirectCount == 2)
            #expect(try await Self.collect(response.bodyStream) == Data(#"{"redirects":"done"}"#.utf8))
        }
    }

    @Test("a streamed request asks for identity encoding, unless it sets Accept-Encoding itself")
    func identityEncoding() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer { server in
            let plain = try await dispatcher.dispatch(Self.streamed(server.url("/echo")), context: RequestContext())
            let echoed = try JSONDecoder().decode(EchoResponse.self, from: try await Self.collect(plain.bodyStream))
            #expect(echoed.headers["accept-encoding"] == "identity")
            var own = Self.streamed(server.url("/gzip/5000"))
            own.headers["Accept-Encoding"] = "gzip"
            let gzipped = try await dispatcher.dispatch(own, context: RequestContext())
            #expect(gzipped.headers["Content-Encoding"] == "gzip")
            let bytes = try await Self.collect(gzipped.bodyStream)
            // As sent: the gzip stream's magic number, not the decoded bytes.
            #expect(bytes.prefix(2) == Data([0x1F, 0x8B]))
        }
    }

    @Test("maxResponseSize does not bound a streamed body")
    func noSizeLimit() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer { server in
            let request = Self.streamed(server.url("/bytes/200000")) { $0.maxResponseSize = 1000 }
            let response = try await dispatcher.dispatch(request, context: RequestContext())
            #expect(try await Self.collect(response.bodyStream).count == 200_000)
        }
    }

    @Test("streaming and a download together are refused with .configuration before any I/O")
    func streamAndDownload() async throws {
        var request = Self.streamed(URL(string: "http://127.0.0.1:9/never")!)
        request.download = DownloadTarget(file: FileManager.default.temporaryDirectory.appendingPathComponent("never"))
        let error = await runwayError { try await CurlDispatcher().dispatch(request, context: RequestContext()) }
        #expect(error?.code == .configuration)
        #expect(error?.field == "streamsResponseBody")
    }
}
