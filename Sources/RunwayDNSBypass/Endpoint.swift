#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An address a host can be reached at directly: an IPv4 or IPv6 literal and an optional port.
///
/// Written `"203.0.113.7"`, `"203.0.113.7:8443"`, `"2001:db8::7"` or `"[2001:db8::7]:8443"`.
public struct Endpoint: Hashable, Sendable, CustomStringConvertible {
    /// The IP literal, without brackets.
    public let address: String
    /// The port to connect to; `nil` keeps the request URL's port.
    public let port: Int?
    /// Whether ``address`` is IPv6.
    public let isIPv6: Bool

    /// Parses an endpoint. Spaces, tabs and line breaks around it are ignored (a list read from
    /// a file or a response line by line, CRLF line ends included); inside it, nothing is.
    /// - Throws: ``DNSBypassError`` when the text is not an IP literal (host names are refused:
    ///   the point is to skip DNS) or the port is outside 1...65535.
    public init(_ text: String) throws(DNSBypassError) {
        var host = Substring(text.trimmingASCIIWhitespace)
        var port: Int?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw .invalidEndpoint(text) }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let value = Int(rest.dropFirst()) else { throw .invalidEndpoint(text) }
                port = value
            }
        } else if host.filter({ $0 == ":" }).count == 1, let colon = host.firstIndex(of: ":") {
            guard let value = Int(host[host.index(after: colon)...]) else { throw .invalidEndpoint(text) }
            port = value
            host = host[..<colon]
        }
        if let port, !(1...65535).contains(port) { throw .invalidEndpoint(text) }
        let literal = String(host)
        if Self.parses(literal, family: AF_INET) {
            isIPv6 = false
        } else if Self.parses(literal, family: AF_INET6) {
            isIPv6 = true
        } else {
            throw .invalidEndpoint(text)
        }
        address = literal
        self.port = port
    }

    public var description: String {
        let host = isIPv6 ? "[\(address)]" : address
        return port.map { "\(host):\($0)" } ?? host
    }

    private static func parses(_ literal: String, family: Int32) -> Bool {
        var buffer = (UInt64(0), UInt64(0))
        return withUnsafeMutableBytes(of: &buffer) { inet_pton(family, literal, $0.baseAddress) == 1 }
    }
}

extension String {
    /// The text without the spaces, tabs, carriage returns and line feeds around it.
    var trimmingASCIIWhitespace: String {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        guard isSpace(utf8.first ?? 0) || isSpace(utf8.last ?? 0) else { return self }
        return String(decoding: utf8.drop(while: isSpace).reversed().drop(while: isSpace).reversed(), as: UTF8.self)
    }
}
