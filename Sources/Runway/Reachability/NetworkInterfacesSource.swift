import RunwayCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reachability derived from the system's network interfaces (`getifaddrs`, on Linux and
/// Apple platforms): reachable when at least one interface other than loopback is up, running
/// and has an IPv4 or IPv6 address; unreachable otherwise.
///
/// This is the interface layer only: it notices Wi-Fi off, cable out, airplane mode, a VPN-only
/// namespace with no route; it does not prove that a server answers (combine with probe
/// failures via ``ReachabilityMonitor/recordProbe(succeeded:host:)``).
public struct NetworkInterfacesSource: ReachabilitySource {
    /// One interface as `getifaddrs` reports it.
    public struct Interface: Hashable, Sendable {
        /// The interface name (`eth0`, `wlan0`, `lo`).
        public let name: String
        /// Whether it is up and running.
        public let isUp: Bool
        /// Whether it is a loopback interface.
        public let isLoopback: Bool
        /// Whether it has an IPv4 or IPv6 address.
        public let hasAddress: Bool
    }

    /// Interface names to ignore besides loopback (container bridges, say).
    public var ignoredNames: Set<String>

    /// Creates the source.
    public init(ignoredNames: Set<String> = []) {
        self.ignoredNames = ignoredNames
    }

    public func currentStatus() -> ReachabilityStatus {
        let usable = Self.interfaces().contains { $0.isUp && !$0.isLoopback && $0.hasAddress && !ignoredNames.contains($0.name) }
        return usable ? .reachable : .unreachable
    }

    /// The interfaces now, one entry per name (addresses of one interface merged).
    public static func interfaces() -> [Interface] {
        var head: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&head) == 0, let first = head else { return [] }
        defer { freeifaddrs(head) }
        var byName: [String: Interface] = [:]
        var order: [String] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            let flags = Int32(bitPattern: UInt32(entry.pointee.ifa_flags))
            let name = String(cString: entry.pointee.ifa_name)
            let family = entry.pointee.ifa_addr.map { Int32($0.pointee.sa_family) }
            let hasAddress = family == Int32(AF_INET) || family == Int32(AF_INET6)
            let isUp = flags & Int32(IFF_UP) != 0 && flags & Int32(IFF_RUNNING) != 0
            let isLoopback = flags & Int32(IFF_LOOPBACK) != 0
            if let existing = byName[name] {
                byName[name] = Interface(
                    name: name, isUp: existing.isUp || isUp, isLoopback: existing.isLoopback || isLoopback,
                    hasAddress: existing.hasAddress || hasAddress)
            } else {
                byName[name] = Interface(name: name, isUp: isUp, isLoopback: isLoopback, hasAddress: hasAddress)
                order.append(name)
            }
            cursor = entry.pointee.ifa_next
        }
        return order.compactMap { byName[$0] }
    }
}

extension ReachabilitySource where Self == NetworkInterfacesSource {
    /// The system's network interfaces (see ``NetworkInterfacesSource``).
    public static var interfaces: NetworkInterfacesSource { NetworkInterfacesSource() }
}
