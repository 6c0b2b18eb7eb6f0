#if HTTPTypes  // the whole module: without its package trait, only TraitCheck.swift's error

import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if HTTPTypes  // the package trait that brings this dependency (TraitCheck.swift)
import HTTPTypes
#endif

extension Request {
    /// Creates a Runway request from an `HTTPRequest` and its body.
    ///
    /// Where it goes:
    /// - With `baseURL` (what a swift-openapi-runtime `ClientTransport` is handed), the request's
    ///   `path` (path and query) is appended to the base URL's path: `https://api.example.com/v1`
    ///   and `/pets?limit=10` make `https://api.example.com/v1/pets?limit=10`. A base URL ending
    ///   in `/` loses that slash first, a query of the base URL comes before the request's (joined
    ///   with `&`), and the base URL's userinfo and port are kept. The request's own `scheme` and
    ///   `authority`, if any, are not used.
    /// - Without, the request must be absolute: `scheme`, `authority` (`host`, `host:port`,
    ///   `[::1]:8080`) and `path`.
    ///
    /// The path is taken as it is encoded: `%2F` stays `%2F`, and a `%` not followed by two hex
    /// digits is an error, never re-encoded as `%25`. Characters a URL cannot hold raw
    /// (non-ASCII, `|`, `{`) are percent-encoded, as for `Request(method:_:headers:body:options:)`.
    /// Header fields keep their order, names and bytes (``RunwayCore/HTTPHeaders/init(_:)``).
    /// - Parameters:
    ///   - request: the method, target and header fields.
    ///   - baseURL: the server to send to; `nil` to use the request's scheme and authority.
    ///   - body: the body to send, if any (`HTTPRequest` has none of its own).
    ///   - options: the transport options.
    /// - Throws: `RunwayError`:
    ///   - `.invalidURL`: no base URL and no scheme or authority; a path that does not start with
    ///     `/`, holds a fragment (`#`), a space, a control character or a `%` not followed by two
    ///     hex digits; an authority with userinfo (`user@`, which HTTP forbids there), or that
    ///     is not `host[:port]`; a port over 65535; a base URL that is not absolute. Messages
    ///     name a path or URL without its query (`?…`), which may hold a secret, and an
    ///     authority without its userinfo.
    ///   - `.unsupportedScheme`: a scheme other than `http` or `https`.
    ///   - `.invalidRequest`: a method with a lower-case letter (``RunwayCore/HTTPMethod/init(_:)``);
    ///     `CONNECT`, extended CONNECT (`:protocol`) and `OPTIONS *`, which have no URL.
    ///   - `.invalidHeader`: a header field ``RunwayCore/HTTPHeaders/init(_:)`` rejects; a `Host`
    ///     field that is not the request's authority (`HTTPRequest` carries the host there).
    public init(
        _ request: HTTPRequest, baseURL: URL? = nil, body: Data? = nil, options: RequestOptions = RequestOptions()
    ) throws(RunwayError) {
        let method = try HTTPMethod(request.method)
        let url = try RequestTarget.url(of: request, baseURL: baseURL)
        let headers = try HTTPHeaders(request.headerFields)
        // The request would go to the authority and tell the server it is for another host.
        if let authority = request.authority, let host = headers["Host"], !host.caseInsensitiveEquals(authority) {
            throw RunwayError(
                .invalidHeader,
                "the Host field \(host.debugDescription) disagrees with the request's authority \(authority.debugDescription)",
                field: "Host")
        }
        try self.init(method: method, url, headers: headers, body: body, options: options)
    }
}

extension HTTPRequest {
    /// Creates an `HTTPRequest` from a Runway request: its method, its URL as `scheme`,
    /// `authority` (`host[:port]`, IPv6 literals in brackets) and `path` (path and query as
    /// encoded), and its header fields in order.
    ///
    /// The URL's fragment is left out: it is never sent. The body stays in `request.body`.
    /// - Throws: `RunwayError`:
    ///   - `.invalidURL`: a URL without a host, or with userinfo (`user:password@`: HTTP forbids
    ///     it in a request's authority; send credentials in an `Authorization` header).
    ///   - `.unsupportedScheme`: a scheme other than `http` or `https`.
    ///   - `.invalidRequest`: a method that is not an HTTP token.
    ///   - `.invalidHeader`: a header field that `HTTPFields` cannot hold (``HTTPTypes/HTTPFields/init(_:)``).
    public init(_ request: Request) throws(RunwayError) {
        let method = try Method(request.method)
        let target = try RequestTarget(request.url)
        let fields = try HTTPFields(request.headers)
        self.init(method: method, scheme: target.scheme, authority: target.authority, path: target.path, headerFields: fields)
    }
}

