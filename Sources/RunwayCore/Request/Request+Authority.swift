#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Request {
    /// Throws `.invalidURL` unless `url`'s host and port are what they seem. Foundation's parser
    /// takes more than a connection can use, and the dispatcher would fail later, after the
    /// request counted as sent:
    /// - a host that decodes to a character no host name holds (`/`, `\`, `@`, `%`, `#`, `?`,
    ///   `:`, brackets, a space, a control character): `127.0.0.1%2F.evil` or `%00` is no host;
    /// - brackets around what is not an IPv6 address (`[::g]`, `[127.0.0.1]`);
    /// - a port that is not a number from 0 to 65535 (one too large for an `Int`, which
    ///   Foundation reads as no port at all).
    ///
    /// Percent-encoded bytes beyond ASCII stay allowed: that is how a URL carries an
    /// internationalized host name (`b%C3%BCcher.de`).
    /// - Parameter absolute: `url.absoluteString`, which the caller has already.
    package static func checkHostAndPort(of url: URL, absolute: String) throws(RunwayError) {
        guard let host = url.host, !host.isEmpty else {
            throw RunwayError(.invalidURL, "URL has no host: \"\(RunwayError.text(forURL: absolute))\"")
        }
        let authority = Self.authority(of: absolute)
        // After the userinfo, which may hold any character percent-encoded.
        let hostAndPort = authority.lastIndex(of: UInt8(ascii: "@")).map { authority[authority.index(after: $0)...] } ?? authority
        let portText: Substring.UTF8View.SubSequence
        if hostAndPort.first == UInt8(ascii: "[") {
            guard let close = hostAndPort.firstIndex(of: UInt8(ascii: "]")), Self.isIPv6Address(host) else {
                throw RunwayError(
                    .invalidURL, "URL's host in brackets is not an IPv6 address: \"\(RunwayError.text(forURL: absolute))\"")
            }
            let rest = hostAndPort[hostAndPort.index(after: close)...]
            guard rest.isEmpty || rest.first == UInt8(ascii: ":") else {
                throw RunwayError(.invalidURL, "URL's authority goes on after its IPv6 address: \"\(RunwayError.text(forURL: absolute))\"")
            }
            portText = rest.dropFirst()
        } else {
            if let bad = host.unicodeScalars.first(where: Self.isForbiddenInHost) {
                let shown = bad.value < 0x21 || bad.value == 0x7F ? "the control character \(bad.escaped(asASCII: true))" : "\"\(bad)\""
                throw RunwayError(
                    .invalidURL, "URL's host holds \(shown), which no host name has: \"\(RunwayError.text(forURL: absolute))\"")
            }
            portText =
                hostAndPort.lastIndex(of: UInt8(ascii: ":")).map { hostAndPort[hostAndPort.index(after: $0)...] }
                ?? hostAndPort[hostAndPort.endIndex...]
        }
        // Empty (`host:`) is the scheme's default port.
        guard !portText.isEmpty else { return }
        guard portText.count <= 5, portText.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let port = Int(Substring(portText)), port <= 65535
        else {
            throw RunwayError(
                .invalidURL,
                "URL's port \"\(Substring(portText.prefix(24)))\" is not a number from 0 to 65535: "
                    + "\"\(RunwayError.text(forURL: absolute))\""
            )
        }
    }

    /// Throws `.invalidURL` when the authority of `text`, an absolute URL as written, holds a
    /// character RFC 3986 never allows there raw: `\`, `<`, `>`, `^`, `|`, `"`, `{`, `}` or a
    /// backtick. Foundation's parser would percent-encode it into the userinfo, while a browser's
    /// reads `http://a.example\@b.example/` as a request to `a.example`: what an allow-list
    /// approved would not be where the request goes.
    package static func checkAuthorityText(_ text: String, what: String) throws(RunwayError) {
        let authority = Self.authority(of: text)
        let forbidden = "\\<>^|\"{}`".utf8
        guard let bad = authority.first(where: { forbidden.contains($0) }) else { return }
        throw RunwayError(
            .invalidURL,
            "\(what)'s authority (what comes before the path) holds \"\(Character(Unicode.Scalar(bad)))\" "
                + "(percent-encode it: %\(String(bad, radix: 16, uppercase: true))): "
                + RunwayError.text(forURL: text).debugDescription)
    }

    /// The authority of an absolute URL's text: from after `scheme://` to the first `/`, `?` or
    /// `#`; empty without `://`.
    package static func authority(of absolute: String) -> Substring.UTF8View {
        let text = absolute[...].utf8
        // Found over the bytes (every request's URL is read here), then made indices once.
        let bounds: Range<Int>? = absolute.withUTF8Bytes { bytes in
            var colon = 0
            while colon < bytes.count, bytes[colon] != UInt8(ascii: ":") { colon += 1 }
            guard colon + 2 < bytes.count, bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") else {
                return nil
            }
            var end = colon + 3
            while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") {
                end += 1
            }
            return (colon + 3)..<end
        }
        guard let bounds else { return text[text.endIndex...] }
        let start = text.index(text.startIndex, offsetBy: bounds.lowerBound)
        return text[start..<text.index(start, offsetBy: bounds.count)]
    }

    /// Throws `.invalidRequest` for a connect override no connection can follow, which would
    /// otherwise be cut short or never match, and the request go elsewhere than configured: a
    /// port that is not a number from 0 to 65535; a host or address holding a control character
    /// (a NUL would end the address there), a space, `/`, `\`, `?`, `#` or `@`; a colon other
    /// than an IPv6 address's (`127.0.0.1:8443` as an address: the port goes in `connectPort`);
    /// brackets around what is not an IPv6 address. An empty host or address is libcurl's "any
    /// host" and "the URL's host". A name or IPv4 address is checked over its bytes, without
    /// allocating (the DNS bypass gives every request of its hosts an override); only a name
    /// with a colon or bracket is then parsed as an IPv6 address.
    func validateConnectOverrides(_ overrides: [ConnectOverride]) throws(RunwayError) {
        for override in overrides {
            let problem: String? =
                if let port = override.port, !(0...65535).contains(port) {
                    "port \(port) is not a number from 0 to 65535"
                } else if let port = override.connectPort, !(0...65535).contains(port) {
                    "connectPort \(port) is not a number from 0 to 65535"
                } else if let reason = Self.connectNameProblem(override.host) {
                    "host \(override.host.debugDescription) \(reason)"
                } else if let reason = Self.connectNameProblem(override.connectHost) {
                    "connectHost \(override.connectHost.debugDescription) \(reason)"
                } else {
                    nil
                }
            if let problem {
                throw RunwayError(.invalidRequest, "connect override for \(override.host.debugDescription): \(problem)")
            }
        }
    }

    /// Why `name` cannot be a connect override's host or address, or `nil` when it can.
    private static func connectNameProblem(_ name: String) -> String? {
        let (bad, colonOrBracket) = name.withUTF8Bytes { bytes -> (UInt8?, Bool) in
            var colonOrBracket = false
            for index in bytes.indices {
                switch bytes[index] {
                case 0...0x20, 0x7F, UInt8(ascii: "/"), UInt8(ascii: "\\"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "@"):
                    return (bytes[index], colonOrBracket)
                case UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
                    colonOrBracket = true
                default:
                    break
                }
            }
            return (nil, colonOrBracket)
        }
        if let bad {
            return "holds \(Unicode.Scalar(bad).escaped(asASCII: true).debugDescription), which no host name or address has"
        }
        guard colonOrBracket else { return nil }
        let bracketed = name.hasPrefix("[") && name.hasSuffix("]") && name.utf8.count > 2
        guard isIPv6Address(bracketed ? String(name.dropFirst().dropLast()) : name) else {
            return "is no host name, and not an IPv6 address (a port goes in port or connectPort)"
        }
        return nil
    }

    /// What WHATWG's URL standard forbids in a domain, once decoded: a host holding one is
    /// either a trick (`a%2F.evil`) or a mistake.
    private static func isForbiddenInHost(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "\u{0}"..."\u{20}", "\u{7F}", "#", "%", "/", ":", "<", ">", "?", "@", "[", "\\", "]", "^", "|": true
        default: false
        }
    }

    /// Whether `host` (as `URL.host` gives a bracketed literal: without brackets, a zone after
    /// `%`) is an IPv6 address.
    static func isIPv6Address(_ host: String) -> Bool {
        let address = host.prefix { $0 != "%" }
        var parsed = in6_addr()
        return inet_pton(AF_INET6, String(address), &parsed) == 1
    }
}
