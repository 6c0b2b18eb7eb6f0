/// A problem with the DNS bypass's addresses: a bad entry, an unusable store file, a failed
/// IP-list fetch.
///
/// Configuration problems are reported when the ``DNSBypass`` is made (as `RunwayError`
/// `.configuration` wrapping one of these); store and fetch problems never fail a request —
/// they are reported to ``DNSBypass/Configuration/onProblem`` and kept in
/// ``DNSBypass/problems``, and the bypass carries on with what it has.
public struct DNSBypassError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case invalidEndpoint, invalidHost, emptyAddressList, corruptStore, storeWriteFailed, ipListFetchFailed, ipListInvalid
    }

    private let code: Code
    /// What happened, for people.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Not an IP literal with an optional port.
    public static func invalidEndpoint(_ text: String) -> DNSBypassError {
        DNSBypassError(.invalidEndpoint, "\"\(text)\" is not an IP address with an optional port 1...65535")
    }
    /// Not a host name (empty, a scheme, a port, a path...).
    public static func invalidHost(_ host: String) -> DNSBypassError {
        DNSBypassError(.invalidHost, "\"\(host)\" is not a host name")
    }
    /// A host with no address.
    public static func emptyAddressList(_ host: String) -> DNSBypassError {
        DNSBypassError(.emptyAddressList, "host \(host) has an empty address list")
    }
    /// The store file exists but cannot be used; it is ignored (and replaced after the next fetch).
    public static func corruptStore(_ reason: String) -> DNSBypassError {
        DNSBypassError(.corruptStore, "address store ignored: \(reason)")
    }
    /// The store file could not be written.
    public static func storeWriteFailed(_ reason: String) -> DNSBypassError {
        DNSBypassError(.storeWriteFailed, "address store not written: \(reason)")
    }
    /// The IP-list API could not be reached or answered with an error.
    public static func ipListFetchFailed(_ reason: String) -> DNSBypassError {
        DNSBypassError(.ipListFetchFailed, "IP list not fetched: \(reason)")
    }
    /// The IP-list API answered with something that is not an IP list.
    public static func ipListInvalid(_ reason: String) -> DNSBypassError {
        DNSBypassError(.ipListInvalid, "IP list rejected: \(reason)")
    }

    /// Whether this is a store file that was ignored.
    public var isCorruptStore: Bool { code == .corruptStore }
    /// Whether this is a failed or rejected IP-list fetch.
    public var isIPListProblem: Bool { code == .ipListFetchFailed || code == .ipListInvalid }

    /// Errors compare by kind, not by message.
    public static func == (lhs: DNSBypassError, rhs: DNSBypassError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String { message }
}
