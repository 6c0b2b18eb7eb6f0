#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One HTTP request as it travels through the interceptor chain to the dispatcher.
///
/// A value: an interceptor that changes the request changes its own copy and passes it on.
///
/// The fields live in one shared box, copied on the first change (copy-on-write): a request is
/// handed through every interceptor, plan and task of a call, and a copy then costs one
/// reference count instead of one per field.
public struct Request: Sendable {
    /// The fields. Shared between copies and never changed while shared: `mutable` copies it
    /// first unless this value is its only owner.
    private final class Storage: @unchecked Sendable {
        // @unchecked Sendable: a storage is only written while uniquely referenced (see
        // `mutable`), so shared storages are immutable. Exclusivity is not checked at run time
        // for the same reason.
        @exclusivity(unchecked) var method: HTTPMethod
        @exclusivity(unchecked) var url: URL
        @exclusivity(unchecked) var headers: HTTPHeaders
        @exclusivity(unchecked) var body: Data?
        @exclusivity(unchecked) var options: RequestOptions
        @exclusivity(unchecked) var progress: ProgressReporter?
        @exclusivity(unchecked) var download: DownloadTarget?
        @exclusivity(unchecked) var streamsResponseBody: Bool
        @exclusivity(unchecked) var bodyStream: RequestBodyStream?
        /// Whether `url` passed `validateURL()` since it was last set: the string initializer
        /// checks it, so the dispatcher's `validate()` need not parse it again for every send.
        @exclusivity(unchecked) var urlChecked = false

        init(
            method: HTTPMethod, url: URL, headers: HTTPHeaders, body: Data?, options: RequestOptions,
            progress: ProgressReporter?, download: DownloadTarget?, streamsResponseBody: Bool = false,
            bodyStream: RequestBodyStream? = nil
        ) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
            self.options = options
            self.progress = progress
            self.download = download
            self.streamsResponseBody = streamsResponseBody
            self.bodyStream = bodyStream
        }

