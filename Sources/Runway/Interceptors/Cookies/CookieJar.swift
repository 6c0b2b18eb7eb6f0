import RunwayCore
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The cookies servers set, kept and sent back as RFC 6265 says: by host or domain, path,
/// expiry and scheme. The ``CookieInterceptor`` fills it from responses and sends from it.
///
/// ```swift
/// let jar = CookieJar()
/// let pipeline = Pipeline(interceptors: [.cookies(jar), try .retry(maxAttempts: 3)], dispatcher: CurlDispatcher())
/// // ... a login sets a session cookie; every later call to that host sends it ...
/// jar.removeAll()   // sign out
/// ```
///
/// What it refuses (the cookie is ignored, the response is not):
/// - a `Domain` the URL's host is not in (`evil.test` setting a cookie for `bank.test`), a
///   `Domain` that is a public suffix (`com`, `co.uk`, `github.io`: anyone may register a name
///   under it, so its cookie would go to every site there; one label, `localhost`, counts as
///   one), and any `Domain` but the address itself from a host given as an IP address (and a
///   domain cookie never goes to an address, whatever its digits). The Public Suffix List
///   (publicsuffix.org) is built in. A host that is itself a public suffix may name itself:
///   its cookie then stays its own, as one without `Domain`.
/// - a `Secure` cookie from plain HTTP, and a plain-HTTP cookie that would replace or shadow a
///   `Secure` one of the same name (RFC 6265bis);
/// - a name and value over 4,096 bytes, a control character, no `=`, an empty name;
/// - a name starting `__Secure-` (in any case) without `Secure`, and one starting `__Host-`
///   without `Secure`, with a `Domain`, or with a `Path` other than `/` (RFC 6265bis): a server
///   trusts such a cookie to have come over HTTPS, and a `__Host-` one to be its host's alone.
///
/// It holds at most 50 cookies per domain and 3,000 in all, dropping expired cookies first, then
/// those set longest ago. Expiries are at most 400 days ahead (RFC 6265bis). It lives in memory: to keep
/// cookies across launches, save ``cookies`` (`Cookie` is `Codable`) and pass them to
/// ``init(cookies:now:)``. Thread-safe.
public final class CookieJar: Sendable {
    /// The most cookies kept for one domain.
    public static let maximumCookiesPerDomain = 50
    /// The most cookies kept in all.
    public static let maximumCookies = 3_000

    private struct Key: Hashable {
        let name: String
        let domain: String
        let path: String
    }

    /// A kept cookie, and when it came and was last set, counted in stores: cookies of one
    /// response share their creation time, and are sent in the order the server set them; the
    /// limits drop those set longest ago.
    private struct Entry {
        var cookie: Cookie
        let arrival: UInt64
        var lastSet: UInt64
    }

    private struct Stored {
        var entries: [Key: Entry] = [:]
        var stores: UInt64 = 0
    }

    private let stored: Locked<Stored>
    private let now: @Sendable () -> Date

    /// Creates a jar.
    /// - Parameters:
    ///   - cookies: Cookies to start with (saved from an earlier launch), held to the rules of
    ///     cookies a server sets, since a saved file may be corrupt or edited: a domain is
    ///     lowercased and loses a leading and a trailing dot (and an IPv6 address its brackets),
    ///     blanks around a name and value go, an expiry over 400 days ahead is brought back;
    ///     a cookie the jar would never have kept is dropped (expired, an empty name or domain, a
    ///     control character, `=` or `;` in its name, `;` in its value, a name and value over
    ///     4,096 bytes, a path not starting with `/`, a `__Secure-` or `__Host-` name that breaks
    ///     its prefix's promise); a domain cookie for a public suffix goes to that host alone;
    ///     then the limits apply.
    ///   - now: The clock that expiries are measured by (a test's own).
    public init(cookies: [Cookie] = [], now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
        stored = Locked(Stored())
        let time = now()
        stored.withLock { stored in
            for cookie in cookies {
                if let cookie = Self.restored(cookie, now: time) { Self.insert(cookie, into: &stored, now: time) }
            }
        }
    }

    /// The cookies kept, unexpired, in no particular order: what to save to keep them.
    public var cookies: [Cookie] {
        let time = now()
        return stored.withLock { $0.entries.values.map(\.cookie) }.filter { !$0.isExpired(at: time) }
    }

