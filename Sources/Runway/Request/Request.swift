import Foundation

/// One HTTP request as it travels through the interceptor chain to the dispatcher.
///
/// A value: an interceptor that changes the request changes its own copy and passes it on.
public struct Request: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The absolute `http` or `https` URL.
    public var url: URL
    /// Header fields, in order.
    public var headers: HTTPHeaders
    /// The request body, sent as is; `nil` sends none.
    public var body: Data?
    /// Transport options: timeouts, limits, redirects, TLS, connection overrides.
    public var options: RequestOptions
    /// Where upload and download progress is reported, if anywhere.
    public var progress: ProgressReporter?
    /// Streams the response body to a file instead of memory, if set.
    public var download: DownloadTarget?

    /// Creates a request for a URL.
    public init(
        method: HTTPMethod = .get,
        url: URL,
        headers: HTTPHeaders = [:],
        body: Data? = nil,
        options: RequestOptions = RequestOptions()
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.options = options
    }

    /// Creates a request from a URL string.
    ///
    /// - Throws: ``RunwayError`` `.invalidURL` when the string is not an absolute URL with a
    ///   host, `.unsupportedScheme` when the scheme is not `http` or `https`.
    public init(
        method: HTTPMethod = .get,
        _ urlString: String,
        headers: HTTPHeaders = [:],
        body: Data? = nil,
        options: RequestOptions = RequestOptions()
    ) throws(RunwayError) {
        guard let url = URL(string: urlString) else {
            throw RunwayError(.invalidURL, "not a URL: \"\(urlString)\"")
        }
        self.init(method: method, url: url, headers: headers, body: body, options: options)
        try validateURL()
    }

    /// Checks what every dispatcher requires before any I/O: an absolute `http(s)` URL with a
    /// host, a valid method token, header fields that cannot inject a second header, and a body
    /// no larger than ``RequestOptions/maxRequestBodySize``.
    public func validate() throws(RunwayError) {
        try validateURL()
        guard method.isValidToken else {
            throw RunwayError(.invalidRequest, "method \"\(method)\" is not an HTTP token")
        }
        if let (_, reason) = headers.firstInvalidField() {
            throw RunwayError(.invalidHeader, reason)
        }
        if let body, body.count > options.maxRequestBodySize {
            throw RunwayError(
                .requestTooLarge,
                "request body is \(body.count) bytes, the limit is \(options.maxRequestBodySize)")
        }
    }

    private func validateURL() throws(RunwayError) {
        // Runs for every request (at creation and again in the dispatcher), so it compares
        // without lower-casing copies and scans the bytes in one loop.
        guard let scheme = url.scheme else {
            throw RunwayError(.invalidURL, "URL has no scheme: \"\(url.absoluteString)\"")
        }
        guard scheme.caseInsensitiveEquals("http") || scheme.caseInsensitiveEquals("https") else {
            throw RunwayError(.unsupportedScheme, "scheme \"\(scheme.lowercased())\" is not http or https")
        }
        guard let host = url.host, !host.isEmpty else {
            throw RunwayError(.invalidURL, "URL has no host: \"\(url.absoluteString)\"")
        }
        var absolute = url.absoluteString
        let hasControl = absolute.withUTF8 { bytes in bytes.contains { $0 <= 0x20 || $0 == 0x7F } }
        if hasControl {
            throw RunwayError(.invalidURL, "URL contains spaces or control characters")
        }
    }
}

extension Request: CustomStringConvertible {
    public var description: String { "\(method) \(url.absoluteString)" }
}
