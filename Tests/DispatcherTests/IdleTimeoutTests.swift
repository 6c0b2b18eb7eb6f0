import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

@testable import RunwayCurl

#if canImport(Glibc)
import Glibc
#endif

/// The idle timeout (`RequestOptions.idleTimeout`): a transfer that goes that long without a byte
/// moving either way fails with `.timeout`, however long it has run; one whose bytes keep
/// moving does not. Each call has no total timeout, so only the idle one can end it.
///
/// The trickling servers are ``ScriptedResponder``s: their connections have threads of their
/// own, so a loaded machine, where a task can wait seconds for a thread, does not pause them.
extension DispatcherSuite {
    /// A response head and `count` bytes of body, in `pieces` pieces.
    static func trickle(count: Int, pieces: Int) -> [[UInt8]] {
        let piece = [UInt8](repeating: UInt8(ascii: "t"), count: count / pieces)
        return [Array("HTTP/1.1 200 OK\r\nContent-Length: \(piece.count * pieces)\r\n\r\n".utf8)] + Array(repeating: piece, count: pieces)
    }

    @Test("the idle timeout ends a call whose server takes the request and never answers", arguments: DispatcherUnderTest.all)
    func idleTimeoutBeforeTheHead(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let request = makeRequest(server.url("/delay?ms=300000")) {
                $0.timeout = nil
                $0.idleTimeout = .milliseconds(300)
            }
            let start = ContinuousClock.now
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error?.code == .timeout)
            // The request went: a retry policy must not take it for one never sent.
            #expect(error?.neverSent == false)
            #expect(ContinuousClock.now - start < Self.timeoutBound)
        }
    }

    @Test("the idle timeout ends a call whose body stops coming", arguments: DispatcherUnderTest.all)
    func idleTimeoutDuringTheBody(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        // The head and half the body, then nothing for two minutes.
        let responder = try ScriptedResponder { _ in
            .replyThenUnasked(
                Array("HTTP/1.1 200 OK\r\nContent-Length: 200\r\n\r\n".utf8) + [UInt8](repeating: UInt8(ascii: "h"), count: 100),
                after: .seconds(120), unasked: [UInt8](repeating: UInt8(ascii: "h"), count: 100))
        }
        defer { responder.stop() }
        let request = makeRequest(responder.url("/stalls")) {
            $0.timeout = nil
            $0.idleTimeout = .milliseconds(500)
        }
        let start = ContinuousClock.now
        let error = await runwayError { try await dut.send(dispatcher, request) }
        #expect(error?.code == .timeout)
        #expect(error?.neverSent == false)
        #expect(ContinuousClock.now - start < Self.timeoutBound)
    }

    @Test("a body that keeps coming is not idle, however much longer than the idle timeout it takes", arguments: DispatcherUnderTest.all)
    func aTrickleIsNotIdle(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        // 40 pieces 100 ms apart: four seconds, twice the idle timeout, with no gap near it.
        let responder = try ScriptedResponder { _ in .paced(Self.trickle(count: 4_000, pieces: 40), interval: .milliseconds(100)) }
        defer { responder.stop() }
        let request = makeRequest(responder.url("/trickles")) {
            $0.timeout = nil
            $0.idleTimeout = .seconds(2)
        }
        let start = ContinuousClock.now
        let response = try await dut.send(dispatcher, request)
        #expect(response.status == 200)
        #expect(response.body == Data(repeating: UInt8(ascii: "t"), count: 4_000))
        #expect(ContinuousClock.now - start >= .seconds(3))
    }

    /// A socket stays writable while an HTTP/2 upload waits for a window the server never opens:
    /// that is no byte moving. (On a connection already known to carry HTTP/2 no socket readiness
    /// counts; a new one is not known to until a transfer on it ends.)
    @Test("an HTTP/2 upload held back by the server's flow control, on a new connection, is idle")
    func aStalledHTTP2UploadIsIdle() async throws {
        let pki = try await TestPKI.load()
        try await withTestServer(tls: pki.server, http2: true) { server in
            var request = makeRequest(.post, server.url("/delay?ms=300000"), body: Data(repeating: 1, count: 4 << 20)) {
                $0.timeout = nil
                $0.idleTimeout = .seconds(1)
            }
            request.options.tls.certificateAuthorities = .file(pki.caCertificatePath)
            request.headers["Content-Type"] = "application/octet-stream"
            let start = ContinuousClock.now
            let error = await runwayError { try await CurlDispatcher().dispatch(request, context: RequestContext()) }
            #expect(error?.code == .timeout, "\(String(describing: error))")
            #expect(ContinuousClock.now - start < Self.timeoutBound)
        }
    }

    /// An in-memory body leaves from libcurl's own buffer, with no callback of Runway's in between:
    /// the bytes it sends must count too.
    @Test(
        "an in-memory body that keeps leaving is not idle, however much longer than the idle timeout it takes",
        arguments: DispatcherUnderTest.all)
    func aSlowlyReadUploadIsNotIdle(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        // 24 MiB read at about 8 MiB/s: three seconds, past the two of the idle timeout. The
        // client's socket buffer (4 MiB at most) drains in half a second at the end, with
        // nothing to count: well under the timeout.
        let size = 24 << 20
        let server = try SlowReadingServer(bytesPerRead: 64 << 10, pause: .milliseconds(8))
        defer { server.stop() }
        var request = makeRequest(.post, server.url, body: Data(repeating: 1, count: size)) {
            $0.timeout = nil
            $0.idleTimeout = .seconds(2)
        }
        request.headers["Content-Type"] = "application/octet-stream"
        let start = ContinuousClock.now
        let response = try await dut.send(dispatcher, request)
        #expect(response.status == 200)
        #expect(server.bodyBytesRead == size)
        #expect(ContinuousClock.now - start >= .seconds(2))
    }

    /// As for the total timeout: nanoseconds past UInt64 would trap, or wrap round to a limit
    /// already passed.
    @Test("an idle timeout of centuries is a long one, not one already passed", arguments: DispatcherUnderTest.all)
    func anIdleTimeoutOfCenturiesIsALongOne(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            for limit in [Duration.seconds(Int64.max), .seconds(18_446_744_074)] {
                let request = makeRequest(server.url("/delay?ms=1000")) { $0.idleTimeout = limit }
                let response = try await dut.send(dispatcher, request)
                #expect(response.status == 200, "idle timeout \(limit)")
            }
        }
    }

    @Test("an idle timeout of zero or below is .configuration, nothing sent", arguments: DispatcherUnderTest.all)
    func anIdleTimeoutMustBeAboveZero(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        for limit in [Duration.zero, .milliseconds(-5)] {
            let request = makeRequest(URL(string: "http://127.0.0.1:9/")!) { $0.idleTimeout = limit }
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error?.code == .configuration)
            #expect(error?.field == "options.idleTimeout")
            #expect(error?.neverSent == true)
        }
    }

    /// A streamed body's reader that holds back pauses the transfer; the idle clock stands
    /// meanwhile (libcurl: URLSession streams no response body).
    @Test("the idle clock stands while a streamed body's reader holds back")
    func aReaderThatHoldsBackIsNotIdle() async throws {
        // 16 MiB in one write from the responder's thread: far more than the dispatcher holds
        // for a reader (about 1 MiB), so the transfer pauses until the reader reads on.
        let size = 16 << 20
        let responder = try ScriptedResponder { _ in
            .reply(Array("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n".utf8) + [UInt8](repeating: 7, count: size))
        }
        defer { responder.stop() }
        // The server thread refills the socket many times after the reader reads on: on a loaded
        // machine it may wait well over half a second to run, which is idleness the client sees.
        var request = makeRequest(responder.url("/big")) {
            $0.timeout = nil
            $0.idleTimeout = .milliseconds(1_500)
        }
        request.streamsResponseBody = true
        // Kept while the body is read: releasing it ends the transfer.
        let dispatcher = CurlDispatcher()
        let response = try await dispatcher.dispatch(request, context: RequestContext())
        var received = 0
        var waited = false
        for try await chunk in try #require(response.bodyStream) {
            received += chunk.count
            if !waited {
                // Three idle timeouts without reading: the transfer is paused, not idle.
                try await Task.sleep(for: .milliseconds(4_500))
                waited = true
            }
        }
        #expect(received == size)
        withExtendedLifetime(dispatcher) {}
    }

    /// The loop thread held up past the idle timeout (here by a job on its executor; on a loaded
    /// machine by the scheduler) while the server went on sending: the bytes waiting unread on the
    /// socket moved in time, and the call must not fail for the loop's own delay.
    @Test("a loop held up past the idle timeout reads what waits before it calls a transfer idle")
    func aLoopHeldUpDoesNotMakeATransferIdle() async throws {
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 300\r\n\r\n".utf8)
        let piece = [UInt8](repeating: UInt8(ascii: "w"), count: 100)
        // A piece every 300 ms: well within the idle timeout.
        let responder = try ScriptedResponder { _ in .paced([head + piece, piece, piece], interval: .milliseconds(300)) }
        defer { responder.stop() }
        var request = makeRequest(responder.url("/waits")) {
            $0.timeout = nil
            $0.idleTimeout = .seconds(1)
        }
        request.streamsResponseBody = true
        let dispatcher = CurlDispatcher()
        let response = try await dispatcher.dispatch(request, context: RequestContext())
        var body = Data()
        var holdUp: Task<Void, Never>?
        for try await chunk in try #require(response.bodyStream) {
            body.append(chunk)
            // From the second piece on (libcurl's own early timers have run out by then, and
            // would read the socket), the loop thread is held for three idle timeouts, while
            // the third piece comes.
            if body.count == 200 { holdUp = Task(executorPreference: dispatcher.loopExecutor) { _ = usleep(3_000_000) } }
        }
        await holdUp?.value
        #expect(body == Data(piece + piece + piece))
        withExtendedLifetime(dispatcher) {}
    }
}