    /// Keeps what a response from `url` sets, one `Set-Cookie` field value each; a value that is
    /// malformed or not allowed for `url` is ignored (see ``CookieJar``). A cookie with the name,
    /// domain and path of a kept one replaces it; one already expired removes it.
    public func store(setCookie values: [String], from url: URL) {
        guard let origin = CookieOrigin(url) else { return }
        let time = now()
        let cookies = values.compactMap { SetCookie($0, now: time).flatMap { Self.cookie($0, from: origin, now: time) } }
        guard !cookies.isEmpty else { return }
        stored.withLock { stored in
            for cookie in cookies {
                if !origin.secure, Self.shadowsSecureCookie(cookie, in: stored.entries) { continue }
                let key = Key(name: cookie.name, domain: cookie.domain, path: cookie.path)
                if cookie.isExpired(at: time) {
                    stored.entries[key] = nil
                    continue
                }
                var cookie = cookie
                if let kept = stored.entries[key] { cookie.created = kept.cookie.created }
                Self.insert(cookie, into: &stored, now: time)
            }
        }
    }

    /// The cookies that go with a request to `url`, in the order they are sent: longer paths
    /// first, then the older.
    public func cookies(for url: URL) -> [Cookie] {
        matching(url).map(\.cookie)
    }

    /// The `Cookie` header value for a request to `url` (`a=1; b=2`); `nil` when no cookie goes.
    public func cookieHeader(for url: URL) -> String? {
        let matching = matching(url)
        guard !matching.isEmpty else { return nil }
        var header = ""
        for entry in matching {
            if !header.isEmpty { header += "; " }
            header += entry.cookie.name
            header += "="
            header += entry.cookie.value
        }
        return header
    }

    /// The entries of the cookies that go to `url`, in sending order. Runs for every request of a
    /// chain with the cookie interceptor, so an empty jar answers before the URL is read.
    private func matching(_ url: URL) -> [Entry] {
        guard !stored.withLock({ $0.entries.isEmpty }), let origin = CookieOrigin(url) else { return [] }
        let time = now()
        var matching = stored.withLock { stored in
            stored.entries.values.filter { entry in
                let cookie = entry.cookie
                return !cookie.isExpired(at: time) && (!cookie.secure || origin.secure)
                    // A domain cookie goes to host names only (RFC 6265 §5.1.3): not to 127.0.0.1
                    // for the domain 0.0.1 a host named x.0.0.1 set.
                    && (cookie.hostOnly
                        ? origin.host == cookie.domain : !origin.isAddress && CookieOrigin.domainMatches(origin.host, cookie.domain))
                    && CookieOrigin.pathMatches(origin.path, cookie.path)
            }
        }
        if matching.count > 1 { matching.sort(by: Self.sendsFirst) }
        return matching
    }

    /// Removes the cookies `predicate` selects (those of one domain, say).
    public func remove(where predicate: (Cookie) -> Bool) {
        stored.withLock { stored in stored.entries = stored.entries.filter { !predicate($0.value.cookie) } }
    }

    /// Removes every cookie (a sign-out).
    public func removeAll() {
        stored.withLock { $0.entries.removeAll() }
    }

    /// Removes the cookies without an expiry, as a browser does when it closes.
    public func removeSessionCookies() {
        remove { $0.expires == nil }
    }

    // MARK: Storing

    /// The cookie a parsed `Set-Cookie` makes for `origin`, or `nil` when it is not allowed there.
    private static func cookie(_ parsed: SetCookie, from origin: CookieOrigin, now: Date) -> Cookie? {
        if parsed.secure, !origin.secure { return nil }
        var domain = origin.host
        var hostOnly = true
        if let attribute = parsed.domain, attribute != origin.host {
            // Another domain than the host itself: the host must be in it, named by a name (not an
            // address), and it must not be a public suffix (nor one label, which the list counts
            // as one): `Domain=co.uk` would go to every site under it.
            guard !origin.isAddress, CookieOrigin.domainMatches(origin.host, attribute), !PublicSuffixes.isPublicSuffix(attribute) else {
                return nil
            }
            domain = attribute
            hostOnly = false
        } else if parsed.domain != nil {
            // `Domain` naming the host itself: its subdomains too, unless the host is an address or
            // itself a public suffix (`github.io`), whose cookie stays its own (RFC 6265 §5.3).
            hostOnly = origin.isAddress || PublicSuffixes.isPublicSuffix(origin.host)
        }
        // Name prefixes (RFC 6265bis §4.1.3), in any case: a server trusts a `__Secure-` cookie to
        // have come over HTTPS, and a `__Host-` one also to be its host's alone, for every path.
        guard keepsPrefixPromise(parsed.name, secure: parsed.secure, ownHostAlone: parsed.domain == nil, path: parsed.path) else {
            return nil
        }
        return Cookie(
            name: parsed.name, value: parsed.value, domain: domain, hostOnly: hostOnly, path: parsed.path ?? origin.defaultPath,
            expires: parsed.expires, secure: parsed.secure, httpOnly: parsed.httpOnly, created: now)
    }

