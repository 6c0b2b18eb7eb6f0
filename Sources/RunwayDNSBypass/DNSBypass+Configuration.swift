import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DNSBypass {
    /// The addresses, the IP-list API, the store file and how addresses are measured.
    public struct Configuration: Sendable {
        /// Addresses known at build time, per host name (`"api.example.com": ["203.0.113.7"]`). A
        /// name matches in any case, with or without the trailing dot of a fully qualified name; its
        /// labels are 1 to 63 letters, digits and inner hyphens (anything else fails the build of the
        /// bypass with `.configuration`). An internationalized name (`"bücher.example"`) is kept in
        /// the ASCII form URLs carry (`xn--bcher-kva.example`), whichever form a request's URL uses.
        public var hosts: [String: [String]]
        /// The IP-list API, if any.
        public var ipListSource: IPListSource?
        /// The shortest time between two fetches of the IP list (a day by default; at least a minute).
        public var refreshInterval: Duration
        /// Where the fetched list is kept between runs; `nil` keeps it in memory only.
        public var storeFile: URL?
        /// How addresses are measured.
        public var probe: ProbeMethod
        /// The longest a probe waits for one address.
        public var probeTimeout: Duration
        /// The connect budget of one address before the next is tried; the whole failover stays
        /// within the request's `connectTimeout`.
        public var perAddressConnectTimeout: Duration
        /// When every address failed to connect, try once more through normal DNS.
        public var fallsBackToDNS: Bool
        /// Told about problems that do not fail a request (a corrupt store, a failed fetch).
        public var onProblem: (@Sendable (DNSBypassError) -> Void)?

        /// Creates a configuration; see each property for the defaults.
        public init(
            hosts: [String: [String]],
            ipListSource: IPListSource? = nil,
            refreshInterval: Duration = .seconds(24 * 3600),
            storeFile: URL? = nil,
            probe: ProbeMethod = .tcpConnect(),
            probeTimeout: Duration = .seconds(2),
            perAddressConnectTimeout: Duration = .seconds(2),
            fallsBackToDNS: Bool = true,
            onProblem: (@Sendable (DNSBypassError) -> Void)? = nil
        ) {
            self.hosts = hosts
            self.ipListSource = ipListSource
            self.refreshInterval = refreshInterval
            self.storeFile = storeFile
            self.probe = probe
            self.probeTimeout = probeTimeout
            self.perAddressConnectTimeout = perAddressConnectTimeout
            self.fallsBackToDNS = fallsBackToDNS
            self.onProblem = onProblem
        }

        /// Checks every value; returns the parsed host table.
        func validated() throws(RunwayError) -> [String: [Endpoint]] {
            func bad(_ field: String, _ message: String, _ underlying: DNSBypassError? = nil) -> RunwayError {
                RunwayError(
                    .configuration, "DNS bypass: \(message)", stage: .interceptor("dns-bypass"), field: field, underlying: underlying)
            }
            guard !hosts.isEmpty || ipListSource != nil else { throw bad("hosts", "no host addresses and no IP-list API") }
            guard refreshInterval >= .seconds(60) else { throw bad("refreshInterval", "refreshInterval must be at least a minute") }
            guard probeTimeout > .zero else { throw bad("probeTimeout", "probeTimeout must be positive") }
            guard perAddressConnectTimeout > .zero else {
                throw bad("perAddressConnectTimeout", "perAddressConnectTimeout must be positive")
            }
            if case .tcpConnect(let port) = probe.kind, !(1...65535).contains(port) {
                throw bad("probe", "the TCP probe's default port \(port) is not within 1...65535")
            }
            if case .httpPing(let path, let scheme, let samples, _, _) = probe.kind {
                guard (1...10).contains(samples) else { throw bad("probe", "ping samples must be within 1...10") }
                guard scheme == "http" || scheme == "https" else { throw bad("probe", "ping scheme must be http or https") }
                guard !path.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" }) else {
                    throw bad("probe", "ping path contains spaces or line breaks")
                }
            }
            do {
                return try Self.parse(hosts)
            } catch {
                throw bad("hosts", error.message, error)
            }
        }

        /// Parses a host → addresses table, rejecting bad host names, bad addresses and empty lists.
        ///
        /// Spellings of one name (`api.example.com`, `API.example.com.`) are one host: their
        /// addresses are joined, in the order of the spellings as text, an address in both once.
        static func parse(_ table: [String: [String]]) throws(DNSBypassError) -> [String: [Endpoint]] {
            var parsed: [String: [Endpoint]] = [:]
            for (host, addresses) in table.sorted(by: { $0.key < $1.key }) {
                let name = DNSBypass.key(host)
                guard isHostName(name) else { throw .invalidHost(host) }
                guard !addresses.isEmpty else { throw .emptyAddressList(host) }
                var endpoints: [Endpoint] = []
                for address in addresses { endpoints.append(try Endpoint(address)) }
                if let earlier = parsed[name] {
                    let known = Set(earlier)
                    endpoints = earlier + endpoints.filter { !known.contains($0) }
                }
                parsed[name] = endpoints
            }
            return parsed
        }

        /// A DNS name as written in URLs (lowercased, without the trailing dot): labels of 1 to 63
        /// letters, digits and hyphens, none starting or ending with a hyphen, 253 bytes at most.
        static func isHostName(_ name: String) -> Bool {
            guard name.utf8.count <= 253 else { return false }
            return name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).allSatisfy { label in
                guard (1...63).contains(label.count), label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-") else {
                    return false
                }
                return label.allSatisfy { byte in
                    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                        || byte == UInt8(ascii: "-")
                }
            }
        }
    }
}
