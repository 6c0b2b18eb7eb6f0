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
/// and has an IPv4 or IPv6 address beyond the local link; unreachable otherwise. A link-local
/// address (`169.254.0.0/16`, `fe80::/10`) does not count: an interface has one whether or not
/// a network is there (a Wi-Fi whose DHCP failed, a cable to a dead switch, the tunnels and
/// peer-to-peer interfaces a system keeps up).
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
        /// Whether it has an IPv4 or IPv6 address beyond the local link (not `169.254.0.0/16` or
        /// `fe80::/10`).
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
            let hasAddress = entry.pointee.ifa_addr.map { Self.reachesBeyondTheLink(UnsafePointer($0)) } ?? false
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

    /// Whether `address` is IPv4 or IPv6 and not link-local.
    static func reachesBeyondTheLink(_ address: UnsafePointer<sockaddr>) -> Bool {
        switch Int32(address.pointee.sa_family) {
        case Int32(AF_INET):
            let ipv4 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self).sin_addr
            return withUnsafeBytes(of: ipv4) { !isLinkLocal(family: AF_INET, $0) }
        case Int32(AF_INET6):
            let ipv6 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in6.self).sin6_addr
            return withUnsafeBytes(of: ipv6) { !isLinkLocal(family: AF_INET6, $0) }
        default:
            return false
        }
    }

    /// Whether the address `bytes` (network order) of `family` is link-local: `169.254.0.0/16`
    /// or `fe80::/10`.
    static func isLinkLocal(family: Int32, _ bytes: some Collection<UInt8>) -> Bool {
        let first = Array(bytes.prefix(2))
        guard first.count == 2 else { return false }
        return family == AF_INET ? first == [169, 254] : first[0] == 0xFE && first[1] & 0xC0 == 0x80
    }
}

extension ReachabilitySource where Self == NetworkInterfacesSource {
    /// The system's network interfaces (see ``NetworkInterfacesSource``).
    public static var interfaces: NetworkInterfacesSource { NetworkInterfacesSource() }
}
