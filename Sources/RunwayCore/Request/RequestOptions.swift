#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Transport options carried by each request.
///
/// Defaults suit API calls: verify TLS, no redirects, bounded response size.
public struct RequestOptions: Sendable, Equatable {
    /// The longest a connection may take to establish (TCP and TLS). A wait for a free
    /// connection (the dispatcher's connections to the host all busy) is not counted here but
    /// in ``timeout``.
    public var connectTimeout: Duration
    /// The longest the whole transfer may take, a wait for a free connection included, or `nil`
    /// for no limit (large downloads). Each attempt of a retried call has its own; a call of a
    /// service with a token authenticator also waits at most this long for a token refresh.
    public var timeout: Duration?
    /// The longest a transfer may go without a byte moving either way once its connection is
    /// made: a server that takes the request and never answers, or stops mid-body, or reads an
    /// upload no further. `nil` (the default) sets no limit. For a stream or a download with no
    /// total ``timeout``, this is what ends a dead transfer. The clock stops while the transfer
    /// waits for your code (a streamed body's reader that holds back, an upload stream's
    /// producer) and starts again when it moves. A transfer ended by it fails with `.timeout`.
    /// `URLSessionDispatcher` counts from the start of the transfer, its connect included
    /// (URLSession shows no connect phase).
    public var idleTimeout: Duration?
    /// The largest response body accepted in memory, counted after decompression, in bytes.
    /// A larger body fails with `.responseTooLarge`; a gzip bomb cannot exhaust memory.
    /// Downloads streamed to a file (``Request/download``) are not bounded by it.
    public var maxResponseSize: Int
    /// The largest request body accepted, in bytes.
    public var maxRequestBodySize: Int
    /// Whether and how far redirects are followed.
    public var redirects: RedirectPolicy
    /// Ask for compressed responses and decompress them transparently.
    public var acceptCompressedResponses: Bool
    /// Certificate verification, CA bundle, public-key pinning and the client certificate.
    public var tls: TLSOptions
    /// Connect to another address for a host while keeping the host name for SNI, `Host` and
    /// certificate verification (DNS bypass). Applied by dispatchers that support it.
    public var connectOverrides: [ConnectOverride]
    /// Which HTTP version to ask for.
    public var httpVersion: HTTPVersionPreference
    /// The proxy this request goes through. `nil` (the default) leaves it to the service's
    /// `Service.proxy` when a service sends it, and is no proxy otherwise; ``Proxy/direct`` is no
    /// proxy even where the service has one. Never taken from the environment unless set to
    /// ``Proxy/environment``. A dispatcher that cannot use a proxy refuses the request with
    /// `.configuration` rather than send it directly.
    public var proxy: Proxy?

    /// Creates options; every parameter has the API-call default.
    public init(
        connectTimeout: Duration = .seconds(10),
        timeout: Duration? = .seconds(60),
        idleTimeout: Duration? = nil,
        maxResponseSize: Int = 32 << 20,
        maxRequestBodySize: Int = 64 << 20,
        redirects: RedirectPolicy = .none,
        acceptCompressedResponses: Bool = true,
        tls: TLSOptions = TLSOptions(),
        connectOverrides: [ConnectOverride] = [],
        httpVersion: HTTPVersionPreference = .automatic,
        proxy: Proxy? = nil
    ) {
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.idleTimeout = idleTimeout
        self.maxResponseSize = maxResponseSize
        self.maxRequestBodySize = maxRequestBodySize
        self.redirects = redirects
        self.acceptCompressedResponses = acceptCompressedResponses
        self.tls = tls
        self.connectOverrides = connectOverrides
        self.httpVersion = httpVersion
        self.proxy = proxy
    }
}

/// Whether redirects are followed.
public struct RedirectPolicy: Sendable, Equatable {
    /// The most redirects followed; 0 follows none and returns the 3xx response.
    public let maxRedirects: Int

    /// Redirects are returned to the caller as 3xx responses (the default for API calls).
    public static let none = RedirectPolicy(maxRedirects: 0)

    /// Whether a response with `status` is a redirect to follow: a 301, 302, 303, 307 or 308, as
    /// browsers follow (the dispatchers and `RedirectInterceptor` alike).
    package static func isFollowed(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    /// Follows up to `max` redirects, to `http` and `https` URLs only; an `https` request with
    /// ``TLSOptions/pinnedPublicKeys`` to `https` only (`CurlDispatcher` fails a redirect to plain
    /// `http`, where no key could be checked, with `.tls`).
    ///
    /// Only a 301, 302, 303, 307 or 308 is followed: any other status is the response, a 300,
    /// 304 or 305 with a `Location` included. A 307 or 308 sends the method and body again. A 301
    /// or 302 turns a POST into a GET without its body, and sends any other method again with its
    /// body. A 303 turns a POST into a GET; `CurlDispatcher` returns a 303 to any other method but
    /// GET or HEAD as the response, without following it.
    ///
    /// `Authorization` and `Cookie` are not sent on to another host; every other header is,
    /// an API key in `X-Api-Key` included. Follow redirects only where the API's targets are
    /// trusted, or put credentials where they stay (`Authorization`). A request with a
    /// `Proxy-Authorization` header is not followed to another origin: `CurlDispatcher` returns
    /// that redirect as the response, and `URLSessionDispatcher` drops the header.
    ///
    /// The dispatcher follows them below the interceptors, which never see the redirect: the
    /// next request carries the first one's signature, and the cookies a redirect sets are not
    /// kept. `RedirectInterceptor` (in `Runway`) follows redirects to the call's own origin
    /// through the chain instead.
    public static func follow(max: Int = 5) -> RedirectPolicy {
        RedirectPolicy(maxRedirects: Swift.max(0, max))
    }
}

/// TLS settings for a request.
public struct TLSOptions: Sendable, Equatable {
    /// Verify the peer's certificate chain and host name. On by default; turning it off is for
    /// local development only.
    public var verifyPeer: Bool
    /// Trusted certificate authorities, replacing the system bundle when set.
    public var certificateAuthorities: CertificateAuthorities?
    /// Accepted public keys, as `sha256//BASE64` pins; the connection fails unless the server's
    /// key matches one of them, and a redirect to plain `http` is not followed. Empty means no
    /// pinning.
    public var pinnedPublicKeys: [String]
    /// The certificate and key presented when the server asks for one (mutual TLS); `nil`
    /// presents none.
    public var clientCertificate: ClientCertificate?

