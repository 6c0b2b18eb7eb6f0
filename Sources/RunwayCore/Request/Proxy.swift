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

/// Where a request's connections go: straight to the origin (the default), or through a proxy.
///
/// Set per request in ``RequestOptions/proxy``, or for every call to a service with
/// `Service.proxy`; a request's own setting wins.
/// ```swift
/// let proxy = Proxy.http(host: "proxy.corp.example", port: 3128, credentials: .init(user: "app", password: secret))
/// var options = RequestOptions()
/// options.proxy = proxy
/// ```
/// - ``http(host:port:credentials:)``: an HTTP proxy. Plain `http` requests are forwarded by
///   it; `https` requests go through a tunnel it opens with `CONNECT`, so TLS (verification,
///   pinning) is between the client and the origin, as without a proxy.
/// - ``https(host:port:credentials:certificateAuthorities:)``: an HTTP proxy reached over TLS,
///   so nothing between the app and the proxy sees the requests it forwards, the `CONNECT`
///   lines or the proxy's credentials. The proxy's certificate is verified (against the system's
///   authorities, or the ones given); `https` requests are still TLS end to end inside it.
/// - ``socks5(host:port:credentials:resolvesNamesRemotely:)``: a SOCKS5 proxy, by default with
///   the origin's name resolved by the proxy (`socks5h`).
/// - ``environment``: what `http_proxy`, `https_proxy` and `no_proxy` (or their upper-case
///   forms) say, read when a request is sent. Only when asked for: by default no variable of
///   the environment sends a request anywhere but to its origin.
/// - ``direct``: no proxy, whatever a service or the environment says. (Not `.none`: where a
///   `Proxy?` is expected, as in ``RequestOptions/proxy``, `.none` would be `nil`.)
///
/// A proxy's credentials never appear in its ``description``, in error messages or in logs.
/// A proxy that cannot work (an empty host, a port outside 1–65535) fails the request with
/// `.configuration` before anything is sent; ``init(url:)`` checks at construction.
public struct Proxy: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    enum Setting: Sendable, Hashable {
        case direct
        case environment
        case server(Server)
    }

    let setting: Setting

    private init(setting: Setting) {
        self.setting = setting
    }

    /// No proxy: connections go straight to the origin, whatever a service or the environment
    /// says. Named `direct` rather than `none` so that it cannot be mistaken for `nil` where a
    /// `Proxy?` is expected (``RequestOptions/proxy``: `nil` leaves it to the service).
    public static let direct = Proxy(setting: .direct)

    /// The proxy the process environment names for the request's scheme, read when the request
    /// is sent: `https_proxy` (else `HTTPS_PROXY`) for `https` URLs, `http_proxy` (else
    /// `HTTP_PROXY`) for `http` URLs, each a URL as ``init(url:)`` reads it; none when the
    /// variable is unset or empty, or when `no_proxy` (else `NO_PROXY`) names the host.
    ///
    /// `no_proxy` is a list separated by commas or spaces: `*` matches every host, any other
    /// entry its host name or address and, for a name, every name under it (`example.com` and
    /// `.example.com` both match `api.example.com`), and for a block of addresses
    /// (`10.0.0.0/8`, `fd00::/8`) every address in it.
    ///
    /// Opt in only where the environment is the user's to set: a CGI-style server that turns a
    /// request's `Proxy` header into `HTTP_PROXY` would hand the proxy to whoever sent it.
    public static let environment = Proxy(setting: .environment)

    /// An HTTP proxy at `host:port`: `http` requests are forwarded by it, `https` requests go
    /// through a tunnel it opens with `CONNECT` (TLS stays end to end, verified and pinned
    /// against the origin).
    /// - Parameters:
    ///   - host: The proxy's host name or IP address (an IPv6 address with or without brackets).
    ///   - port: The proxy's port, 1–65535.
    ///   - credentials: Sent with Basic authentication in `Proxy-Authorization`, if any.
    public static func http(host: String, port: Int, credentials: Credentials? = nil) -> Proxy {
        Proxy(setting: .server(Server(kind: .http, host: host, port: port, credentials: credentials)))
    }

    /// An HTTP proxy at `host:port` reached over TLS (an "HTTPS proxy"): `http` requests are
    /// forwarded by it and `https` requests tunnelled with `CONNECT`, as with ``http(host:port:credentials:)``,
    /// but the connection to the proxy is encrypted and the proxy's certificate verified.
    /// - Parameters:
    ///   - host: The proxy's host name or IP address, which its certificate must name.
    ///   - port: The proxy's port, 1–65535.
    ///   - credentials: Sent with Basic authentication in `Proxy-Authorization`, inside TLS.
    ///   - certificateAuthorities: The authorities that verify the proxy's certificate; `nil`
    ///     for the system's. (The origin's certificate is verified by the request's own TLS
    ///     options, as without a proxy.)
    public static func https(
        host: String, port: Int, credentials: Credentials? = nil, certificateAuthorities: CertificateAuthorities? = nil
    ) -> Proxy {
        Proxy(
            setting: .server(
                Server(kind: .https, host: host, port: port, credentials: credentials, certificateAuthorities: certificateAuthorities)))
    }

    /// A SOCKS5 proxy at `host:port` (RFC 1928), with username and password authentication
    /// (RFC 1929) when `credentials` are given.
    /// - Parameters:
    ///   - host: The proxy's host name or IP address.
    ///   - port: The proxy's port, 1–65535 (default 1080).
    ///   - credentials: A user and password of 1–255 bytes each, if the proxy asks for them.
    ///   - resolvesNamesRemotely: Whether the proxy resolves the origin's host name (`socks5h`,
    ///     the default: no DNS query leaves this machine for it), or this machine does and sends
    ///     the proxy an address (`socks5`).
    public static func socks5(
        host: String, port: Int = 1080, credentials: Credentials? = nil, resolvesNamesRemotely: Bool = true
    ) -> Proxy {
        let kind: Server.Kind = resolvesNamesRemotely ? .socks5h : .socks5
        return Proxy(setting: .server(Server(kind: kind, host: host, port: port, credentials: credentials)))
    }

    /// Reads a proxy URL, such as `http://proxy.example:3128`, `socks5h://user:pass@127.0.0.1:1080`
    /// or `proxy.example:8080` (no scheme: HTTP), the way `http_proxy` is written.
    ///
    /// The schemes are `http`, `https` (an HTTPS proxy, verified against the system's
    /// authorities), `socks5` and `socks5h` (SOCKS5 with remote name resolution). A user and
    /// password in the URL are percent-decoded and become the ``Credentials``. Without a port,
    /// the port is 443 for `https` and 1080 for the others, as libcurl and `curl` take it.
    /// - Throws: ``RunwayError`` `.configuration` (field `proxy`) for another scheme, no host, a
    ///   port outside 1–65535, or a path, query or fragment. The message never repeats the
    ///   URL's user or password.
    public init(url text: String) throws(RunwayError) {
        self.init(setting: .server(try Server(url: text)))
    }

    /// A user name and password for a proxy. Never shown: its description, and that of any
    /// ``Proxy`` holding it, says only that there are credentials.
    public struct Credentials: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
        /// The user name.
        public var user: String
        /// The password.
        public var password: String

        /// Creates credentials.
        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }

        /// `<redacted>`: credentials are never written to logs or messages.
        public var description: String { "<redacted>" }

        /// No children, so `dump` and string interpolation of an enclosing value show no secret.
        public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
    }

    /// `direct`, `environment`, or the proxy's URL with any credentials replaced by `<redacted>`,
    /// such as `socks5h://<redacted>@127.0.0.1:1080`.
    public var description: String {
        switch setting {
        case .direct: "direct"
        case .environment: "environment"
        case .server(let server): server.redactedURL
        }
    }

    /// The description alone, so that `dump` and the default description of an enclosing value
    /// (``RequestOptions``) show no credentials.
    public var customMirror: Mirror { Mirror(self, children: ["proxy": description], displayStyle: .struct) }

    /// The explicit proxy server, if this names one (not ``direct`` or ``environment``).
    package var server: Server? {
        if case .server(let server) = setting { server } else { nil }
    }
}

