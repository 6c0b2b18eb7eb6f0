import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import RunwayURLSession
import TestHelpers
import Testing

/// Streamed request bodies (`Request.bodyStream`) through `CurlDispatcher`, against the test
/// server on 127.0.0.1, which checks every byte it receives.
@Suite("Streaming request bodies: libcurl")
struct UploadStreamingTests {
    /// `size` bytes of `DeterministicBytes` in chunks of `chunk`, each made when it is asked for
    /// (so `produced` counts what the reader pulled, not what a buffer in between holds).
    struct Chunks: AsyncSequence, Sendable {
        let size: Int
        let chunk: Int
        let produced: Counter?

        struct Iterator: AsyncIteratorProtocol {
            let sequence: Chunks
            var offset = 0

            mutating func next() async -> Data? {
                guard offset < sequence.size else { return nil }
                let count = Swift.min(sequence.chunk, sequence.size - offset)
                defer { offset += count }
                sequence.produced?.add(count)
                return DeterministicBytes.data(count: count, offset: offset)
            }
        }

        func makeAsyncIterator() -> Iterator { Iterator(sequence: self) }
    }

    static func chunks(size: Int, chunk: Int = 50_000, produced: Counter? = nil) -> Chunks {
        Chunks(size: size, chunk: chunk, produced: produced)
    }

    /// A request to `path` on `server` that sends `stream`.
    static func upload(_ server: TestServer, _ stream: RequestBodyStream, path: String = "/sink", method: HTTPMethod = .post) -> Request {
        var request = makeRequest(method, server.url(path))
        request.bodyStream = stream
        request.headers["Content-Type"] = "application/octet-stream"
        return request
    }

    static func report(_ response: Response) throws -> SinkReport {
        try JSONDecoder().decode(SinkReport.self, from: response.body)
    }