        func copy() -> Storage {
            let copy = Storage(
                method: method, url: url, headers: headers, body: body, options: options, progress: progress,
                download: download, streamsResponseBody: streamsResponseBody, bodyStream: bodyStream)
            copy.urlChecked = urlChecked
            return copy
        }
    }

    private var storage: Storage

    /// The storage, copied first if another request shares it.
    private var mutable: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    /// The request method.
    public var method: HTTPMethod {
        get { storage.method }
        _modify { yield &mutable.method }
    }
    /// The absolute `http` or `https` URL.
    public var url: URL {
        get { storage.url }
        _modify {
            let storage = mutable
            storage.urlChecked = false
            yield &storage.url
        }
    }
    /// Header fields, in order.
    public var headers: HTTPHeaders {
        get { storage.headers }
        _modify { yield &mutable.headers }
    }
    /// The request body, sent as is; `nil` sends none (unless ``bodyStream`` is set).
    public var body: Data? {
        get { storage.body }
        _modify { yield &mutable.body }
    }
    /// A body sent as it is read, from a file or an `AsyncSequence`, instead of ``body``: for
    /// uploads too large to hold in memory, or produced as they go. See ``RequestBodyStream``
    /// for its length, backpressure, sending it again and signing. Setting both this and
    /// ``body`` is `.configuration`.
    public var bodyStream: RequestBodyStream? {
        get { storage.bodyStream }
        _modify { yield &mutable.bodyStream }
    }
    /// Whether the request has a body, in memory or streamed.
    public var hasBody: Bool { storage.body != nil || storage.bodyStream != nil }
    /// Transport options: timeouts, limits, redirects, TLS, connection overrides.
    public var options: RequestOptions {
        get { storage.options }
        _modify { yield &mutable.options }
    }
    /// Where upload and download progress is reported, if anywhere.
    public var progress: ProgressReporter? {
        get { storage.progress }
        _modify { yield &mutable.progress }
    }
    /// Streams the response body to a file instead of memory, if set.
    public var download: DownloadTarget? {
        get { storage.download }
        _modify { yield &mutable.download }
    }
    /// Hands the response body over as it arrives, in ``Response/bodyStream``, instead of
    /// buffering it in ``Response/body``: the call returns once the head (status and header
    /// fields) is in. For bodies too large to hold, or wanted before they end (exports, logs,
    /// media). See ``ResponseBodyStream`` for backpressure, failures and cancellation.
    ///
    /// A streamed body is not bounded by ``RequestOptions/maxResponseSize`` (nothing is held
    /// whole), but ``RequestOptions/timeout`` still covers the whole transfer: set it to `nil`
    /// (or long enough) for a long stream. The dispatcher asks for `identity` encoding unless
    /// the request sets `Accept-Encoding` itself, and hands the bytes over as sent either way
    /// (never inflated). Cannot be combined with ``download`` (`.configuration`). Caches never
    /// store a streamed response. Off by default.
    public var streamsResponseBody: Bool {
        get { storage.streamsResponseBody }
        _modify { yield &mutable.streamsResponseBody }
    }

    /// Creates a request for a URL.
    public init(
        method: HTTPMethod = .get,
        url: URL,
        headers: HTTPHeaders = [:],
        body: Data? = nil,
        options: RequestOptions = RequestOptions()
    ) {
        storage = Storage(
            method: method, url: url, headers: headers, body: body, options: options, progress: nil, download: nil)
    }

    /// Creates a request from a URL string.
    ///
    /// The string must be a URL as written on the wire: a space or a control character
    /// (U+0000–U+001F, U+007F) anywhere is `.invalidURL`, never percent-encoded on your behalf
    /// (`%20` for a space; API managers encode their parameters themselves). What else a URL
    /// cannot hold raw after its host (`[`, `]`, `|`, `{`, bytes beyond ASCII, a `%` that begins
    /// no escape) is percent-encoded; every `%XX` escape goes as written. Before the path, a
    /// character RFC 3986 never allows there raw (`\`, `<`, `>`, `^`, `|`, `"`, `{`, `}`, a
    /// backtick) is `.invalidURL`: `http://a.example\@b.example/` is a request to `b.example` for
    /// some parsers and to `a.example` for browsers.
    /// - Throws: ``RunwayError`` `.invalidURL` when the string is not an absolute URL with a
    ///   host (one that decodes to a host name, or an IPv6 address in brackets) and a port from
    ///   0 to 65535, or holds a space or control character, `.unsupportedScheme` when the
    ///   scheme is not `http` or `https`; either with ``RunwayError/neverSent``.
    public init(
        method: HTTPMethod = .get,
        _ urlString: String,
        headers: HTTPHeaders = [:],
        body: Data? = nil,
        options: RequestOptions = RequestOptions()
    ) throws(RunwayError) {
        do throws(RunwayError) {
            try Self.checkURLText(urlString, what: "URL")
            try Self.checkAuthorityText(urlString, what: "URL")
            guard let url = Self.parseURL(urlString) else {
                throw RunwayError(.invalidURL, "not a URL: \"\(RunwayError.text(forURL: urlString))\"")
            }
            self.init(method: method, url: url, headers: headers, body: body, options: options)
            try validateURL()
        } catch {
            var failure = error
            failure.neverSent = true
            throw failure
        }
        storage.urlChecked = true
    }

    /// The most bytes a request's head (request line and header fields) may take: half of the
    /// 1 MiB libcurl builds a request in, and far above what any server accepts (8–64 KiB).
    public static let maxHeadSize = 512 << 10

    /// Checks what every dispatcher requires before any I/O: an absolute `http(s)` URL with a host
    /// (and a port, if it has one, from 0 to 65535), a valid method token, header fields that
    /// cannot inject a second header (and one `Host` field at most), a head no larger than ``maxHeadSize``, a body no larger than
    /// ``RequestOptions/maxRequestBodySize``, timeouts above zero, size limits of zero or more, a
    /// proxy that can work (``Proxy``), connect overrides a connection can follow
    /// (``ConnectOverride``), not both ``streamsResponseBody`` and ``download``, no body
    /// on a `HEAD`, and not both ``body`` and ``bodyStream`` (a streamed body is not bounded by
    /// ``RequestOptions/maxRequestBodySize``: it is never held).
    ///
    /// What it throws has ``RunwayError/neverSent``: nothing was sent.
    public func validate() throws(RunwayError) {
        do {
            try validateFields()
        } catch {
            var failure = error
            failure.neverSent = true
            throw failure
        }
    }

    private func validateFields() throws(RunwayError) {
        if !storage.urlChecked { try validateURL() }
        guard method.isValidToken else {
            throw RunwayError(.invalidRequest, "method \(method.rawValue.debugDescription) is not an HTTP token")
        }
        if let (_, reason) = headers.firstInvalidField() {
            throw RunwayError(.invalidHeader, reason)
        }
        try validateLimits()
        if !storage.options.connectOverrides.isEmpty { try validateConnectOverrides(storage.options.connectOverrides) }
        // "GET <url> HTTP/1.1\r\n" and "Name: value\r\n" per field.
        var headSize = method.rawValue.utf8.count + url.absoluteString.utf8.count + 11
        for field in headers { headSize += field.name.utf8.count + field.value.utf8.count + 4 }
        if headSize > Self.maxHeadSize {
            throw RunwayError(
                .requestTooLarge,
                "the request's URL and header fields take \(headSize) bytes, over the \(Self.maxHeadSize)-byte limit of a request head")
        }
        // Framing is the dispatcher's: a hand-set length that disagrees with the body would
        // leave the server waiting for bytes that never come (or cut the body short).
        for field in headers where field.name.utf8.count == 14 || field.name.utf8.count == 17 {
            if field.name.caseInsensitiveEquals("Content-Length") {
                // Digits only (RFC 9110 §8.6): `Int` would also take "+3" and "-0", which a
                // proxy or server may read otherwise.
                let text = field.value.trimmingBlanks()
                let length = !text.isEmpty && text.utf8.allSatisfy { (0x30...0x39).contains($0) } ? Int(text) : nil
                let bodyLength = bodyStream.map { $0.length } ?? body?.count ?? 0
                guard length == bodyLength else {
                    throw RunwayError(
                        .invalidHeader,
                        "Content-Length \"\(field.value)\" does not match the body's "
                            + "\(bodyLength.map { "\($0) bytes" } ?? "unknown length") (leave it out: the dispatcher sets it)"
                    )
                }
            } else if field.name.caseInsensitiveEquals("Transfer-Encoding") {
                throw RunwayError(.invalidHeader, "Transfer-Encoding is the dispatcher's to set (leave it out)")
            }
        }
        for pin in options.tls.pinnedPublicKeys where !Self.isPin(pin) {
            throw RunwayError(
                .configuration,
                "pinned public key \"\(pin)\" is not sha256//<base64 of 32 bytes> (e.g. from `openssl pkey -pubin -outform der | "
                    + "openssl dgst -sha256 -binary | base64`)",
                field: "tls.pinnedPublicKeys")
        }
        if let server = options.proxy?.server { try server.validate() }
        if streamsResponseBody, download != nil {
            throw RunwayError(
                .configuration, "a request cannot both stream its response body and download it to a file (pick one)",
                field: "streamsResponseBody")
        }
        if let bodyStream {
            try validate(bodyStream)
        }
        if method == .head, let body, !body.isEmpty {
            // Dispatchers send a HEAD without one: it would be dropped silently, after signing
            // and logging had counted it as sent.
            throw RunwayError(.configuration, "a HEAD request cannot send a body", field: "body")
        }
        if let body, body.count > options.maxRequestBodySize {
            throw RunwayError(
                .requestTooLarge,
                "request body is \(body.count) bytes, the limit is \(options.maxRequestBodySize)")
        }
    }

    /// A streamed body goes alone, and not with `HEAD` (a request that never sends a body).
    private func validate(_ stream: RequestBodyStream) throws(RunwayError) {
        if body != nil {
            throw RunwayError(
                .configuration, "a request has either a body or a body stream, not both (set one of them to nil)", field: "bodyStream")
        }
        if method == .head {
            throw RunwayError(.configuration, "a HEAD request cannot send a body", field: "bodyStream")
        }
        if let length = stream.length, length < 0 {
            throw RunwayError(.configuration, "the body stream's length is \(length); it must be 0 or more", field: "bodyStream")
        }
        if let digest = stream.sha256, digest.count != 32 {
            throw RunwayError(
                .configuration, "the body stream's sha256 is \(digest.count) bytes; a SHA-256 digest is 32", field: "bodyStream")
        }
    }

    /// Throws `.invalidURL` when `text`, a URL or a piece of one, holds a space or a control
    /// character: Foundation's parser would percent-encode them silently, so a CR LF meant to
    /// inject a header, or a stray tab, would be sent as `%0D%0A` or `%09` instead of failing.
    package static func checkURLText(_ text: String, what: String) throws(RunwayError) {
        var offset = 0
        for byte in text.utf8 {
            if byte <= 0x20 || byte == 0x7F {
                let name = byte == 0x20 ? "a space" : "the control character 0x\(String(byte, radix: 16, uppercase: true))"
                throw RunwayError(
                    .invalidURL,
                    "\(what) holds \(name) at byte \(offset) (percent-encode it: "
                        + "%\(byte < 0x10 ? "0" : "")\(String(byte, radix: 16, uppercase: true))): "
                        + RunwayError.text(forURL: text).debugDescription
                )
            }
            offset += 1
        }
    }

    /// A timeout of zero or below cannot be met: it is a configuration error, not a timeout
    /// after the first turn of a dispatcher's loop.
    private func validateLimits() throws(RunwayError) {
        guard options.maxResponseSize >= 0 else {
            throw RunwayError(
                .configuration, "maxResponseSize is \(options.maxResponseSize); it must be 0 or more (bytes)",
                field: "options.maxResponseSize")
        }
        guard options.maxRequestBodySize >= 0 else {
            throw RunwayError(
                .configuration, "maxRequestBodySize is \(options.maxRequestBodySize); it must be 0 or more (bytes)",
                field: "options.maxRequestBodySize")
        }
        guard options.connectTimeout > .zero else {
            throw RunwayError(
                .configuration, "connectTimeout is \(options.connectTimeout); it must be above zero", field: "options.connectTimeout")
        }
        if let timeout = options.timeout, timeout <= .zero {
            throw RunwayError(
                .configuration, "timeout is \(timeout); it must be above zero (nil: no limit)", field: "options.timeout")
        }
        if let idleTimeout = options.idleTimeout, idleTimeout <= .zero {
            throw RunwayError(
                .configuration, "idleTimeout is \(idleTimeout); it must be above zero (nil: no limit)", field: "options.idleTimeout")
        }
    }

    /// `sha256//` and the base64 of a SHA-256 digest.
    private static func isPin(_ pin: String) -> Bool {
        guard pin.hasPrefix("sha256//") else { return false }
        return Data(base64Encoded: String(pin.dropFirst("sha256//".count)))?.count == 32
    }

    private func validateURL() throws(RunwayError) {
        // Runs for every request made from a string, and in the dispatcher for one whose URL was
        // set since, so it compares without lower-casing copies and scans the bytes in one loop.
        guard let scheme = url.scheme else {
            throw RunwayError(.invalidURL, "URL has no scheme: \"\(RunwayError.text(forURL: url))\"")
        }
        guard scheme.caseInsensitiveEquals("http") || scheme.caseInsensitiveEquals("https") else {
            throw RunwayError(.unsupportedScheme, "scheme \"\(scheme.lowercased())\" is not http or https")
        }
        var absolute = url.absoluteString
        try Self.checkHostAndPort(of: url, absolute: absolute)
        let hasControl = absolute.withUTF8 { bytes in bytes.contains { $0 <= 0x20 || $0 == 0x7F } }
        if hasControl {
            throw RunwayError(.invalidURL, "URL contains spaces or control characters")
        }
    }
}