extension Proxy {
    /// A proxy server: its kind, address and credentials.
    package struct Server: Sendable, Hashable {
        /// How requests reach the origin through it.
        package enum Kind: String, Sendable, Hashable {
            /// HTTP: forwarded, or tunnelled with `CONNECT` for `https`.
            case http
            /// HTTP over TLS to the proxy, otherwise as ``http``.
            case https
            /// SOCKS5, names resolved on this machine.
            case socks5
            /// SOCKS5, names resolved by the proxy.
            case socks5h
        }

        package let kind: Kind
        /// Without brackets, even for an IPv6 address.
        package let host: String
        package let port: Int
        package let credentials: Credentials?
        /// For an HTTPS proxy, what verifies its certificate (`nil`: the system's authorities).
        package let certificateAuthorities: CertificateAuthorities?

        init(kind: Kind, host: String, port: Int, credentials: Credentials?, certificateAuthorities: CertificateAuthorities? = nil) {
            self.kind = kind
            self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            self.port = port
            self.credentials = credentials
            self.certificateAuthorities = certificateAuthorities
        }

        /// Whether it speaks HTTP (forwarding and `CONNECT`), over TLS or not.
        package var isHTTP: Bool { kind == .http || kind == .https }

        /// Reads a proxy URL (see ``Proxy/init(url:)``).
        init(url text: String, source: String = "proxy URL") throws(RunwayError) {
            let shown = Self.redacted(text)
            let schemeEnd = text.firstRange(of: "://")
            let withScheme = schemeEnd == nil ? "http://" + text : text
            guard let parts = URLComponents(string: withScheme), let scheme = parts.scheme?.lowercased() else {
                throw RunwayError(.configuration, "\(source) \(shown) is not a URL", field: "proxy")
            }
            guard let kind = Kind(rawValue: scheme) else {
                throw RunwayError(
                    .configuration, "\(source) \(shown): scheme \"\(scheme)\" is not supported (http, https, socks5 or socks5h)",
                    field: "proxy")
            }
            guard parts.percentEncodedPath.isEmpty || parts.percentEncodedPath == "/", parts.percentEncodedQuery == nil,
                parts.percentEncodedFragment == nil
            else {
                throw RunwayError(.configuration, "\(source) \(shown) has a path, query or fragment", field: "proxy")
            }
            var credentials: Credentials?
            if let user = parts.user {
                credentials = Credentials(user: user, password: parts.password ?? "")
            }
            self.init(kind: kind, host: parts.host ?? "", port: parts.port ?? (kind == .https ? 443 : 1080), credentials: credentials)
            try validate(source: "\(source) \(shown)")
        }

        /// `host:port`, an IPv6 address in brackets.
        var authority: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

        /// `scheme://host:port`, IPv6 addresses in brackets, no credentials: what libcurl is given.
        package var url: String { "\(kind.rawValue)://\(authority)" }

        /// ``url`` with `<redacted>@` before the host when there are credentials.
        package var redactedURL: String { credentials == nil ? url : "\(kind.rawValue)://<redacted>@\(authority)" }

        /// "HTTP proxy 127.0.0.1:3128", "HTTPS proxy …" or "SOCKS5 proxy 127.0.0.1:1080", for messages.
        package var name: String {
            let kind =
                switch self.kind {
                case .http: "HTTP"
                case .https: "HTTPS"
                case .socks5, .socks5h: "SOCKS5"
                }
            return "\(kind) proxy \(authority)"
        }

        /// Throws `.configuration` unless libcurl and the proxy can use this as it is.
        package func validate(source: String? = nil) throws(RunwayError) {
            let what = source ?? "proxy \(redactedURL)"
            guard !host.isEmpty else { throw RunwayError(.configuration, "\(what) has no host", field: "proxy") }
            let allowed = host.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"),
                    UInt8(ascii: ":"), UInt8(ascii: "%"):
                    true
                default: false
                }
            }
            guard allowed else {
                throw RunwayError(
                    .configuration, "\(what): host \(host.debugDescription) is not a host name or IP address", field: "proxy")
            }
            guard (1...65535).contains(port) else {
                throw RunwayError(.configuration, "\(what): port \(port) is not in 1–65535", field: "proxy")
            }
            guard let credentials else { return }
            guard !credentials.user.isEmpty else {
                throw RunwayError(.configuration, "\(what): the credentials have an empty user name", field: "proxy")
            }
            guard !credentials.user.utf8.contains(0), !credentials.password.utf8.contains(0) else {
                throw RunwayError(.configuration, "\(what): the credentials hold a NUL byte", field: "proxy")
            }
            // Basic authentication joins the two with a colon (RFC 7617 §2): a user name holding
            // one would reach the proxy split in the wrong place, as another user.
            if isHTTP, credentials.user.utf8.contains(UInt8(ascii: ":")) {
                throw RunwayError(
                    .configuration, "\(what): an HTTP proxy's user name cannot hold a ':' (Basic authentication)", field: "proxy")
            }
            if !isHTTP, credentials.user.utf8.count > 255 || credentials.password.utf8.count > 255 {
                throw RunwayError(
                    .configuration, "\(what): SOCKS5 user names and passwords are 255 bytes at most (RFC 1929)", field: "proxy")
            }
        }

        /// `text` with whatever stands between `://` (or the start) and the last `@` before the
        /// host replaced by `<redacted>`, so a message never repeats a password.
        static func redacted(_ text: String) -> String {
            let start = text.firstRange(of: "://")?.upperBound ?? text.startIndex
            // Any "@" after the scheme: a password may hold an unescaped "/", "?" or "#", and a
            // text that is not a URL has no authority to trust.
            guard let at = text[start...].lastIndex(of: "@") else { return text.debugDescription }
            return (String(text[..<start]) + "<redacted>" + String(text[at...])).debugDescription
        }
    }
}

