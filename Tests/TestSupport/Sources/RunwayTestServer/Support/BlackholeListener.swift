import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP port on 127.0.0.1 that never completes a connection: for connect-timeout tests.
///
/// It listens with a backlog of zero, never accepts, and fills its accept queue with its own
/// connections; the kernel then drops further SYNs, so a client's connect hangs until its
/// connect timeout.
public final class BlackholeListener: Sendable {
    /// The port that swallows connections.
    public let port: Int
    private let sockets: [Int32]

    private init(port: Int, sockets: [Int32]) {
        self.port = port
        self.sockets = sockets
    }

    deinit {
        for socket in sockets { _ = Glibc.close(socket) }
    }

    /// `http://127.0.0.1:port` + `path`.
    public func url(_ path: String = "/") -> URL {
        // Every piece is ours and well-formed; a malformed path is a bug in the calling test.
        guard let url = URL(string: "http://127.0.0.1:\(port)\(path)") else {
            preconditionFailure("blackhole URL for path \"\(path)\" is malformed")
        }
        return url
    }

    /// Opens the listener and fills its queue.
    public static func start() throws -> BlackholeListener {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw TestServerError("socket() failed: errno \(errno)") }
        var sockets = [listener]
        do {
            var address = loopback(port: 0)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0, listen(listener, 0) == 0 else { throw TestServerError("bind/listen failed: errno \(errno)") }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
            }
            let port = Int(UInt16(bigEndian: address.sin_port))
            // Connect until one does not complete: from then on the queue is full.
            for _ in 0..<16 {
                let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
                guard filler >= 0 else { throw TestServerError("socket() failed: errno \(errno)") }
                sockets.append(filler)
                var target = loopback(port: UInt16(port))
                _ = withUnsafePointer(to: &target) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                var poller = pollfd(fd: filler, events: Int16(POLLOUT), revents: 0)
                if poll(&poller, 1, 200) == 0 {
                    return BlackholeListener(port: port, sockets: sockets)
                }
            }
            throw TestServerError("the accept queue never filled up")
        } catch {
            for socket in sockets { _ = Glibc.close(socket) }
            throw error
        }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