extension Request: CustomStringConvertible {
    /// The method and the URL as error messages show it: without user information, query,
    /// fragment and path parameters, where passwords, tokens and session ids travel (a request
    /// printed in a log must not leak them). `url` has all of it.
    public var description: String { "\(method) \(RunwayError.text(forURL: url))" }
}

extension Request {
    /// `text` parsed as a URL, with what a URL cannot hold raw after its authority (bytes beyond
    /// ASCII, `[`, `]`, `|`, `{`, `^`, a `%` that begins no escape, ...) percent-encoded first and
    /// every `%XX` escape kept as written. Given such a character, Foundation's parser encodes the
    /// whole string again, escapes included: `?a%5B%5D=1&b[c]=2` would be sent as
    /// `?a%255B%255D=1&b%5Bc%5D=2`, other parameters than the ones written.
    package static func parseURL(_ text: String) -> URL? {
        URL(string: encodingWhatURLsCannotHold(text))
    }

    /// ``parseURL(_:)``'s text: `text` itself when it holds nothing to encode (no copy).
    package static func encodingWhatURLsCannotHold(_ text: String) -> String {
        text.withUTF8Bytes { bytes in
            // After "scheme://authority", or from the start of a text without one (a relative
            // reference: "://" in its query is no scheme's).
            var start = 0
            var index = 0
            while index + 2 < bytes.count, bytes[index] != UInt8(ascii: "/"), bytes[index] != UInt8(ascii: "?"),
                bytes[index] != UInt8(ascii: "#")
            {
                if bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"), bytes[index + 2] == UInt8(ascii: "/") {
                    start = index + 3
                    while start < bytes.count, bytes[start] != UInt8(ascii: "/"), bytes[start] != UInt8(ascii: "?"),
                        bytes[start] != UInt8(ascii: "#")
                    {
                        start += 1
                    }
                    break
                }
                index += 1
            }
            func keeps(_ index: Int) -> Bool {
                let byte = bytes[index]
                guard byte == UInt8(ascii: "%") else { return isAllowed(byte) }
                return index + 2 < bytes.count && RequestParameters.hexValue(bytes[index + 1]) != nil
                    && RequestParameters.hexValue(bytes[index + 2]) != nil
            }
            guard (start..<bytes.count).contains(where: { !keeps($0) }) else { return text }
            var encoded: [UInt8] = []
            encoded.reserveCapacity(bytes.count + 16)
            for index in 0..<start { encoded.append(bytes[index]) }
            for index in start..<bytes.count {
                let byte = bytes[index]
                if keeps(index) {
                    encoded.append(byte)
                } else {
                    encoded.append(UInt8(ascii: "%"))
                    encoded.append(RequestParameters.hexDigit(byte >> 4))
                    encoded.append(RequestParameters.hexDigit(byte & 0x0F))
                }
            }
            return String(decoding: encoded, as: UTF8.self)
        }
    }

    /// RFC 3986 unreserved and sub-delimiter characters, and `:`, `@`, `/`, `?`, `#`: what a
    /// path, query and fragment hold as they are.
    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "!"), UInt8(ascii: "$"),
            UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"),
            UInt8(ascii: "?"), UInt8(ascii: "#"):
            // A switch, not a search of a string: this runs for every byte of every URL a call builds.
            return true
        default:
            return false
        }
    }
}
