import Foundation
import RunwayCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `Dispatcher` on Foundation's `URLSession`: the portable fallback to `CurlDispatcher`.
///
/// ```swift
/// let pipeline = Pipeline(dispatcher: URLSessionDispatcher()) { ... }
/// ```
/// One `URLSession` (and so one connection pool) per dispatcher. It honours the total timeout,
/// task cancellation (the transfer is cancelled at once), the response-size limit (counted on
/// the decompressed body as it arrives, so a gzip bomb stops at the limit), the redirect
/// policy, progress, and downloads to a file with resume.
///
/// What `URLSession` cannot do is refused with a `.configuration` `RunwayError` instead of
/// being ignored: a custom CA bundle, public-key pinning, turning verification off, connect
/// overrides and proxies (swift-corelibs-foundation on Linux has no API for any of them), a
/// streamed response body (`Request.streamsResponseBody`: FoundationNetworking cannot hold the
/// server back for a slow reader), a streamed request body (`Request.bodyStream`), (on Linux) a
/// GET with a body, and a
/// request while the environment names a proxy for it, which FoundationNetworking would follow on
/// its own, and (on Linux) a URL whose host is an IPv6 address, which it cannot reach. The connect
/// timeout is not enforced separately: `URLSession` exposes no connect phase, so only the total
/// timeout bounds a hanging connect; for the same reason the idle timeout counts from the start
/// of the transfer, its connect included. `TransferMetrics` carry the total time and the redirect
/// count only. A POST body without a `Content-Type` goes out labelled
/// `application/x-www-form-urlencoded` (URLSession's default; `CurlDispatcher` sends none), so
/// give such a body its type.
///
/// On Linux, FoundationNetworking has faults no dispatcher on top of it can reach: a chunked
/// response with trailer fields, or a header section cut off by the server, stops the process
/// inside FoundationNetworking; a body-less POST goes out a second time when a reused connection
/// dies before the answer; a gzip body cut short arrives as complete; repeated header fields are
/// joined into one value (`Set-Cookie` is split back into one field per cookie, at each comma
/// a `name=` follows); a 307 or 308, or a 301 or 302 of a method other than POST, would send
/// the request's body empty (refused here with `.configuration`); a status line without a
/// reason phrase, bare LF line ends and header values
/// that are not UTF-8 are refused (`.responseInvalid`). Use `CurlDispatcher` for servers you do not control. What can be checked is,
/// as `CurlDispatcher` does: a status outside 100–599, a `Content-Length` that is not one number
/// or a body its coding cannot decode is `.responseInvalid`; a redirect goes only to the HTTP(S) URL its `Location` names, without
/// `Authorization` or `Cookie` when it leaves the origin; a timeout or a cancellation releases the
/// caller at once.
public final class URLSessionDispatcher: Dispatcher {
    /// Settings of the dispatcher's session.
    public struct Configuration: Sendable {
        /// The most connections opened to one host at a time.
        public var maxConnectionsPerHost: Int

        /// Creates a configuration.
        public init(maxConnectionsPerHost: Int = 6) {
            self.maxConnectionsPerHost = maxConnectionsPerHost
        }
    }

    /// The settings this dispatcher was created with.
    public let configuration: Configuration
    private let session: URLSession
    private let delegate: SessionDelegate
    /// The session's delegate queue (serial): every callback runs there, and every cancel.
    private let delegateQueue: OperationQueue