extension DispatcherSuite {
    /// Bytes that end no line reach libcurl without any callback of the transfer's: a long
    /// header line, or a chunk's size line, coming in slowly still moves, and the idle clock
    /// must count it as it counts body bytes.
    @Test(
        "a long header line or chunk-size line coming in pieces that end no line is not idle",
        arguments: ["header line", "chunk-size line"])
    func aSlowLineIsNotIdle(_ part: String) async throws {
        let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 100)
        let (start, end) =
            part == "header line"
            ? ("HTTP/1.1 200 OK\r\nX-Long: ", "\r\nContent-Length: 2\r\n\r\nok")
            : ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;ext=", "\r\nok\r\n0\r\n\r\n")
        // 2.4 s of a line, a piece every 100 ms; the idle timeout is 1 s.
        let pieces = [Array(start.utf8)] + Array(repeating: piece, count: 24) + [Array(end.utf8)]
        let responder = try ScriptedResponder { _ in .paced(pieces, interval: .milliseconds(100)) }
        defer { responder.stop() }
        let request = makeRequest(responder.url("/slow")) {
            $0.timeout = nil
            $0.idleTimeout = .seconds(1)
        }
        let response = try await CurlDispatcher().dispatch(request, context: RequestContext())
        #expect(response.status == 200)
        #expect(response.body == Data("ok".utf8))
    }
}