    public init(
        verifyPeer: Bool = true,
        certificateAuthorities: CertificateAuthorities? = nil,
        pinnedPublicKeys: [String] = [],
        clientCertificate: ClientCertificate? = nil
    ) {
        self.verifyPeer = verifyPeer
        self.certificateAuthorities = certificateAuthorities
        self.pinnedPublicKeys = pinnedPublicKeys
        self.clientCertificate = clientCertificate
    }
}

/// A source of trusted certificate authorities.
public struct CertificateAuthorities: Sendable, Hashable {
    enum Source: Sendable, Hashable {
        case file(String)
        case pem(Data)
    }

    let source: Source

    /// A PEM bundle file on disk.
    public static func file(_ path: String) -> CertificateAuthorities {
        CertificateAuthorities(source: .file(path))
    }

    /// PEM-encoded certificates in memory.
    public static func pem(_ data: Data) -> CertificateAuthorities {
        CertificateAuthorities(source: .pem(data))
    }

    /// The bundle's path, when it is a file.
    public var filePath: String? {
        if case .file(let path) = source { path } else { nil }
    }

    /// The bundle's PEM bytes, when it is in memory.
    public var pemData: Data? {
        if case .pem(let data) = source { data } else { nil }
    }
}

/// Sends connections for `host:port` to `connectHost:connectPort` instead, keeping `host` as the
/// name used for SNI, the `Host` header and certificate verification.
///
/// `host` is the URL's host (an IPv6 address with or without its brackets), `connectHost` a
/// name or an IP address (an IPv6 one with or without brackets), each port a number from 0 to
/// 65535. ``Request/validate()`` refuses an override that no connection can follow, as
/// `.invalidRequest` before anything is sent: a port out of range, a control character, a
/// space, `/`, `\`, `?`, `#` or `@` in a name, or a colon that is not an IPv6 address's
/// (`127.0.0.1:8443` as `connectHost`: the port goes in `connectPort`).
public struct ConnectOverride: Sendable, Hashable {
    /// The host name in the request URL.
    public var host: String
    /// The port in the request URL; `nil` matches any.
    public var port: Int?
    /// The address actually connected to (an IP literal, usually).
    public var connectHost: String
    /// The port actually connected to; `nil` keeps the URL's port.
    public var connectPort: Int?

    public init(host: String, port: Int? = nil, connectHost: String, connectPort: Int? = nil) {
        self.host = host
        self.port = port
        self.connectHost = connectHost
        self.connectPort = connectPort
    }
}

/// Which HTTP version a request asks for.
public struct HTTPVersionPreference: Sendable, Equatable {
    enum Value: Sendable, Equatable {
        case automatic, http1, http2
    }

    let value: Value

    /// HTTP/2 over TLS where the server offers it through ALPN, HTTP/1.1 otherwise.
    public static let automatic = HTTPVersionPreference(value: .automatic)
    /// HTTP/1.1 only.
    public static let http1 = HTTPVersionPreference(value: .http1)
    /// HTTP/2 where possible, including prior knowledge over cleartext.
    public static let http2 = HTTPVersionPreference(value: .http2)
}

/// Streams a response body to a file.
///
/// The body is written to `<file>.part` and renamed to `file` once complete. The response's
/// validator (its strong `ETag`, else a strong `Last-Modified`) is kept beside it, in
/// ``validatorFile``. With `resume`, an interrupted download continues from the bytes already in
/// `<file>.part` with a `Range` request carrying that validator as `If-Range`: a server whose
/// resource changed since answers `200` with the whole new version, which replaces the partial
/// file, so the final file never joins two versions. A resumed download's response is the `206`
/// the server sent: a complete download answers `200` or `206`. Bytes from a response that had no
/// validator are not resumed: the download starts from zero. `CurlDispatcher` refuses a second
/// download to the same `file` while one runs (`.fileIO`).
public struct DownloadTarget: Sendable, Equatable {
    /// The final file.
    public var file: URL
    /// Continue a previous partial download. A request with a `Range` of its own never resumes:
    /// it starts from zero, and its bytes are never resumed later.
    public var resume: Bool

    public init(file: URL, resume: Bool = true) {
        self.file = file
        self.resume = resume
    }

    /// Where bytes are written until the download completes.
    public var partialFile: URL {
        file.deletingLastPathComponent().appendingPathComponent(file.lastPathComponent + ".part")
    }
}

extension Duration {
    /// The longest Runway waits for anything, a century: a sleep or a deadline of
    /// `.seconds(.max)` (a timeout or an interval meant as "no limit") would overflow the
    /// clock's arithmetic and trap, or wrap round to a time already passed.
    package static let longestSleep: Duration = .seconds(100 * 365 * 86_400)
}