    /// Creates a dispatcher with its own `URLSession`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.httpMaximumConnectionsPerHost = max(1, configuration.maxConnectionsPerHost)
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.urlCache = nil
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.httpShouldSetCookies = false
        // Timeouts are enforced by the dispatcher itself, to the millisecond; these are only a
        // backstop (corelibs rounds them down to whole seconds).
        sessionConfiguration.timeoutIntervalForRequest = Self.backstopTimeout
        sessionConfiguration.timeoutIntervalForResource = Self.backstopTimeout
        let delegate = SessionDelegate()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "runway.urlsession.delegate"
        self.delegate = delegate
        self.delegateQueue = queue
        self.session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        session.invalidateAndCancel()
    }

    public var name: String { "urlsession" }

    /// A week: longer than any timeout the dispatcher enforces itself.
    static let backstopTimeout: TimeInterval = 7 * 24 * 3600

    public func dispatch(_ request: Request, context: RequestContext) async throws -> Response {
        defer { request.progress?.finish() }
        do {
            do throws(RunwayError) {
                try request.validate()
                try Self.checkSupported(request.options)
                try Self.checkNotStreamed(request)
                try Self.checkNoProxy(request)
                try Self.checkReachableHost(request)
                try Self.checkBodyWithMethod(request)
            } catch {
                // Before any I/O: nothing was sent.
                var failure = error
                failure.neverSent = true
                throw failure
            }
            if Task.isCancelled {
                throw RunwayError(.cancelled, "the calling task was cancelled", underlying: CancellationError())
            }
            return try await send(request, context: context)
        } catch {
            throw RunwayError.attributing(error, to: .dispatcher(name), fallback: .transport)
        }
    }

    private func send(_ request: Request, context: RequestContext) async throws -> Response {
        let sink = try ResponseSink.make(for: request)
        var urlRequest = try URLRequestBuilder.make(for: request, resumeOffset: sink.resumeOffset, ifRange: sink.resumeValidator)
        urlRequest.timeoutInterval = Self.backstopTimeout
        let transfer = Transfer(request: request, sink: sink, delegateQueue: delegateQueue)
        let task = session.dataTask(with: urlRequest)
        delegate.register(transfer, for: task)
        defer { delegate.unregister(task) }
        let timer = request.options.timeout.map { timeout in
            Task { [weak transfer] in
                // No longer than the session's own backstop: a sleep of `.seconds(.max)` (a
                // timeout meant as "no limit") traps in the clock's arithmetic.
                try await Task.sleep(for: min(timeout, .seconds(Self.backstopTimeout)))
                transfer?.abort(RunwayError(.timeout, "no response within \(timeout)"))
            }
        }
        defer { timer?.cancel() }
        let idleTimer = request.options.idleTimeout.map { limit in
            Task { [weak transfer] in
                // Wakes when the transfer would have gone `limit` without a byte moving, looks
                // again, and aborts it if none did meanwhile.
                while true {
                    guard let left = transfer?.idleTimeLeft(of: limit) else { return }
                    if left <= .zero {
                        transfer?.abort(RunwayError(.timeout, "nothing was sent or received for \(limit), the request's idle timeout"))
                        return
                    }
                    try await Task.sleep(for: min(left, .seconds(Self.backstopTimeout)))
                }
            }
        }
        defer { idleTimer?.cancel() }
        return try await withTaskCancellationHandler {
            try await transfer.run(task)
        } onCancel: {
            transfer.abort(RunwayError(.cancelled, "the call was cancelled", underlying: CancellationError()))
        }
    }

    /// Refuses, on Linux, a URL whose host is an IPv6 address (`http://[::1]:8080/`):
    /// FoundationNetworking fails each such request with an unhelpful `NSURLErrorDomain -1000`.
    static func checkReachableHost(_ request: Request) throws(RunwayError) {
        #if canImport(FoundationNetworking)
        if let host = request.url.host, host.contains(":") {
            throw RunwayError(
                .configuration,
                "URLSessionDispatcher cannot reach an IPv6 address written in the URL (\(host)): FoundationNetworking fails every "
                    + "such request; use CurlDispatcher, or a host name",
                field: "url")
        }
        #endif
    }

    /// Refuses, on Linux, a GET with a body: FoundationNetworking fails it before sending with
    /// `NSURLErrorDataLengthExceedsMaximum` ("resource exceeds maximum size"), which would read as a
    /// response over the size limit (`CurlDispatcher` sends it).
    static func checkBodyWithMethod(_ request: Request) throws(RunwayError) {
        #if canImport(FoundationNetworking)
        if request.method == .get, let body = request.body, !body.isEmpty {
            throw RunwayError(
                .configuration,
                "URLSessionDispatcher cannot send a GET with a body (FoundationNetworking refuses it); use CurlDispatcher, or "
                    + "another method",
                field: "body")
        }
        #endif
    }

    /// Refuses a request that would go through a proxy: one it is given (``RequestOptions/proxy``,
    /// or the environment's with ``Proxy/environment``), since FoundationNetworking has no
    /// per-request proxy and would send it straight to the origin; and, when it is given none,
    /// one that the environment names (`http_proxy`, `all_proxy`, ...), since FoundationNetworking's
    /// libcurl would follow it on its own and cannot be told not to. Either way the request is
    /// not sent anywhere it was not meant to go.
    static func checkNoProxy(_ request: Request) throws(RunwayError) {
        if let server = try request.options.proxy?.server(for: request.url) {
            throw RunwayError(
                .configuration, "URLSessionDispatcher cannot send through a proxy (the \(server.name)); use CurlDispatcher",
                field: "proxy")
        }
        if let variable = Proxy.environmentVariable(for: request.url) {
            throw RunwayError(
                .configuration,
                "URLSessionDispatcher would send this request through the proxy in the environment variable \(variable) "
                    + "(FoundationNetworking reads it on its own and cannot be told not to): unset it, or use CurlDispatcher",
                field: "proxy")
        }
    }

    /// Refuses a streamed response body (`Request.streamsResponseBody`): FoundationNetworking's
    /// data delegate is handed each chunk as its own libcurl loop reads it, with no way to hold
    /// the server back while the reader is slow, so a stream could not keep memory bounded. The
    /// request is refused before anything is sent.
    /// A streamed request body (`Request.bodyStream`) is refused too: Runway reads it through
    /// libcurl's pause and resume, which FoundationNetworking's input-stream body cannot express.
    static func checkNotStreamed(_ request: Request) throws(RunwayError) {
        if request.bodyStream != nil {
            throw RunwayError(
                .configuration, "URLSessionDispatcher cannot send a streamed request body (Request.bodyStream); use CurlDispatcher",
                field: "bodyStream")
        }
        guard request.streamsResponseBody else { return }
        throw RunwayError(
            .configuration,
            "URLSessionDispatcher cannot stream a response body with backpressure (FoundationNetworking pushes every chunk "
                + "to its delegate however slow the reader is); use CurlDispatcher",
            field: "streamsResponseBody")
    }

    /// Refuses options `URLSession` cannot honour, rather than ignoring them.
    static func checkSupported(_ options: RequestOptions) throws(RunwayError) {
        if options.tls.certificateAuthorities != nil {
            throw RunwayError(
                .configuration,
                "URLSessionDispatcher cannot use a custom CA bundle (no API in Foundation on this platform); use CurlDispatcher",
                field: "tls.certificateAuthorities")
        }
        if !options.tls.pinnedPublicKeys.isEmpty {
            throw RunwayError(
                .configuration, "URLSessionDispatcher cannot pin public keys; use CurlDispatcher", field: "tls.pinnedPublicKeys")
        }
        if options.tls.clientCertificate != nil {
            throw RunwayError(
                .configuration, "URLSessionDispatcher cannot present a client certificate; use CurlDispatcher",
                field: "tls.clientCertificate")
        }
        if !options.tls.verifyPeer {
            throw RunwayError(
                .configuration, "URLSessionDispatcher cannot turn certificate verification off; use CurlDispatcher",
                field: "tls.verifyPeer")
        }
        if !options.connectOverrides.isEmpty {
            throw RunwayError(
                .configuration, "URLSessionDispatcher cannot override the connect address; use CurlDispatcher",
                field: "connectOverrides")
        }
    }
}