    /// A temporary file holding `size` bytes of `DeterministicBytes`.
    static func file(size: Int) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("runway-upload-\(UUID().uuidString)")
        try DeterministicBytes.data(count: size).write(to: url)
        return url
    }

    @Test("a sequence of known length arrives whole, with Content-Length", arguments: [0, 1, 70_000, 3_000_000])
    func knownLength(_ size: Int) async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes()) { server in
            let request = Self.upload(server, .sequence(Self.chunks(size: size), length: size))
            let report = try Self.report(try await dispatcher.dispatch(request, context: RequestContext()))
            #expect(report.received == size)
            #expect(report.matches)
            #expect(report.contentLength == String(size))
            #expect(report.transferEncoding == nil)
            #expect(report.contentType == "application/octet-stream")
        }
    }

    @Test("a sequence of unknown length is sent chunked and arrives whole", arguments: [0, 5, 70_000, 2_000_000])
    func unknownLength(_ size: Int) async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes()) { server in
            let request = Self.upload(server, .sequence(Self.chunks(size: size, chunk: 7_777)), method: .put)
            let report = try Self.report(try await dispatcher.dispatch(request, context: RequestContext()))
            #expect(report.method == "PUT")
            #expect(report.received == size)
            #expect(report.matches)
            #expect(report.contentLength == nil)
            #expect(report.transferEncoding?.lowercased() == "chunked")
        }
    }

    @Test("a file is read as it is sent, with its size as Content-Length", arguments: [0, 65_536, 5_000_001])
    func file(_ size: Int) async throws {
        let url = try Self.file(size: size)
        defer { try? FileManager.default.removeItem(at: url) }
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes()) { server in
            let request = Self.upload(server, try .file(url), method: .patch)
            let report = try Self.report(try await dispatcher.dispatch(request, context: RequestContext()))
            #expect(report.method == "PATCH")
            #expect(report.received == size)
            #expect(report.matches)
            #expect(report.contentLength == String(size))
        }
    }

    @Test("a file reached through a symbolic link is sent as the file it points to")
    func fileThroughALink() async throws {
        let url = try Self.file(size: 100_000)
        let link = url.appendingPathExtension("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        defer {
            try? FileManager.default.removeItem(at: link)
            try? FileManager.default.removeItem(at: url)
        }
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes()) { server in
            let report = try Self.report(try await dispatcher.dispatch(Self.upload(server, try .file(link)), context: RequestContext()))
            #expect(report.received == 100_000)
            #expect(report.matches)
            #expect(report.contentLength == "100000")
        }
    }

    @Test("a file that grew since its body was made fails the call with .fileIO: never sent cut short", arguments: [0, 100_000])
    func fileThatGrew(_ size: Int) async throws {
        let url = try Self.file(size: size)
        defer { try? FileManager.default.removeItem(at: url) }
        let stream = try RequestBodyStream.file(url)
        try DeterministicBytes.data(count: size + 10).write(to: url)
        let completed = Counter()
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes(completed: completed)) { server in
            let error = await runwayError { try await dispatcher.dispatch(Self.upload(server, stream), context: RequestContext()) }
            #expect(error?.code == .fileIO)
            #expect(error?.message.contains("holds more than its \(size) bytes") == true)
            #expect(completed.value == 0)
        }
    }

    /// The upload pauses while its producer has nothing: the idle clock stands meanwhile.
    @Test("the idle clock stands while an upload's producer has nothing yet")
    func aSlowProducerIsNotIdle() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes()) { server in
            // Two chunks with three idle timeouts between them.
            let slow = AsyncStream<Data> { continuation in
                let task = Task {
                    continuation.yield(DeterministicBytes.data(count: 1_000, offset: 0))
                    try? await Task.sleep(for: .milliseconds(3_000))
                    continuation.yield(DeterministicBytes.data(count: 1_000, offset: 1_000))
                    continuation.finish()
                }
                continuation.onTermination = { _ in task.cancel() }
            }
            var request = Self.upload(server, .sequence(slow))
            request.options.timeout = nil
            // Wide enough for a loaded machine's test server to answer once the body is in.
            request.options.idleTimeout = .seconds(1)
            let report = try Self.report(try await dispatcher.dispatch(request, context: RequestContext()))
            #expect(report.received == 2_000)
            #expect(report.matches)
        }
    }

    @Test("a producer slower than the connection: the upload waits for each chunk, then goes on")
    func slowProducer() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes()) { server in
            let slow = AsyncStream<Data> { continuation in
                let task = Task {
                    for index in 0..<20 {
                        try? await Task.sleep(for: .milliseconds(20))
                        continuation.yield(DeterministicBytes.data(count: 1_000, offset: index * 1_000))
                    }
                    continuation.finish()
                }
                continuation.onTermination = { _ in task.cancel() }
            }
            let report = try Self.report(
                try await dispatcher.dispatch(Self.upload(server, .sequence(slow)), context: RequestContext()))
            #expect(report.received == 20_000)
            #expect(report.matches)
        }
    }

    static let slowMinuteChunks = 1_200

    /// A producer that yields 1,000 bytes every 50 ms for a minute (``slowMinuteChunks`` chunks),
    /// unless its reader lets go; `produced` counts the chunks it made.
    static func slowMinute(produced: Counter = Counter()) -> AsyncStream<Data> {
        AsyncStream<Data> { continuation in
            let task = Task {
                for index in 0..<slowMinuteChunks {
                    try? await Task.sleep(for: .milliseconds(50))
                    if Task.isCancelled { break }
                    produced.add(1)
                    continuation.yield(DeterministicBytes.data(count: 1_000, offset: index * 1_000))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    @Test(
        "a server that answers a slow upload early (413) is heard at once, the upload stopped: not after the producer ends",
        arguments: ["close", "close later", "keep-alive"])
    func anEarlyAnswerEndsASlowUpload(_ connection: String) async throws {
        let body = #"{"error":"too large"}"#
        let answer = Array(
            ("HTTP/1.1 413 Content Too Large\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                + (connection == "keep-alive" ? "" : "Connection: close\r\n") + "\r\n" + body).utf8)
        // The responder reads a body by its Content-Length only: a chunked one is left unread, and answered at once.
        let responder = try ScriptedResponder { _ in
            switch connection {
            case "close": .replyAndClose(answer)
            // Says it closes, and holds the connection open (a server that closes once its last write is out).
            case "close later": .replyThenUnasked(answer, after: .seconds(40), unasked: [])
            default: .reply(answer)
            }
        }
        defer { responder.stop() }
        let produced = Counter()
        var request = makeRequest(.put, responder.url("/blob"))
        request.bodyStream = .sequence(Self.slowMinute(produced: produced))
        var options = RequestOptions()
        options.timeout = nil
        request.options = options
        let response = try await CurlDispatcher().dispatch(request, context: RequestContext())
        // Counted in chunks, not seconds: a busy machine slows the producer's sleeps as much as
        // the call's return, so a wall-clock bound would fail there for nothing.
        let madeByTheAnswer = produced.value
        #expect(response.status == 413)
        #expect(String(decoding: response.body, as: UTF8.self) == body)
        #expect(madeByTheAnswer < Self.slowMinuteChunks / 2, "the call waited for the producer")
        #expect(await settled { produced.value } < Self.slowMinuteChunks, "the producer went on after the call ended")
        #expect(responder.exchanges.count == 1)
    }

    @Test("a server that does not read holds the producer back: it runs at most the reader's buffer ahead of what was sent")
    func backpressure() async throws {
        let gate = Gate()
        let produced = Counter()
        let size = 48 << 20
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes(gate: gate)) { server in
            var request = Self.upload(server, .sequence(Self.chunks(size: size, chunk: 64 << 10, produced: produced), length: size))
            request.options.timeout = nil
            // libcurl's upload count: the bytes the client has sent.
            let (progress, reporter) = TransferProgress.makeStream(bufferingNewest: 1)
            request.progress = reporter
            let sent = Counter()
            let watcher = Task {
                for await report in progress { sent.add(Int(report.bytesSent) - sent.value) }
            }
            defer { watcher.cancel() }
            let call = Task { try await dispatcher.dispatch(request, context: RequestContext()) }
            // The server reads nothing: once the connection's buffers are full (the kernel's and
            // the test server's, tens of MiB on some machines) nothing more is sent, and the
            // producer stops once the reader's 256 KiB buffer is full. Unbounded, it would make
            // the whole body meanwhile.
            #expect(await eventually { produced.value > 0 })
            let made = await settled { produced.value }
            let ahead = made - sent.value
            #expect(ahead < 1 << 20, "the producer made \(made) bytes, \(ahead) of them not sent, for a server that reads nothing")
            gate.open()
            let report = try Self.report(try await call.value)
            #expect(report.received == size)
            #expect(report.matches)
        }
    }

    @Test("a sequence that throws fails the call with its error, and the server never gets a whole body")
    func sequenceThrows() async throws {
        struct Broken: Error {}
        let completed = Counter()
        let cut = Counter()
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes(completed: completed, cut: cut)) { server in
            for length in [Int?.none, 200_000] {
                let failing = AsyncThrowingStream<Data, any Error> { continuation in
                    continuation.yield(DeterministicBytes.data(count: 100_000))
                    continuation.finish(throwing: Broken())
                }
                let request = Self.upload(server, .sequence(failing, length: length))
                let error = await runwayError { try await dispatcher.dispatch(request, context: RequestContext()) }
                #expect(error?.code == .invalidRequest)
                #expect(error?.underlying is Broken)
            }
            #expect(await eventually { cut.value == 2 })
            #expect(completed.value == 0)
        }
    }

    @Test("a sequence shorter or longer than its declared length fails the call", arguments: [99_999, 100_001])
    func lengthMismatch(_ declared: Int) async throws {
        let completed = Counter()
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes(completed: completed)) { server in
            let request = Self.upload(server, .sequence(Self.chunks(size: 100_000), length: declared))
            let error = await runwayError { try await dispatcher.dispatch(request, context: RequestContext()) }
            #expect(error?.code == .invalidRequest)
            #expect(error?.field == "bodyStream")
            #expect(completed.value == 0)
        }
    }

    @Test("a sequence declared empty that yields bytes fails the call, and nothing is sent")
    func bytesFromAnEmptyDeclaredSequence() async throws {
        let completed = Counter()
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes(completed: completed)) { server in
            let request = Self.upload(server, .sequence(Self.chunks(size: 1), length: 0))
            let error = await runwayError { try await dispatcher.dispatch(request, context: RequestContext()) }
            #expect(error?.code == .invalidRequest, "\(String(describing: error))")
            #expect(error?.field == "bodyStream")
            #expect(server.stats.totalRequests == 0)
            // Declared empty and empty is an empty body.
            let empty = try await dispatcher.dispatch(
                Self.upload(server, .sequence(Self.chunks(size: 0), length: 0)), context: RequestContext())
            #expect(empty.status == 200)
        }
    }

    /// A sequence that yields nothing and never ends until its reader is cancelled, counting the
    /// times it is asked for a chunk.
    struct Silent: AsyncSequence, Sendable {
        let asked: Counter

        struct Iterator: AsyncIteratorProtocol {
            let asked: Counter

            mutating func next() async throws -> Data? {
                asked.increment()
                try await Gate().waitUnlessCancelled()
                return nil
            }
        }

        func makeAsyncIterator() -> Iterator { Iterator(asked: asked) }
    }

    @Test(
        "cancelling a call whose body is declared empty, or a collect, ends it with .cancelled though the sequence never ends",
        .timeLimit(.minutes(2)))
    func cancelWhileAnEmptyBodyIsRead() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes()) { server in
            let asked = Counter()
            let request = Self.upload(server, .sequence(Silent(asked: asked), length: 0))
            let call = Task { try await dispatcher.dispatch(request, context: RequestContext()) }
            #expect(await eventually { asked.value == 1 })
            call.cancel()
            let error = await runwayError { try await call.value }
            #expect(error?.code == .cancelled, "\(String(describing: error))")
            #expect(server.stats.totalRequests == 0)

            let collectAsked = Counter()
            let collect = Task { try await RequestBodyStream.sequence(Silent(asked: collectAsked)).collect(upTo: 1 << 20) }
            #expect(await eventually { collectAsked.value == 1 })
            collect.cancel()
            let collectError = await #expect(throws: RunwayError.self) { try await collect.value }
            #expect(collectError?.code == .cancelled, "\(String(describing: collectError))")
        }
    }

    @Test("cancelling the call stops reading the sequence and aborts the upload")
    func cancel() async throws {
        let gate = Gate()
        let produced = Counter()
        let cut = Counter()
        let terminated = Counter()
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes(cut: cut)) { server in
            let endless = AsyncStream<Data> { continuation in
                let task = Task {
                    var offset = 0
                    while !Task.isCancelled {
                        continuation.yield(DeterministicBytes.data(count: 10_000, offset: offset))
                        produced.add(10_000)
                        offset += 10_000
                        if offset >= 1_000_000 { await gate.wait() }  // then trickles on until cancelled
                        try? await Task.sleep(for: .milliseconds(1))
                    }
                }
                continuation.onTermination = { _ in
                    terminated.increment()
                    task.cancel()
                }
            }
            let call = Task { try await dispatcher.dispatch(Self.upload(server, .sequence(endless)), context: RequestContext()) }
            #expect(await eventually { produced.value >= 1_000_000 })
            call.cancel()
            gate.open()
            let error = await runwayError { try await call.value }
            #expect(error?.code == .cancelled)
            #expect(
                await eventually { terminated.value == 1 },
                "the sequence was let go \(terminated.value) times; \(produced.value) bytes made")
            #expect(await eventually { cut.value == 1 })
        }
    }

    @Test("cancelling an upload that waits for room tells the sequence its reader left, though the stream lives on")
    func cancelWhileWaitingForRoom() async throws {
        // The server reads nothing: the connection's buffers fill, then the reader's, and the
        // reading task waits for room, not for the sequence. The stream lives on meanwhile (here,
        // as in an app that keeps it), so dropping its iterator ends nothing: only a reader that
        // is cancelled tells an AsyncStream to stop its producer (the producer ran on, into the
        // stream's unbounded buffer, for as long as the stream lived).
        let gate = Gate()
        let taken = Counter()
        let terminated = Counter()
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes(gate: gate)) { server in
            defer { gate.open() }
            // Four chunks at most wait in the stream: beyond that a chunk is dropped, so `taken`
            // counts only what the reader made room for.
            let endless = AsyncStream<Data>(bufferingPolicy: .bufferingOldest(4)) { continuation in
                let task = Task {
                    var offset = 0
                    while !Task.isCancelled {
                        if case .enqueued = continuation.yield(DeterministicBytes.data(count: 64 << 10, offset: offset)) {
                            taken.increment()
                            offset += 64 << 10
                        }
                        try? await Task.sleep(for: .milliseconds(1))
                    }
                }
                continuation.onTermination = { _ in
                    terminated.increment()
                    task.cancel()
                }
            }
            let call = Task { try await dispatcher.dispatch(Self.upload(server, .sequence(endless)), context: RequestContext()) }
            #expect(await eventually { taken.value > 0 })
            _ = await settled { taken.value }
            call.cancel()
            let error = await runwayError { try await call.value }
            #expect(error?.code == .cancelled)
            #expect(await eventually { terminated.value == 1 }, "the sequence was let go \(terminated.value) times")
            withExtendedLifetime(endless) {}
        }
    }

    @Test("a sequence passed as a value is sent once; one made by a closure is sent again")
    func sendingAgain() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes()) { server in
            let once = Self.upload(server, .sequence(Self.chunks(size: 1_000), length: 1_000))
            #expect(!once.bodyStream!.isReplayable)
            #expect(try Self.report(try await dispatcher.dispatch(once, context: RequestContext())).received == 1_000)
            let error = await runwayError { try await dispatcher.dispatch(once, context: RequestContext()) }
            #expect(error?.code == .configuration)

            let again = Self.upload(server, .sequence(length: 1_000) { Self.chunks(size: 1_000) })
            #expect(again.bodyStream!.isReplayable)
            for _ in 0..<2 {
                let report = try Self.report(try await dispatcher.dispatch(again, context: RequestContext()))
                #expect(report.received == 1_000 && report.matches)
            }
        }
    }

    @Test("a 307 redirect sends a file again from its start; a sequence already read fails typed")
    func redirect() async throws {
        let url = try Self.file(size: 300_000)
        defer { try? FileManager.default.removeItem(at: url) }
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes()) { server in
            var fromFile = Self.upload(server, try .file(url), path: "/temporary", method: .put)
            fromFile.options.redirects = .follow()
            let report = try Self.report(try await dispatcher.dispatch(fromFile, context: RequestContext()))
            #expect(report.received == 300_000)
            #expect(report.matches)

            var fromSequence = Self.upload(server, .sequence(Self.chunks(size: 300_000)), path: "/temporary", method: .put)
            fromSequence.options.redirects = .follow()
            let error = await runwayError { try await dispatcher.dispatch(fromSequence, context: RequestContext()) }
            #expect(error?.code == .connectionLost)

            // A sequence made by a closure is made anew, with and without a declared length.
            for length in [300_000, nil] {
                let made = Counter()
                var fromClosure = Self.upload(
                    server,
                    .sequence(length: length) {
                        made.increment()
                        return Self.chunks(size: 300_000)
                    }, path: "/temporary", method: .put)
                fromClosure.options.redirects = .follow()
                let report = try Self.report(try await dispatcher.dispatch(fromClosure, context: RequestContext()))
                #expect(report.received == 300_000 && report.matches, "length \(String(describing: length))")
                #expect(made.value == 2)
            }
        }
    }

    @Test("a body declared empty whose sequence never ends fails with .timeout, nothing sent", .timeLimit(.minutes(1)))
    func emptyBodyThatNeverEnds() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes()) { server in
            var request = Self.upload(server, .sequence(Silent(asked: Counter()), length: 0))
            request.options.timeout = .milliseconds(300)
            // Without the timeout the call waits for ever (the time limit fails the test).
            let error = await runwayError { try await dispatcher.dispatch(request, context: RequestContext()) }
            #expect(error?.code == .timeout, "\(String(describing: error))")
            #expect(error?.neverSent == true)
            #expect(server.stats.totalRequests == 0)
        }
    }

    @Test("a body declared empty that ends late is sent, under a timeout meant as no limit")
    func emptyBodyThatEndsLateWithoutALimit() async throws {
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes()) { server in
            let late = AsyncStream<Data> { continuation in
                Task {
                    try? await Task.sleep(for: .milliseconds(100))
                    continuation.finish()
                }
            }
            var request = Self.upload(server, .sequence(late, length: 0))
            request.options.timeout = .seconds(Int64.max)
            let response = try await dispatcher.dispatch(request, context: RequestContext())
            #expect(try Self.report(response).received == 0)
        }
    }

    @Test(
        "what a sequence throws or yields after its declared length, once the server answered, fails the call",
        arguments: [true, false])
    func failureAfterTheDeclaredLength(throwing: Bool) async throws {
        struct Broken: Error {}
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes()) { server in
            let late = AsyncThrowingStream<Data, any Error> { continuation in
                continuation.yield(DeterministicBytes.data(count: 1_000))
                Task {
                    // Well after the server's answer to the 1,000 bytes.
                    try? await Task.sleep(for: .milliseconds(300))
                    if throwing {
                        continuation.finish(throwing: Broken())
                    } else {
                        continuation.yield(Data([1, 2, 3]))
                        continuation.finish()
                    }
                }
            }
            let request = Self.upload(server, .sequence(late, length: 1_000))
            let error = await runwayError { try await dispatcher.dispatch(request, context: RequestContext()) }
            #expect(error?.code == .invalidRequest, "\(String(describing: error))")
            #expect(throwing ? error?.underlying is Broken : error?.field == "bodyStream")
            // The server's answer comes with it.
            #expect(error?.response?.status == 200)
        }
    }

    @Test(
        "upload progress counts the body's bytes sent, up to its size: with a length, and chunked without one (not the chunks' framing)",
        arguments: [true, false])
    func progress(_ declaresLength: Bool) async throws {
        let size = 2_000_000
        let dispatcher = CurlDispatcher()
        try await withTestServer(routes: UploadRoutes.routes()) { server in
            var request = Self.upload(server, .sequence(Self.chunks(size: size), length: declaresLength ? size : nil))
            let (progress, reporter) = TransferProgress.makeStream(bufferingNewest: 100_000)
            request.progress = reporter
            let response = try await dispatcher.dispatch(request, context: RequestContext())
            #expect(try Self.report(response).received == size)
            var sent: [Int64] = []
            for await report in progress {
                #expect(report.totalBytesToSend == (declaresLength ? Int64(size) : nil))
                sent.append(report.bytesSent)
            }
            #expect(sent.last == Int64(size))
            #expect(sent.allSatisfy { $0 <= Int64(size) })
            #expect(sent == sent.sorted())
        }
    }

    @Test("over HTTP/2 (TLS) a body of unknown length arrives whole")
    func http2() async throws {
        let pki = try await TestPKI.load()
        let dispatcher = CurlDispatcher()
        try await withTestServer(tls: pki.server, routes: UploadRoutes.routes()) { server in
            var request = Self.upload(server, .sequence(Self.chunks(size: 1_500_000, chunk: 30_001)))
            request.options.tls.certificateAuthorities = .file(pki.caCertificatePath)
            let response = try await dispatcher.dispatch(request, context: RequestContext())
            #expect(response.metrics.httpVersion == "2")
            let report = try Self.report(response)
            #expect(report.received == 1_500_000)
            #expect(report.matches)
        }
    }

    @Test("what cannot work is refused before anything is sent")
    func refused() async throws {
        let url = try Self.file(size: 10)
        defer { try? FileManager.default.removeItem(at: url) }
        let target = URL(string: "http://127.0.0.1:9/sink")!
        var both = makeRequest(.post, target, body: Data("x".utf8))
        both.bodyStream = try .file(url)
        #expect(throws: RunwayError.self) { try both.validate() }
        var head = makeRequest(.head, target)
        head.bodyStream = try .file(url)
        #expect(throws: RunwayError.self) { try head.validate() }
        var wrongLength = makeRequest(.post, target, headers: ["Content-Length": "11"])
        wrongLength.bodyStream = try .file(url)
        #expect(throws: RunwayError.self) { try wrongLength.validate() }
        #expect(throws: RunwayError.self) { try RequestBodyStream.file(URL(fileURLWithPath: "/nonexistent/runway")) }
        #expect(throws: RunwayError.self) { try RequestBodyStream.file(FileManager.default.temporaryDirectory) }

        var viaURLSession = makeRequest(.post, target)
        viaURLSession.bodyStream = try .file(url)
        let error = await runwayError { try await URLSessionDispatcher().dispatch(viaURLSession, context: RequestContext()) }
        #expect(error?.code == .configuration)
        #expect(error?.field == "bodyStream")
    }

    @Test("collect reads a body stream into memory, up to a limit")
    func collect() async throws {
        let data = try await RequestBodyStream.sequence(Self.chunks(size: 100_000, chunk: 3_000)).collect(upTo: 1 << 20)
        #expect(data == DeterministicBytes.data(count: 100_000))
        await #expect(throws: RunwayError.self) {
            try await RequestBodyStream.sequence(Self.chunks(size: 100_000)).collect(upTo: 99_999)
        }
    }
}
