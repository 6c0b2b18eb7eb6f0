import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP server on 127.0.0.1 whose every answer a test scripts byte by byte: for faults no HTTP
/// server library produces on purpose (a header section cut off, a reset right after reading a
/// request on a kept-alive connection). Each connection is served on a thread of its own, one
/// request after another; the script sees each request and says what to do. Call ``stop()``
/// when done.
public final class ScriptedResponder: @unchecked Sendable {
    // @unchecked Sendable: `listener`, `port` and `script` are set once in `init`; the rest is
    // guarded by `lock`. The accept thread alone closes the listener, and `stop()` shuts it down
    // only while it is open (its number could be another socket's after).

    /// One request as the server read it.
    public struct Exchange: Sendable {
        /// Which connection it came on, counted from 0 in accept order.
        public let connection: Int
        /// Which request it is on that connection, from 0.
        public let index: Int
        /// The request line and header fields, as sent.
        public let head: String
        /// The body (by `Content-Length`; none otherwise, nor for a request that carries
        /// `Expect: 100-continue`, which is answered once its head is in, as a server that
        /// refuses the expectation does).
        public let body: [UInt8]

        /// The request line's method.
        public var method: Substring { head.prefix { $0 != " " } }
        /// The request line's target.
        public var target: Substring { head.split(separator: " ", maxSplits: 2).dropFirst().first ?? "" }
    }

    /// What the server does with a request.
    public enum Action: Sendable {
        /// Writes the bytes and waits for the next request on the connection.
        case reply([UInt8])
        /// Writes the bytes and closes the connection.
        case replyAndClose([UInt8])
        /// Closes the connection with a reset (RST), answering nothing.
        case reset
        /// Writes the bytes, then, once `delay` has passed, the unasked bytes on the idle
        /// connection, and waits for the next request on it.
        case replyThenUnasked([UInt8], after: Duration, unasked: [UInt8])
        /// Writes the pieces one after another with `interval` between them (a server that
        /// trickles, on a thread of its own), and waits for the next request on the connection.
        case paced([[UInt8]], interval: Duration)
    }

    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let script: @Sendable (Exchange) -> Action
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false thread-sanitizer report on Linux.
    private let lock = NSLock()
    private var stopped = false
    private var closed = false
    private var connections = 0
    private var received: [Exchange] = []

    /// Starts listening; `script` is called for each request, on the connection's thread.
    public init(_ script: @escaping @Sendable (Exchange) -> Action) throws {
        // Close-on-exec: a process a test starts (curl) must not inherit it.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw TestServerError("socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            _ = Glibc.close(listener)
            throw TestServerError("bind/listen failed: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = listener
        self.script = script
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// Every request read so far, in the order they were read.
    public var exchanges: [Exchange] { lock.withLock { received } }

    /// How many connections were accepted.
    public var connectionCount: Int { lock.withLock { connections } }

    /// `http://127.0.0.1:port` + `path`.
    public func url(_ path: String = "/") -> URL {
        // Every piece is ours and well-formed; a malformed path is a bug in the calling test.
        guard let url = URL(string: "http://127.0.0.1:\(port)\(path)") else {
            preconditionFailure("scripted responder URL for path \"\(path)\" is malformed")
        }
        return url
    }

    /// Stops accepting (the accept thread ends; open connections end with their clients).
    public func stop() {
        lock.withLock {
            guard !stopped, !closed else { return }
            stopped = true
            _ = shutdown(listener, Int32(SHUT_RDWR))
        }
    }

    /// Blocks the connection's thread for `duration`.
    private static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        usleep(UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
    }

    private func serve() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                let done: Bool = lock.withLock {
                    guard stopped else { return false }
                    closed = true
                    _ = Glibc.close(listener)
                    return true
                }
                if done { return }
                continue  // EINTR, a connection reset before it was accepted: go on
            }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            let number = lock.withLock {
                connections += 1
                return connections - 1
            }
            let thread = Thread { [self] in converse(connection, number: number) }
            thread.start()
        }
    }

    /// Serves one connection's requests until the script or the client ends it.
    private func converse(_ connection: Int32, number: Int) {
        // Long enough that a client's next request on a kept-alive connection still finds it open
        // when a parallel test run keeps the client's task waiting for seconds.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        _ = setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var pending: [UInt8] = []
        var index = 0
        while let (head, body) = readRequest(connection, &pending) {
            let exchange = Exchange(connection: number, index: index, head: head, body: body)
            lock.withLock { received.append(exchange) }
            index += 1
            switch script(exchange) {
            case .reply(let bytes):
                guard write(connection, bytes) else { break }
                continue
            case .replyThenUnasked(let bytes, let delay, let unasked):
                guard write(connection, bytes) else { break }
                Self.sleep(delay)
                guard write(connection, unasked) else { break }
                continue
            case .paced(let pieces, let interval):
                var written = true
                for (position, piece) in pieces.enumerated() where written {
                    if position > 0 { Self.sleep(interval) }
                    written = write(connection, piece)
                }
                guard written else { break }
                continue
            case .replyAndClose(let bytes):
                _ = write(connection, bytes)
            case .reset:
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                _ = setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            }
            break
        }
        _ = Glibc.close(connection)
    }

    /// Reads one request (head, then a body of its `Content-Length`); nil when the client
    /// closed or went quiet first.
    private func readRequest(_ connection: Int32, _ pending: inout [UInt8]) -> (String, [UInt8])? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        func fill() -> Bool {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return false }
            pending += buffer[..<count]
            return true
        }
        var headEnd: Int?
        while true {
            if let end = Self.find([13, 10, 13, 10], in: pending) {
                headEnd = end
                break
            }
            guard fill() else { return nil }
        }
        guard let headEnd else { return nil }
        let head = String(decoding: pending[..<headEnd], as: UTF8.self)
        pending.removeFirst(headEnd + 4)
        var length = 0
        for line in head.split(separator: "\r\n") {
            let field = line.lowercased()
            if field.hasPrefix("content-length:") {
                length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
            } else if field.hasPrefix("expect:"), field.contains("100-continue") {
                return (head, [])
            }
        }
        while pending.count < length {
            guard fill() else { return nil }
        }
        let body = Array(pending[..<length])
        pending.removeFirst(length)
        return (head, body)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }

    private func write(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }
}
