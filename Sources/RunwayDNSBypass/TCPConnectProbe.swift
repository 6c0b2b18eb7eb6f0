import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Measures TCP connect time to many addresses at once: one non-blocking socket each, all
/// watched by a single `poll` on a dispatch thread, so nothing blocks the cooperative pool.
enum TCPConnectProbe {
    /// The connect time of each target, or `nil` when it refused, was unreachable or did not
    /// answer within `timeout`. Results are in the order of `targets`.
    static func measure(_ targets: [(endpoint: Endpoint, port: Int)], timeout: Duration) async -> [Duration?] {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: measureBlocking(targets, timeout: timeout))
            }
        }
    }

    private static func measureBlocking(_ targets: [(endpoint: Endpoint, port: Int)], timeout: Duration) -> [Duration?] {
        let clock = ContinuousClock()
        let start = clock.now
        var results = [Duration?](repeating: nil, count: targets.count)
        var sockets = [Int32](repeating: -1, count: targets.count)
        defer { for fd in sockets where fd >= 0 { close(fd) } }

        for (index, target) in targets.enumerated() {
            let fd = startConnect(to: target.endpoint, port: target.port)
            switch fd {
            case .connected(let descriptor):
                sockets[index] = descriptor
                results[index] = clock.now - start
            case .pending(let descriptor):
                sockets[index] = descriptor
            case .failed:
                break
            }
        }

        var pending = Set(sockets.indices.filter { sockets[$0] >= 0 && results[$0] == nil })
        while !pending.isEmpty {
            let remaining = timeout - (clock.now - start)
            guard remaining > .zero else { break }
            let order = Array(pending)
            var fds = order.map { pollfd(fd: sockets[$0], events: Int16(POLLOUT), revents: 0) }
            // At most a day per wait (the loop waits again): a timeout of `.seconds(.max)`
            // would overflow in milliseconds.
            let wait = min(remaining, .seconds(86_400))
            let milliseconds = Int32(clamping: wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&fds, nfds_t(fds.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            let now = clock.now
            for (slot, index) in order.enumerated() where fds[slot].revents != 0 {
                pending.remove(index)
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                let status = getsockopt(sockets[index], SOL_SOCKET, SO_ERROR, &error, &length)
                if status == 0, error == 0, fds[slot].revents & Int16(POLLOUT) != 0 {
                    results[index] = now - start
                }
            }
        }
        return results
    }

    private enum Start {
        case connected(Int32)
        case pending(Int32)
        case failed
    }

    private static func startConnect(to endpoint: Endpoint, port: Int) -> Start {
        #if canImport(Glibc)
        let streamType = Int32(SOCK_STREAM.rawValue)
        #else
        let streamType = SOCK_STREAM
        #endif
        let family = endpoint.isIPv6 ? AF_INET6 : AF_INET
        let fd = socket(family, streamType, 0)
        guard fd >= 0 else { return .failed }
        let flags = fcntl(fd, F_GETFL, 0)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
            close(fd)
            return .failed
        }
        let status: Int32
        if endpoint.isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(clamping: port).bigEndian)
            guard inet_pton(AF_INET6, endpoint.address, &address.sin6_addr) == 1 else {
                close(fd)
                return .failed
            }
            status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(clamping: port).bigEndian)
            guard inet_pton(AF_INET, endpoint.address, &address.sin_addr) == 1 else {
                close(fd)
                return .failed
            }
            status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        if status == 0 { return .connected(fd) }
        if errno == EINPROGRESS { return .pending(fd) }
        close(fd)
        return .failed
    }
}