extension Proxy {
    /// The proxy server a request to `url` goes through, or `nil` to connect directly: the
    /// explicit server, or for ``environment`` the one its variables name (`environment`:
    /// the process environment unless a test passes its own).
    /// - Throws: ``RunwayError`` `.configuration` for a server that cannot work, or a variable
    ///   that is not a proxy URL (named, its credentials redacted).
    package func server(for url: URL, environment: [String: String]? = nil) throws(RunwayError) -> Server? {
        switch setting {
        case .direct:
            return nil
        case .server(let server):
            try server.validate()
            return server
        case .environment:
            let variables = environment ?? ProcessInfo.processInfo.environment
            let isHTTPS = url.scheme?.lowercased() == "https"
            let names = isHTTPS ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy", "HTTP_PROXY"]
            guard let name = names.first(where: { variables[$0]?.isEmpty == false }), let value = variables[name] else {
                return nil
            }
            let exclusions = variables["no_proxy"] ?? variables["NO_PROXY"] ?? ""
            if Self.excludes(exclusions, host: url.host ?? "") { return nil }
            return try Server(url: value.trimmingBlanks(), source: "environment variable \(name)")
        }
    }

    /// The proxy variable that a libcurl left to read the environment on its own (as under
    /// FoundationNetworking) would follow for `url`, or `nil` when none is set or `no_proxy`
    /// names the host. Broader than ``environment``: `all_proxy` and both cases of every name
    /// count, since such a client is not Runway's to ask.
    package static func environmentVariable(for url: URL, environment: [String: String]? = nil) -> String? {
        let variables = environment ?? ProcessInfo.processInfo.environment
        let scheme = url.scheme?.lowercased() == "https" ? "https" : "http"
        let names = ["\(scheme)_proxy", "\(scheme.uppercased())_PROXY", "all_proxy", "ALL_PROXY"]
        guard let name = names.first(where: { variables[$0]?.isEmpty == false }) else { return nil }
        let exclusions = variables["no_proxy"] ?? variables["NO_PROXY"] ?? ""
        return excludes(exclusions, host: url.host ?? "") ? nil : name
    }