/// A server on 127.0.0.1 that reads one request's body slowly, `bytesPerRead` at a time with
/// `pause` between reads, on a thread of its own, then answers 200. Its receive buffer is small,
/// so the client's writes wait for its reads.
final class SlowReadingServer: @unchecked Sendable {
    // @unchecked Sendable: `listener` and `url` are set in `init`; `read` and `closed` are
    // guarded by `lock`. The serving thread alone closes the listener, and `stop()` shuts it down
    // only while it is open: once closed, its number may be another test's socket.
    let url: URL
    private let listener: Int32
    private let lock = NSLock()
    private var read = 0
    private var closed = false

    /// The body bytes read so far.
    var bodyBytesRead: Int { lock.withLock { read } }

    init(bytesPerRead: Int, pause: Duration) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var size = Int32(64 << 10)
        _ = setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        guard bound == 0, named == 0, listen(listener, 4) == 0 else {
            close(listener)
            throw RunwayError(.transport, "the slow-reading server could not listen")
        }
        self.listener = listener
        url = URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/upload")!
        let (seconds, attoseconds) = pause.components
        let micros = UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        Thread.detachNewThread { [self] in serve(bytesPerRead: bytesPerRead, pauseMicros: micros) }
    }

    /// Stops accepting (a connection being served ends with its client).
    func stop() {
        lock.withLock {
            if !closed { _ = shutdown(listener, Int32(SHUT_RDWR)) }
        }
    }

    private func serve(bytesPerRead: Int, pauseMicros: UInt32) {
        let connection = accept(listener, nil, nil)
        // One connection only: the listener goes now.
        lock.withLock {
            close(listener)
            closed = true
        }
        guard connection >= 0 else { return }
        defer { close(connection) }
        var buffer = [UInt8](repeating: 0, count: bytesPerRead)
        var head: [UInt8] = []
        var bodyLength: Int?
        var body = 0
        while bodyLength.map({ body < $0 }) ?? true {
            let count = recv(connection, &buffer, bodyLength == nil ? 1 : bytesPerRead, 0)
            guard count > 0 else { return }
            if bodyLength == nil {
                // The head a byte at a time, up to its blank line: then the length to read.
                head.append(buffer[0])
                guard head.suffix(4) == Array("\r\n\r\n".utf8) else { continue }
                let text = String(decoding: head, as: UTF8.self).lowercased()
                let line = text.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                bodyLength = line.flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                continue
            }
            body += count
            lock.withLock { read = body }
            usleep(pauseMicros)
        }
        let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
        _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