    /// Whether a cookie named `name` keeps what a `__Secure-` or `__Host-` prefix promises: it is
    /// `secure`, and for `__Host-` also its own host's alone, for the path `/`.
    private static func keepsPrefixPromise(_ name: String, secure: Bool, ownHostAlone: Bool, path: String?) -> Bool {
        if hasPrefix(name, "__secure-"), !secure { return false }
        if hasPrefix(name, "__host-"), !secure || !ownHostAlone || path != "/" { return false }
        return true
    }

    /// `cookie`, restored from a saved jar, as the jar would have kept it from a server, or `nil`
    /// when it would never have kept it (see ``init(cookies:now:)``).
    private static func restored(_ cookie: Cookie, now: Date) -> Cookie? {
        var cookie = cookie
        cookie.name = SetCookie.trimmed(cookie.name[...])
        cookie.value = SetCookie.trimmed(cookie.value[...])
        var domain = Substring(cookie.domain.lowercased())
        if domain.first == "[", domain.last == "]" { domain = domain.dropFirst().dropLast() }
        if domain.first == "." { domain = domain.dropFirst() }
        if domain.last == "." { domain = domain.dropLast() }
        cookie.domain = String(domain)
        if cookie.path.isEmpty { cookie.path = "/" }
        guard !cookie.isExpired(at: now), !cookie.name.isEmpty, !cookie.domain.isEmpty, cookie.path.first == "/",
            !cookie.name.utf8.contains(where: { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: ";") }),
            !cookie.value.utf8.contains(UInt8(ascii: ";")),
            cookie.name.utf8.count + cookie.value.utf8.count <= SetCookie.maximumNameAndValueBytes,
            ![cookie.name, cookie.value, cookie.domain, cookie.path].contains(where: SetCookie.hasControlCharacter),
            keepsPrefixPromise(cookie.name, secure: cookie.secure, ownHostAlone: cookie.hostOnly, path: cookie.path)
        else { return nil }
        // A domain cookie for a public suffix goes to its own host alone, as one it set for itself.
        if !cookie.hostOnly, PublicSuffixes.isPublicSuffix(cookie.domain) { cookie.hostOnly = true }
        if let expires = cookie.expires { cookie.expires = min(expires, now.addingTimeInterval(SetCookie.maximumLifetime)) }
        return cookie
    }

    /// Whether `name` starts with `prefix` (lowercase ASCII) in any case.
    private static func hasPrefix(_ name: String, _ prefix: String) -> Bool {
        name.utf8.count >= prefix.utf8.count
            && zip(name.utf8, prefix.utf8).allSatisfy { byte, expected in
                (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte) == expected
            }
    }

    /// Whether `cookie`, from plain HTTP, would replace or shadow a kept `Secure` cookie of its
    /// name: one whose domain and `cookie`'s match either way and whose path `cookie`'s path is in.
    private static func shadowsSecureCookie(_ cookie: Cookie, in entries: [Key: Entry]) -> Bool {
        entries.values.lazy.map(\.cookie).contains { kept in
            kept.secure && kept.name == cookie.name
                && (CookieOrigin.domainMatches(kept.domain, cookie.domain) || CookieOrigin.domainMatches(cookie.domain, kept.domain))
                && CookieOrigin.pathMatches(cookie.path, kept.path)
        }
    }

    /// Adds `cookie` (or replaces the kept one of its key, keeping its place in the sending
    /// order), then brings its domain and the whole jar back within their limits.
    private static func insert(_ cookie: Cookie, into stored: inout Stored, now: Date) {
        let key = Key(name: cookie.name, domain: cookie.domain, path: cookie.path)
        stored.stores += 1
        if let kept = stored.entries[key] {
            stored.entries[key] = Entry(cookie: cookie, arrival: kept.arrival, lastSet: stored.stores)
            return
        }
        stored.entries[key] = Entry(cookie: cookie, arrival: stored.stores, lastSet: stored.stores)
        let domainCount = stored.entries.values.lazy.filter { $0.cookie.domain == cookie.domain }.count
        if domainCount > maximumCookiesPerDomain {
            evict(domainCount - maximumCookiesPerDomain, from: &stored.entries, now: now) { $0.domain == cookie.domain }
        }
        if stored.entries.count > maximumCookies {
            evict(stored.entries.count - maximumCookies, from: &stored.entries, now: now) { _ in true }
        }
    }

    /// Removes `count` of the cookies `among` selects: the expired first, then those set longest ago.
    private static func evict(_ count: Int, from entries: inout [Key: Entry], now: Date, among: (Cookie) -> Bool) {
        let victims = entries.filter { among($0.value.cookie) }
            .sorted {
                ($0.value.cookie.isExpired(at: now) ? 0 : 1, $0.value.lastSet) < (
                    $1.value.cookie.isExpired(at: now) ? 0 : 1, $1.value.lastSet
                )
            }
            .prefix(count)
        for (key, _) in victims { entries[key] = nil }
    }

    /// Whether `first` goes before `second` in a `Cookie` header: the longer path first, then the
    /// older, then the one that came first (RFC 6265 §5.4).
    private static func sendsFirst(_ first: Entry, _ second: Entry) -> Bool {
        let (a, b) = (first.cookie, second.cookie)
        if a.path.utf8.count != b.path.utf8.count { return a.path.utf8.count > b.path.utf8.count }
        if a.created != b.created { return a.created < b.created }
        return first.arrival < second.arrival
    }
}