/// A URL split the way an HTTP request carries it, and the way back.
struct RequestTarget {
    let scheme: String
    let authority: String
    /// Path and query, as encoded.
    let path: String

    /// The pieces of `url`, taken from its encoded text as they are.
    init(_ url: URL) throws(RunwayError) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true), let text = components.string,
            let schemeRange = components.rangeOfScheme, let hostRange = components.rangeOfHost, !hostRange.isEmpty
        else {
            throw RunwayError(.invalidURL, "URL has no scheme or host: \"\(RunwayError.text(forURL: url))\"")
        }
        scheme = String(text[schemeRange])
        try Self.checkScheme(scheme)
        if components.percentEncodedUser != nil || components.percentEncodedPassword != nil {
            throw RunwayError(
                .invalidURL,
                "URL has userinfo (user:password@), which a request's authority cannot carry (RFC 9110 §4.2.4): "
                    + "send credentials in an Authorization header")
        }
        authority = String(text[hostRange.lowerBound..<(components.rangeOfPort?.upperBound ?? hostRange.upperBound)])
        var path = components.rangeOfPath.map { String(text[$0]) } ?? ""
        if path.isEmpty { path = "/" }
        if let queryRange = components.rangeOfQuery { path += "?" + text[queryRange] }
        self.path = path
    }

    /// The URL text a Runway request for `request` is created from.
    static func url(of request: HTTPRequest, baseURL: URL?) throws(RunwayError) -> String {
        if request.extendedConnectProtocol != nil {
            throw RunwayError(.invalidRequest, "extended CONNECT (:protocol) is not supported: it opens a tunnel, not a request")
        }
        if request.method == .connect {
            throw RunwayError(.invalidRequest, "CONNECT opens a tunnel and has no URL: it cannot be sent as a request")
        }
        let path = request.path ?? ""
        if path == "*" {
            throw RunwayError(.invalidRequest, "\"*\" (OPTIONS for the whole server) is not a URL path and cannot be sent")
        }
        // Messages name the path without its query (`?…`), where tokens travel.
        if !path.isEmpty, path.utf8.first != UInt8(ascii: "/") {
            throw RunwayError(.invalidURL, "path \"\(RunwayError.text(forURL: path))\" does not start with \"/\"")
        }
        if path.utf8.contains(UInt8(ascii: "#")) {
            throw RunwayError(
                .invalidURL,
                "path \"\(RunwayError.text(forURL: path))\" holds a fragment (#), which is never sent (percent-encode it: %23)")
        }
        try Request.checkURLText(path, what: "path")
        try checkPercentEscapes(path)
        guard let baseURL else { return try absoluteURL(of: request, path: path) }
        return try joined(baseURL, path)
    }

    /// The URL text of a request that names its own scheme and authority.
    private static func absoluteURL(of request: HTTPRequest, path: String) throws(RunwayError) -> String {
        guard let scheme = request.scheme, let authority = request.authority else {
            throw RunwayError(
                .invalidURL,
                "request \(request.method) \(RunwayError.text(forURL: path)) has no scheme or authority and no base URL was given "
                    + "(pass baseURL, or set scheme and authority)")
        }
        guard !path.isEmpty else {
            throw RunwayError(.invalidURL, "request \(request.method) \(scheme)://\(authority) has no path")
        }
        try checkScheme(scheme)
        try checkAuthority(authority)
        let text = scheme + "://" + authority + path
        // What the URL parser takes as the authority must be all of it: "host/x" or
        // "host?x" would send the request elsewhere.
        guard let url = Request.parseURL(text), let parsed = try? RequestTarget(url), parsed.authority == authority else {
            throw RunwayError(.invalidURL, "authority \"\(RunwayError.text(forURL: authority))\" is not host[:port]")
        }
        try checkPort(URLComponents(string: text)?.port, of: text)
        return text
    }

    /// `path` (path and query) after the base URL's path, the base URL's query first. Runs for
    /// every operation a generated client sends: it reads bytes, without making substrings.
    private static func joined(_ baseURL: URL, _ path: String) throws(RunwayError) -> String {
        let base = baseURL.absoluteString
        guard baseURL.scheme != nil, let host = baseURL.host(percentEncoded: true), !host.isEmpty else {
            throw RunwayError(.invalidURL, "base URL \"\(RunwayError.text(forURL: base))\" is not absolute (scheme and host)")
        }
        try checkPort(baseURL.port, of: base)
        let baseBytes = Array(base.utf8)
        let pathBytes = Array(path.utf8)
        let baseEnd = baseBytes.firstIndex(of: UInt8(ascii: "#")) ?? baseBytes.count  // no fragment
        let baseMark = baseBytes[..<baseEnd].firstIndex(of: UInt8(ascii: "?"))
        let pathMark = pathBytes.firstIndex(of: UInt8(ascii: "?"))
        var text = Array(baseBytes[..<(baseMark ?? baseEnd)])
        text.reserveCapacity(baseEnd + pathBytes.count + 2)
        let requestPath = pathBytes[..<(pathMark ?? pathBytes.count)]
        if requestPath.first == UInt8(ascii: "/"), text.last == UInt8(ascii: "/") { text.removeLast() }
        text += requestPath
        if baseMark != nil || pathMark != nil {
            // The non-empty queries, the base URL's first, joined with "&".
            text.append(UInt8(ascii: "?"))
            var joins = false
            for query in [baseMark.map { baseBytes[($0 + 1)..<baseEnd] }, pathMark.map { pathBytes[($0 + 1)...] }] {
                guard let query, !query.isEmpty else { continue }
                if joins { text.append(UInt8(ascii: "&")) }
                text += query
                joins = true
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Each `%` must start an escape, `%` and two hex digits: the URL parser would write a stray
    /// one as `%25` silently, and what went out would not be what the caller wrote.
    private static func checkPercentEscapes(_ path: String) throws(RunwayError) {
        var offset = 0
        var percent = 0
        var digitsDue = 0
        for byte in path.utf8 {
            if digitsDue > 0 {
                guard RequestParameters.hexValue(byte) != nil else { throw badEscape(in: path, at: percent) }
                digitsDue -= 1
            } else if byte == UInt8(ascii: "%") {
                percent = offset
                digitsDue = 2
            }
            offset += 1
        }
        if digitsDue > 0 { throw badEscape(in: path, at: percent) }
    }

    private static func badEscape(in path: String, at offset: Int) -> RunwayError {
        RunwayError(
            .invalidURL,
            "path \"\(RunwayError.text(forURL: path))\" holds a \"%\" not followed by two hex digits at byte \(offset) "
                + "(write a literal % as %25)")
    }

    private static func checkScheme(_ scheme: String) throws(RunwayError) {
        let lowered = scheme.lowercased()
        guard lowered == "http" || lowered == "https" else {
            throw RunwayError(.unsupportedScheme, "scheme \"\(scheme)\" is not http or https")
        }
    }

    private static func checkAuthority(_ authority: String) throws(RunwayError) {
        guard !authority.isEmpty else {
            throw RunwayError(.invalidURL, "authority is empty")
        }
        if let at = authority.lastIndex(of: "@") {
            // Named by its host alone: the userinfo may hold a password.
            throw RunwayError(
                .invalidURL,
                "authority \"…@\(authority[authority.index(after: at)...])\" has userinfo (user@), which HTTP forbids there "
                    + "(RFC 9110 §4.2.4): send credentials in an Authorization header")
        }
        try Request.checkURLText(authority, what: "authority")
    }

    /// A port the URL parser accepts but no socket has (65536 and above) fails here, not in
    /// the dispatcher.
    private static func checkPort(_ port: Int?, of text: String) throws(RunwayError) {
        if let port, !(0...65535).contains(port) {
            throw RunwayError(.invalidURL, "port \(port) is over 65535: \"\(RunwayError.text(forURL: text))\"")
        }
    }
}

#endif
