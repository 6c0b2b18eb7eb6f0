#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A cookie a server set, as a ``CookieJar`` keeps it (RFC 6265).
///
/// `Codable`, so an app can keep a jar's cookies across launches (``CookieJar/cookies`` out,
/// ``CookieJar/init(cookies:now:)`` in). Its value is often a session's secret: neither its
/// description nor its mirror shows it.
public struct Cookie: Sendable, Hashable, Codable {
    /// The name, as the server sent it.
    public var name: String
    /// The value, as the server sent it (quotes included). Bytes that are not UTF-8 were read as
    /// ISO-8859-1 (one character each) and go back as those characters in UTF-8: a server that
    /// sets such a value gets other bytes back (RFC 6265 asks for ASCII values).
    public var value: String
    /// The host it goes to (``hostOnly``), or the domain it goes to with all its subdomains:
    /// lowercased, without a leading dot.
    public var domain: String
    /// Whether it goes to ``domain`` exactly, not to its subdomains: the server set no `Domain`.
    public var hostOnly: Bool
    /// The path it goes to, with all the paths below it.
    public var path: String
    /// When it expires; `nil` for a session cookie, kept as long as the jar.
    public var expires: Date?
    /// Whether it goes over HTTPS only.
    public var secure: Bool
    /// Whether the server marked it `HttpOnly` (kept for a jar written back to a browser; an
    /// API client sends it like any other).
    public var httpOnly: Bool
    /// When the jar first stored it; a new value from the server keeps it. Cookies of paths
    /// equally long are sent oldest first.
    public var created: Date

    /// Creates a cookie, to put into a jar (``CookieJar/init(cookies:now:)``).
    public init(
        name: String, value: String, domain: String, hostOnly: Bool = true, path: String = "/", expires: Date? = nil,
        secure: Bool = false, httpOnly: Bool = false, created: Date = Date()
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.hostOnly = hostOnly
        self.path = path
        self.expires = expires
        self.secure = secure
        self.httpOnly = httpOnly
        self.created = created
    }

    /// Whether it has expired at `now`.
    public func isExpired(at now: Date) -> Bool {
        expires.map { $0 <= now } ?? false
    }
}

extension Cookie: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Its name, where it goes and its flags; never its value.
    public var description: String {
        var text = "Cookie(\(name)=<\(value.utf8.count) bytes>; \(hostOnly ? "host" : "domain") \(domain); path \(path)"
        if let expires { text += "; expires \(Int(expires.timeIntervalSince1970))" }
        if secure { text += "; secure" }
        if httpOnly { text += "; httpOnly" }
        return text + ")"
    }

    public var debugDescription: String { description }

    /// Every property but the value, so `dump` and a debugger show no secret.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "name": name, "domain": domain, "hostOnly": hostOnly, "path": path, "expires": expires as Any, "secure": secure,
                "httpOnly": httpOnly, "created": created,
            ], displayStyle: .struct)
    }
}
