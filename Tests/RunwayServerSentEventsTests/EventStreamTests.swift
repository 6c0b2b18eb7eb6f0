import Foundation
import Hummingbird
import NIOCore
import Runway
import RunwayCurl
import RunwayServerSentEvents
import RunwayTestServer
import TestHelpers
import Testing

/// What the server saw of each connection.
final class ConnectionLog: Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var entries: [(lastEventID: String?, attempt: String?)] = []

    func record(lastEventID: String?, attempt: String?) -> Int {
        lock.withLock {
            entries.append((lastEventID, attempt))
            return entries.count
        }
    }

    var lastEventIDs: [String?] { lock.withLock { entries.map(\.lastEventID) } }
    var attempts: [String?] { lock.withLock { entries.map(\.attempt) } }
}

/// Stamps each call it sees with `X-Connection: n`: proof that every connection passes the chain.
struct Stamp: Interceptor {
    let count = Counter()
    func intercept(_ request: Runway.Request, context: Runway.RequestContext, next: Pipeline.Next) async throws -> Runway.Response {
        var request = request
        request.headers["X-Connection"] = String(count.increment())
        return try await next(request, context)
    }
}

/// Event streams through a pipeline with `CurlDispatcher`, against the test server.
@Suite struct EventStreamTests {
    static func eventStream(_ body: @escaping @Sendable (any ResponseBodyWriter) async throws -> Void) -> Hummingbird.Response {
        Hummingbird.Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: ResponseBody { writer in
                try await body(writer)
                try await writer.finish(nil)
            })
    }

    /// `/chat`, for the guide's example: a few events, then 204 on the next connection.
    static func chatRoutes(connections: Counter) -> TestServer.Routes {
        { router in
            router.get("/chat") { _, _ in
                guard connections.increment() == 1 else { return Hummingbird.Response(status: .noContent) }
                return eventStream { writer in
                    var writer = writer
                    try await writer.write(ByteBuffer(string: "retry: 10\ndata: hi\n\nevent: typing\ndata: bob\n\n"))
                    try await writer.write(ByteBuffer(string: "event: joined\ndata: carol\n\nid: 9\ndata: bye\n\n"))
                }
            }
        }
    }

    /// `path`: the nth connection gets the nth of `streams` (event-stream text), later ones 204;
    /// the server logs each connection's `Last-Event-ID`.
    static func scriptedStreams(_ path: String, _ streams: [String], log: ConnectionLog) -> TestServer.Routes {
        { router in
            router.get(RouterPath(path)) { request, _ in
                let connection = log.record(lastEventID: request.headers[.init("Last-Event-ID")!], attempt: nil)
                guard connection <= streams.count else { return Hummingbird.Response(status: .noContent) }
                return eventStream { writer in
                    var writer = writer
                    try await writer.write(ByteBuffer(string: streams[connection - 1]))
                }
            }
        }
    }

    /// `/events`: the first connection sends its events byte by byte, the last one cut; the second
    /// (which must carry `Last-Event-ID`) sends two more with CR LF and CR line ends; the third is
    /// answered 204.
    static func routes(_ log: ConnectionLog) -> TestServer.Routes {
        { router in
            router.get("/events") { request, _ in
                let connection = log.record(
                    lastEventID: request.headers[.init("Last-Event-ID")!], attempt: request.headers[.init("X-Connection")!])
                switch connection {
                case 1:
                    return eventStream { writer in
                        var writer = writer
                        let text =
                            "retry: 50\n: a comment\nid: 1\ndata: first\n\nevent: update\ndata: line1\ndata: line2\nid: 2\n\ndata: cut"
                        for byte in text.utf8 { try await writer.write(ByteBuffer(bytes: [byte])) }
                    }
                case 2:
                    return eventStream { writer in
                        var writer = writer
                        try await writer.write(ByteBuffer(string: "data: after reconnect\r\n\r\ndata: cr\r\r"))
                    }
                default:
                    return Hummingbird.Response(status: .noContent)
                }
            }
        }
    }

    @Test(
        "events arrive as sent; a closed stream reconnects through the chain with Last-Event-ID after retry:; 204 ends it",
        .timeLimit(.minutes(5)))
    func reconnects() async throws {
        let log = ConnectionLog()
        let stamp = Stamp()
        let pipeline = Pipeline(interceptors: [stamp], dispatcher: CurlDispatcher())
        try await withTestServer(routes: Self.routes(log)) { server in
            var received: [ServerSentEvent] = []
            // Without the server's `retry: 50`, each of the two reconnections would wait ten
            // minutes: the stream ends long before the bound below only if they waited 50 ms.
            let configuration = EventStream.Configuration(reconnectionTime: .seconds(600), maxReconnectionTime: .seconds(600))
            let started = ContinuousClock.now
            for try await event in pipeline.events(for: Runway.Request(url: server.url("/events")), configuration: configuration) {
                received.append(event)
            }
            #expect(
                received == [
                    ServerSentEvent(data: "first", lastEventID: "1"),
                    ServerSentEvent(type: "update", data: "line1\nline2", lastEventID: "2"),
                    ServerSentEvent(data: "after reconnect", lastEventID: "2"), ServerSentEvent(data: "cr", lastEventID: "2"),
                ])
            #expect(log.lastEventIDs == [nil, "2", "2"])
            #expect(log.attempts == ["1", "2", "3"])
            #expect(ContinuousClock.now - started < .seconds(60))
        }
    }

    @Test("the id: of an event cut by the end of a connection is never sent as Last-Event-ID, nor carried by later events")
    func cutEventID() async throws {
        let log = ConnectionLog()
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        // Event 2 never gets its blank line: the client never had it.
        let routes = Self.scriptedStreams("/cut-id", ["retry: 10\nid: 1\ndata: one\n\nid: 2\ndata: cut", "data: after\n\n"], log: log)
        try await withTestServer(routes: routes) { server in
            var received: [ServerSentEvent] = []
            for try await event in pipeline.events(for: Runway.Request(url: server.url("/cut-id"))) { received.append(event) }
            #expect(received == [ServerSentEvent(data: "one", lastEventID: "1"), ServerSentEvent(data: "after", lastEventID: "1")])
            // Sent "2", the server would resume after an event the client never got.
            #expect(log.lastEventIDs == [nil, "1", "1"])
        }
    }

    @Test("a Last-Event-ID stored from an earlier run is sent by the first connection and stands until the server sends one")
    func resumesFromAStoredID() async throws {
        let log = ConnectionLog()
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        let routes = Self.scriptedStreams("/resume", ["retry: 10\ndata: next\n\n", "id: 43\ndata: newer\n\n", ""], log: log)
        try await withTestServer(routes: routes) { server in
            let request = Runway.Request(url: server.url("/resume"), headers: ["Last-Event-ID": "42"])
            var received: [ServerSentEvent] = []
            for try await event in pipeline.events(for: request) { received.append(event) }
            #expect(received == [ServerSentEvent(data: "next", lastEventID: "42"), ServerSentEvent(data: "newer", lastEventID: "43")])
            #expect(log.lastEventIDs == ["42", "42", "43", "43"])
        }
    }

    /// The error the iterator's first `next()` throws; an event instead is an issue.
    static func firstFailure(_ iterator: inout EventStream.Iterator, sourceLocation: SourceLocation = #_sourceLocation) async
        -> RunwayError?
    {
        do throws(RunwayError) {
            let event = try await iterator.next()
            Issue.record("the stream gave \(String(describing: event)) instead of failing", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    @Test("a gzip-encoded event stream fails typed, never read as garbage", arguments: ["gzip", "identity, gzip"])
    func encodedStream(_ encoding: String) async throws {
        let stamp = Stamp()
        let pipeline = Pipeline(interceptors: [stamp], dispatcher: CurlDispatcher())
        // `data: x` and a blank line, gzipped: what a server that compresses its event streams
        // sends a client that asked for gzip.
        let gzipped: [UInt8] = [
            0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4B, 0x49, 0x2C, 0x49, 0xB4, 0x52, 0xA8, 0xE0, 0xE2, 0x02,
            0x00, 0x81, 0x7B, 0x33, 0x2B, 0x09, 0x00, 0x00, 0x00,
        ]
        let routes: TestServer.Routes = { router in
            router.get("/gzip") { _, _ in
                Hummingbird.Response(
                    status: .ok, headers: [.contentType: "text/event-stream", .contentEncoding: encoding],
                    body: .init(byteBuffer: ByteBuffer(bytes: gzipped)))
            }
        }
        try await withTestServer(routes: routes) { server in
            var request = Runway.Request(url: server.url("/gzip"))
            request.headers["Accept-Encoding"] = "gzip"
            var iterator = pipeline.events(for: request, configuration: .init(maxReconnections: 0)).makeAsyncIterator()
            let failure = await Self.firstFailure(&iterator)
            #expect(failure?.code == .responseInvalid, "\(String(describing: failure))")
            #expect(failure?.response?.headers["Content-Encoding"] == encoding)
            #expect(stamp.count.value == 1)
        }
    }

    @Test(
        "an event over maxEventSize fails the stream, though one chunk brings it whole, after the events before it",
        arguments: [true, false])
    func eventSizeLimit(largeEventEnds: Bool) async throws {
        let large = "data: \(String(repeating: "x", count: 2_000))" + (largeEventEnds ? "\n\ndata: after\n\n" : "")
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        // One write: the events, the large one and what follows arrive in one chunk.
        try await withClosingServer(sending: "data: a\n\nevent: b\ndata: b\n\n" + large) { url, connections in
            let configuration = EventStream.Configuration(reconnectionTime: .milliseconds(10), maxEventSize: 1_000)
            var iterator = pipeline.events(for: Runway.Request(url: url), configuration: configuration)
                .makeAsyncIterator()
            let first = try await iterator.next()
            let second = try await iterator.next()
            #expect([first, second] == [ServerSentEvent(data: "a"), ServerSentEvent(type: "b", data: "b")])
            let failure = await Self.firstFailure(&iterator)
            #expect(failure?.code == .responseTooLarge, "\(String(describing: failure))")
            let after = try await iterator.next()
            #expect(after == nil)
            #expect(connections.value == 1)
        }
    }

    @Test(
        "a comment or id: line over maxEventSize fails the stream after the events before it, in one read or many",
        arguments: [": ", "id: "], [false, true])
    func lineSizeLimit(_ field: String, split: Bool) async throws {
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        let long = field + String(repeating: "L", count: 5_000) + "\n"
        // The long line begins and ends inside one read, or comes over many.
        let parts =
            split
            ? ["data: a\n\n"] + stride(from: 0, to: long.count, by: 1_000).map { String(long.dropFirst($0).prefix(1_000)) } + [
                "data: b\n\n"
            ]
            : ["data: a\n\n" + long + "data: b\n\n"]
        try await withClosingServer(sendingParts: parts) { url, connections in
            let configuration = EventStream.Configuration(reconnectionTime: .milliseconds(10), maxEventSize: 1_000)
            var iterator = pipeline.events(for: Runway.Request(url: url), configuration: configuration).makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first == ServerSentEvent(data: "a"))
            let failure = await Self.firstFailure(&iterator)
            #expect(failure?.code == .responseTooLarge, "\(String(describing: failure))")
            let after = try await iterator.next()
            #expect(after == nil)
            #expect(connections.value == 1)
        }
    }

    @Test("an event ID too long to send back as Last-Event-ID ends the stream with .responseTooLarge, the server's doing")
    func eventIDTooLongToResume() async throws {
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        let id = String(repeating: "L", count: Runway.Request.maxHeadSize)
        try await withClosingServer(sending: "retry: 10\nid: \(id)\ndata: x\n\n") { url, connections in
            var iterator = pipeline.events(for: Runway.Request(url: url)).makeAsyncIterator()
            let event = try await iterator.next()
            #expect(event == ServerSentEvent(data: "x", lastEventID: id))
            let failure = await Self.firstFailure(&iterator)
            #expect(failure?.code == .responseTooLarge, "\(String(describing: failure))")
            #expect(failure?.message.contains("Last-Event-ID") == true, "\(String(describing: failure))")
            #expect(connections.value == 1)
        }
    }

    @Test("an event of exactly maxEventSize is delivered wherever the reads split it")
    func eventAtTheLimitSplitAcrossReads() async throws {
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        let data = String(repeating: "x", count: 99)
        // Type and data: 100 bytes. Cut after the data line, inside it, and inside the type line.
        let splits = [
            ["event: t\ndata: \(data)\n", "\n"], ["event: t\ndata: \(data.prefix(50))", "\(data.dropFirst(50))\n\n"],
            ["eve", "nt: t\ndata: \(data)\n\n"],
        ]
        for parts in splits {
            try await withClosingServer(sendingParts: parts) { url, _ in
                let configuration = EventStream.Configuration(maxReconnections: 0, maxEventSize: 100)
                var iterator = pipeline.events(for: Runway.Request(url: url), configuration: configuration).makeAsyncIterator()
                let event = try await iterator.next()
                #expect(event == ServerSentEvent(type: "t", data: data), "\(parts)")
            }
        }
    }

    @Test("a status other than 200 or a type other than text/event-stream fails typed, without reconnecting")
    func refusals() async throws {
        let stamp = Stamp()
        let pipeline = Pipeline(interceptors: [stamp], dispatcher: CurlDispatcher())
        let routes: TestServer.Routes = { router in
            router.get("/text") { _, _ in
                Hummingbird.Response(
                    status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "data: x\n\n")))
            }
        }
        try await withTestServer(routes: routes) { server in
            for (path, code) in [("/text", RunwayError.Code.responseInvalid), ("/status/500", .serverError)] {
                var iterator = pipeline.events(for: Runway.Request(url: server.url(path))).makeAsyncIterator()
                let failure = await Self.firstFailure(&iterator)
                #expect(failure?.code == code, "\(path): \(String(describing: failure))")
                #expect(failure?.response != nil)
                let after = try await iterator.next()
                #expect(after == nil)
            }
            #expect(stamp.count.value == 2)
        }
    }

    /// The request's idle timeout is kept on each connection: a server that goes silent (no
    /// event, no heartbeat) that long is left, and the stream reconnects.
    @Test("a connection silent for the request's idle timeout is dropped and reconnected, with Last-Event-ID", .timeLimit(.minutes(1)))
    func silenceReconnects() async throws {
        @Sendable func chunk(_ text: String) -> String { String(text.utf8.count, radix: 16) + "\r\n" + text + "\r\n" }
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        let responder = try ScriptedResponder { exchange in
            guard exchange.connection == 0 else {
                return .replyAndClose(Array((head + chunk("data: second\n\n") + "0\r\n\r\n").utf8))
            }
            // One event, then two minutes of silence.
            return .replyThenUnasked(Array((head + chunk("id: 1\nretry: 10\ndata: first\n\n")).utf8), after: .seconds(120), unasked: [])
        }
        defer { responder.stop() }
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        var request = Runway.Request(url: responder.url("/events"))
        request.options.idleTimeout = .milliseconds(300)
        var events: [String] = []
        for try await event in pipeline.events(for: request) {
            events.append(event.data)
            if events.count == 2 { break }
        }
        #expect(events == ["first", "second"])
        let exchanges = responder.exchanges
        #expect(exchanges.count == 2)
        #expect(exchanges.last?.head.contains("Last-Event-ID: 1\r\n") == true)
    }

    @Test("once the stream has thrown, next() returns nil, never an earlier connection's error")
    func nilAfterFailure() async throws {
        let responder = try ScriptedResponder { exchange in
            guard exchange.connection == 0 else {
                return .replyAndClose(Array("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n".utf8))
            }
            // A chunked event stream cut before its end: a lost connection, worth a reconnection.
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            return .replyAndClose(Array((head + "a\r\nretry: 10\n\r\n").utf8))
        }
        defer { responder.stop() }
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        var iterator = pipeline.events(for: Runway.Request(url: responder.url("/events"))).makeAsyncIterator()
        let failure = await Self.firstFailure(&iterator)
        #expect(failure?.code == .serverError, "\(String(describing: failure))")
        do {
            let after = try await iterator.next()
            #expect(after == nil)
        } catch {
            Issue.record("a second error after the stream ended: \(error)")
        }
    }

    /// Runs `body` against `/close`, where every connection gets `text` in one write and the end
    /// of the stream, counting the connections.
    private func withClosingServer(
        sending text: String, _ body: (URL, Counter) async throws -> Void
    ) async throws {
        try await withClosingServer(sendingParts: [text], body)
    }

    /// ``withClosingServer(sending:_:)`` writing `parts` one by one, 50 ms apart, so each
    /// arrives in a read of its own.
    private func withClosingServer(
        sendingParts parts: [String], _ body: (URL, Counter) async throws -> Void
    ) async throws {
        let connections = Counter()
        let routes: TestServer.Routes = { router in
            router.get("/close") { _, _ in
                connections.increment()
                return Self.eventStream { writer in
                    var writer = writer
                    for (index, part) in parts.enumerated() {
                        if index > 0 { try await Task.sleep(for: .milliseconds(50)) }
                        try await writer.write(ByteBuffer(string: part))
                    }
                }
            }
        }
        try await withTestServer(routes: routes) { server in try await body(server.url("/close"), connections) }
    }

    /// ``withClosingServer(sending:_:)`` with `retry: <retry>` alone.
    private func withClosingServer(retry: Int, _ body: (URL, Counter) async throws -> Void) async throws {
        try await withClosingServer(sending: "retry: \(retry)\n", body)
    }

    @Test("a server that keeps closing at once is reconnected to at most maxReconnections times in a row")
    func reconnectionLimit() async throws {
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        try await withClosingServer(retry: 10) { url, connections in
            var count = 0
            for try await _ in pipeline.events(for: Runway.Request(url: url), configuration: .init(maxReconnections: 2)) { count += 1 }
            #expect(count == 0)
            #expect(connections.value == 3)
        }
    }

    @Test("a server that closes at once with retry: 0 is reconnected to with a growing wait, not hammered")
    func emptyConnectionsBackOff() async throws {
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        try await withClosingServer(retry: 0) { url, connections in
            let clock = ContinuousClock()
            let start = clock.now
            for try await _ in pipeline.events(for: Runway.Request(url: url), configuration: .init(maxReconnections: 4)) {}
            // Waits of 0, 200, 400 and 800 ms: a lower bound, which a slow machine only lengthens.
            #expect(clock.now - start >= .milliseconds(1_400))
            #expect(connections.value == 5)
        }
    }

    @Test("leaving the loop aborts the transfer: the server sees it, and nothing reconnects")
    func leavingAborts() async throws {
        let connections = Counter()
        let aborted = Counter()
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        let routes: TestServer.Routes = { router in
            router.get("/endless") { _, _ in
                connections.increment()
                return Self.eventStream { writer in
                    var writer = writer
                    try await writer.write(ByteBuffer(string: "retry: 10\ndata: hello\n\n"))
                    do {
                        while true {
                            try await Task.sleep(for: .milliseconds(20))
                            try await writer.write(ByteBuffer(string: ": keep-alive\n"))
                        }
                    } catch {
                        aborted.increment()
                        throw error
                    }
                }
            }
        }
        try await withTestServer(routes: routes) { server in
            for try await event in pipeline.events(for: Runway.Request(url: server.url("/endless"))) {
                #expect(event.data == "hello")
                break
            }
            #expect(await eventually { aborted.value == 1 })
            #expect(connections.value == 1)
        }
    }

    /// A responder whose first connection gets one event and then the end of the stream (or,
    /// `cut`, a lost connection); later connections get 204.
    static func oneAnswer(cut: Bool) throws -> ScriptedResponder {
        try ScriptedResponder { exchange in
            guard exchange.connection == 0 else {
                return .replyAndClose(Array("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n".utf8))
            }
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            let event = "retry: 10\ndata: answer\n\n"
            let chunk = String(event.utf8.count, radix: 16) + "\r\n" + event + "\r\n"
            return .replyAndClose(Array((head + chunk + (cut ? "" : "0\r\n\r\n")).utf8))
        }
    }

    @Test(
        "a POST without an Idempotency-Key is sent once: the end of its stream, normal or cut, ends the sequence", arguments: [false, true])
    func postsAreSentOnce(cut: Bool) async throws {
        let responder = try Self.oneAnswer(cut: cut)
        defer { responder.stop() }
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        let request = Runway.Request(method: .post, url: responder.url("/complete"), body: Data("prompt".utf8))
        var received: [String] = []
        var failure: RunwayError?
        do throws(RunwayError) {
            for try await event in pipeline.events(for: request) { received.append(event.data) }
        } catch {
            failure = error
        }
        #expect(received == ["answer"])
        #expect(failure?.code == (cut ? .connectionLost : nil), "\(String(describing: failure))")
        // Sent again, the server would have acted on the prompt twice.
        #expect(responder.exchanges.map(\.method) == ["POST"])
    }

    @Test("a POST with an Idempotency-Key reconnects, sending its key and body again")
    func keyedPostsReconnect() async throws {
        let responder = try Self.oneAnswer(cut: false)
        defer { responder.stop() }
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        let request = Runway.Request(
            method: .post, url: responder.url("/complete"), headers: ["Idempotency-Key": "k-1"], body: Data("prompt".utf8))
        var received: [String] = []
        for try await event in pipeline.events(for: request) { received.append(event.data) }
        #expect(received == ["answer"])
        let exchanges = responder.exchanges
        #expect(exchanges.count == 2)
        #expect(exchanges.allSatisfy { $0.head.contains("Idempotency-Key: k-1") && $0.body == Array("prompt".utf8) })
    }

    @Test("a POST whose connection was never made (nothing sent) is tried again")
    func unsentPostsReconnect() async throws {
        let blackhole = try BlackholeListener.start()
        let stamp = Stamp()
        let pipeline = Pipeline(interceptors: [stamp], dispatcher: CurlDispatcher())
        var options = RequestOptions()
        options.connectTimeout = .milliseconds(200)
        let request = Runway.Request(method: .post, url: blackhole.url("/complete"), body: Data("prompt".utf8), options: options)
        let configuration = EventStream.Configuration(reconnectionTime: .milliseconds(10), maxReconnections: 1)
        var iterator = pipeline.events(for: request, configuration: configuration).makeAsyncIterator()
        let failure = await Self.firstFailure(&iterator)
        #expect(failure?.code == .timeout, "\(String(describing: failure))")
        #expect(failure?.neverSent == true)
        #expect(stamp.count.value == 2)
    }
}
