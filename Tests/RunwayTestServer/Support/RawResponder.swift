import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP server on 127.0.0.1 that answers every connection with the same bytes, whatever was
/// asked, then closes it: for replies no HTTP server library would send (a garbage status line,
/// a folded header, a header over a client's limit). Call ``stop()`` when done: the accept
/// thread holds it until then.
public final class RawResponder: @unchecked Sendable {
    // @unchecked Sendable: `listener`, `port` and `reply` are set once in `init`; `stopped`
    // and `closed` are guarded by `lock`. The accept thread alone closes the listener, and
    // `stop()` shuts it down only while it is open (its number could be another socket's after).
    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let reply: [UInt8]
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false thread-sanitizer report on Linux.
    private let lock = NSLock()
    private var stopped = false
    private var closed = false

    /// Starts listening and answering with `reply`.
    public init(reply: [UInt8]) throws {
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
        self.reply = reply
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// Starts a responder whose reply is `text` (UTF-8) followed by `extra` bytes.
    public convenience init(_ text: String, extra: [UInt8] = []) throws {
        try self.init(reply: Array(text.utf8) + extra)
    }

    /// `http://127.0.0.1:port` + `path`.
    public func url(_ path: String = "/") -> URL {
        // Every piece is ours and well-formed; a malformed path is a bug in the calling test.
        guard let url = URL(string: "http://127.0.0.1:\(port)\(path)") else {
            preconditionFailure("raw responder URL for path \"\(path)\" is malformed")
        }
        return url
    }

    /// Stops accepting (the accept thread ends).
    public func stop() {
        lock.withLock {
            guard !stopped, !closed else { return }
            stopped = true
            _ = shutdown(listener, Int32(SHUT_RDWR))
        }
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
            // Read the request head (or whatever comes within a second), then answer.
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            _ = setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !received.suffix(4).elementsEqual([13, 10, 13, 10]) {
                let count = recv(connection, &buffer, buffer.count, 0)
                guard count > 0 else { break }
                received += buffer[..<count]
            }
            var offset = 0
            while offset < reply.count {
                let sent = reply[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard sent > 0 else { break }
                offset += sent
            }
            _ = Glibc.close(connection)
        }
    }
}