    /// Whether a `no_proxy` list names `host` (see ``environment``).
    static func excludes(_ list: String, host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        for entry in list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            var pattern = entry.lowercased()
            if pattern == "*" { return true }
            if pattern.contains("/") {
                if isAddress(host, in: pattern) { return true }
                continue
            }
            if pattern.hasPrefix("*.") { pattern.removeFirst(2) } else if pattern.hasPrefix(".") { pattern.removeFirst() }
            if pattern.hasPrefix("[") && pattern.hasSuffix("]") { pattern = String(pattern.dropFirst().dropLast()) }
            if pattern.isEmpty { continue }
            if host == pattern || host.hasSuffix("." + pattern) { return true }
        }
        return false
    }

    /// Whether `host` is an IP address inside `block`, written `address/prefix-length`
    /// (`10.0.0.0/8`, `fd00::/8`): a `no_proxy` entry as libcurl (7.86 and later) and most tools
    /// read it. A block that is not one (a bad address or length) matches nothing.
    static func isAddress(_ host: String, in block: String) -> Bool {
        let parts = block.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let bits = Int(parts[1]), bits >= 0,
            let address = addressBytes(host), let network = addressBytes(String(parts[0])), address.count == network.count,
            bits <= 8 * network.count
        else { return false }
        for bit in 0..<bits where (address[bit / 8] ^ network[bit / 8]) & (0x80 >> UInt8(bit % 8)) != 0 { return false }
        return true
    }

    /// The bytes of an IPv4 (4) or IPv6 (16) address written as text; `nil` for anything else.
    private static func addressBytes(_ text: String) -> [UInt8]? {
        var text = text
        if text.hasPrefix("[") && text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
