import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP port on 127.0.0.1 and ::1 that refuses every connection, and that no other server can
/// take while this value lives: for tests of a host that is down.
///
/// A server started and shut down frees its port, and a server of a test running alongside
/// may be given that port a moment later: the "dead" URL then answers. This port is bound and
/// never listened on, so the kernel refuses connections to it and keeps it from other sockets;
/// on ::1 too (where the machine has IPv6), so a test may probe both loopback addresses.
public final class RefusingPort: Sendable {
    /// The port that refuses connections.
    public let port: Int
    private let sockets: [Int32]

    /// Binds a free port on 127.0.0.1, and the same port on ::1, without listening on them.
    public init() throws {
        // The number the kernel gives on 127.0.0.1 may be taken on ::1: then another one.
        for _ in 0..<32 {
            let (v4, port) = try Self.bindV4()
            let v6 = Glibc.socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
            guard v6 >= 0 else {
                (self.port, sockets) = (port, [v4])  // no IPv6 here
                return
            }
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            address.sin6_addr = in6addr_loopback
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(v6, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0 }
            }
            if bound {
                (self.port, sockets) = (port, [v4, v6])
                return
            }
            let code = errno
            _ = Glibc.close(v6)
            guard code == EADDRINUSE else {
                (self.port, sockets) = (port, [v4])  // no ::1 here
                return
            }
            _ = Glibc.close(v4)
        }
        throw TestServerError("no port was free on both 127.0.0.1 and ::1")
    }

    /// A free port bound on 127.0.0.1, and its socket.
    private static func bindV4() throws -> (Int32, Int) {
        let bound = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard bound >= 0 else { throw TestServerError("socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(bound, $0, length) == 0 && getsockname(bound, $0, &length) == 0
            }
        }
        guard named else {
            let code = errno
            _ = Glibc.close(bound)
            throw TestServerError("bind() failed: errno \(code)")
        }
        return (bound, Int(UInt16(bigEndian: address.sin_port)))
    }

    deinit {
        for socket in sockets { _ = Glibc.close(socket) }
    }

    /// `http://127.0.0.1:port` + `path`.
    public func url(_ path: String = "/") -> URL {
        // Every piece is ours and well-formed; a malformed path is a bug in the calling test.
        guard let url = URL(string: "http://127.0.0.1:\(port)\(path)") else {
            preconditionFailure("refusing-port URL for path \"\(path)\" is malformed")
        }
        return url
    }
}