/// What of a request's URL decides which cookies go and which may be set.
struct CookieOrigin {
    /// The host, lowercased, without brackets for an IPv6 address.
    let host: String
    let secure: Bool
    /// The path, percent-encoded as sent; `/` when empty.
    let path: String
    /// Whether the host is an IP address rather than a name.
    let isAddress: Bool

    /// `nil` for a URL that is not `http` or `https`, or has no host.
    init?(_ url: URL) {
        // Read for every request: lowercased only when it is not already, compared over bytes.
        guard var scheme = url.scheme else { return nil }
        if scheme != "https", scheme != "http" { scheme = scheme.lowercased() }
        guard scheme == "http" || scheme == "https", var host = url.host(percentEncoded: false), !host.isEmpty else { return nil }
        if host.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) { host = host.lowercased() }
        if host.utf8.first == UInt8(ascii: "["), host.utf8.last == UInt8(ascii: "]") { host = String(host.dropFirst().dropLast()) }
        if host.utf8.last == UInt8(ascii: ".") { host.removeLast() }
        self.host = host
        secure = scheme == "https"
        let path = url.path(percentEncoded: true)
        self.path = path.isEmpty ? "/" : path
        isAddress =
            host.utf8.contains(UInt8(ascii: ":"))
            || host.utf8.allSatisfy { $0 == UInt8(ascii: ".") || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }
    }

    /// The path a cookie without `Path` gets (RFC 6265 §5.1.4): the URL's path up to its last
    /// `/`, or `/`.
    var defaultPath: String {
        guard path.first == "/", let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// Whether `host` is `domain` or a name under it (RFC 6265 §5.1.3).
    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        let host = host.utf8
        let domain = domain.utf8
        guard host.count > domain.count else { return host.elementsEqual(domain) }
        return host.reversed().starts(with: domain.reversed()) && host.dropLast(domain.count).last == UInt8(ascii: ".")
            && !host.contains(UInt8(ascii: ":"))
    }

    /// Whether a request to `path` gets a cookie of `cookiePath` (RFC 6265 §5.1.4).
    static func pathMatches(_ path: String, _ cookiePath: String) -> Bool {
        let path = path.utf8
        let cookiePath = cookiePath.utf8
        guard path.starts(with: cookiePath) else { return false }
        return path.count == cookiePath.count || cookiePath.last == UInt8(ascii: "/")
            || path.dropFirst(cookiePath.count).first == UInt8(ascii: "/")
    }
}
