import CCurl
import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The collective dispatcher: every request of the app goes out through one libcurl **multi**
/// handle driven by one dedicated thread.
///
/// What it gives over a per-request client:
/// - connection reuse (keep-alive) across all requests, with a per-host connection cap;
/// - HTTP/2 multiplexing over TLS where the server offers it through ALPN (many requests share
///   one connection);
/// - connect and total timeouts, a response-size limit counted after decompression, redirects
///   off by default;
/// - compressed responses inflated by the awaiting task rather than the loop thread (see
///   ``Configuration/ResponseDecoding``);
/// - task cancellation that removes the transfer at once, so the server sees the connection
///   abort (HTTP/1.1) or a stream reset (HTTP/2);
/// - TLS verification on by default, a custom CA bundle, public-key pinning, connect overrides
///   (DNS bypass) that keep the host name for SNI, `Host` and certificate checks;
/// - HTTP proxies (`https` through a `CONNECT` tunnel) and SOCKS5 proxies, with credentials
///   (`RequestOptions.proxy`); no proxy from the environment unless asked for
///   (`Proxy.environment`);
/// - upload/download progress, downloads streamed to a file and resumed with `Range`;
/// - per-phase timings and connection reuse on every `Response.metrics`.
///
/// Create one at start-up and share it: it owns a thread, stopped when the dispatcher is
/// released (transfers still running then fail with `.cancelled`). The release returns once
/// that thread has ended, so a process may exit right after it; a release made on that thread
/// itself (by a task on ``loopExecutor``) cannot wait for it, and returns before it ends.
///
/// h2c (cleartext HTTP/2) is not used by default: libcurl before 8.0 cannot reuse an h2c
/// connection (curl issue #10634), so `HTTPVersionPreference.automatic` means HTTP/2 over TLS
/// and HTTP/1.1 over cleartext.
public final class CurlDispatcher: Dispatcher {
    private let multi: CurlMulti
    private let decoding: Configuration.ResponseDecoding
    private let executor: LoopExecutor

    /// Starts a dispatcher and its thread.
    public init(configuration: Configuration = Configuration()) {
        multi = CurlMulti(configuration: configuration)
        decoding = configuration.responseDecoding
        executor = LoopExecutor(multi: multi)
    }

    /// A dispatcher whose loop waits with `socketBackend`, so tests run both on Linux.
    init(configuration: Configuration = Configuration(), socketBackend: SocketWatch.Backend) {
        multi = CurlMulti(configuration: configuration, backend: socketBackend)
        decoding = configuration.responseDecoding
        executor = LoopExecutor(multi: multi)
    }

    /// The dispatcher's loop thread as a task executor, for tasks that make call after call and do
    /// little else: a server's or a tool's workers, not an app's screens.
    ///
    /// A task started with it as its executor preference runs on the loop thread between the
    /// loop's turns, and so does every nonisolated async function it calls (interceptors included).
    /// Its requests then start in the turn that sends them, and a response resumes it in the turn
    /// that reads it: no thread is woken either way, which saves CPU and latency per call.
    /// ```swift
    /// let dispatcher = CurlDispatcher()
    /// let pipeline = Pipeline(dispatcher: dispatcher) { /* interceptors */ }
    /// let worker = Task(executorPreference: dispatcher.loopExecutor) {
    ///     for id in ids { _ = try await pipeline.send(try Request("https://api.example.com/items/\(id)")) }
    /// }
    /// ```
    /// The loop moves every transfer's bytes, so while such a task runs, no transfer makes
    /// progress: keep heavy work (a large JSON decode, image processing) off it, and never block
    /// it (a lock held long, a semaphore, synchronous I/O), which would stall every request. Actors,
    /// the main actor included, still run their own code. Without a preference (the default) the
    /// loop only moves bytes and callers run on Swift's global executor. Once the dispatcher is
    /// released, the tasks that still prefer this executor run on the global executor instead.
    public var loopExecutor: any TaskExecutor { executor }

    /// How the loop waits for sockets (nil when it could not start).
    var socketBackend: SocketWatch.Backend? { multi.backend }

    /// The loop thread's kernel ID once it runs (Linux), for tests.
    var loopThreadID: Int? { multi.loopThreadID }

    deinit {
        multi.stop()
    }

    public var name: String { Self.stageName }

    /// The name failures are attributed to (`RunwayError.Stage.dispatcher`).
    static let stageName = "curl"

    /// The libcurl version in use, such as "7.88.1".
    public static var libcurlVersion: String {
        guard let info = runway_version_info(), let version = info.pointee.version else { return "" }
        return String(cString: version)
    }

    public func dispatch(_ request: Request, context: RequestContext) async throws -> Response {
        let proxy: Proxy.Server?
        let bodyReader: RequestBodyReader?
        do {
            try request.validate()
            // Resolved here, on the caller's thread: `.environment` reads the process environment.
            proxy = try request.options.proxy?.server(for: request.url)
            // Opens the file, or starts reading the sequence ahead.
            bodyReader = try request.bodyStream?.makeReader()
        } catch {
            request.progress?.finish()
            // Before any I/O: nothing was sent.
            var failure = error
            failure.neverSent = true
            throw failure
        }
        let started = bodyReader == nil ? nil : ContinuousClock.now
        if let bodyReader, request.bodyStream?.length == 0 {
            // libcurl reads nothing of a body declared empty: it is read to its end here.
            do {
                try await bodyReader.waitForEnd(timeout: request.options.timeout)
            } catch {
                bodyReader.close()
                request.progress?.finish()
                var failure = error
                failure.neverSent = true
                throw failure
            }
        }
        let transfer = CurlTransfer(request: request, decoding: decoding, proxy: proxy)
        let multi = multi
        do {
            // The easy handle is set up here, on the caller's thread; the loop only adds it.
            try multi.prepare(transfer)
        } catch {
            bodyReader?.close()
            request.progress?.finish()
            throw error
        }
        if let bodyReader {
            transfer.bodyReader = bodyReader
            // Weak, as for a streamed response: the reader's task must not keep the transfer alive.
            bodyReader.onReadable { [weak multi, weak transfer] in
                if let multi, let transfer { multi.resume(transfer) }
            }
        }
        var stream: ResponseBodyStream?
        if request.streamsResponseBody {
            // Weak: a stream kept after its transfer ended must not keep the transfer alive.
            let made = ResponseBodyStream.makeStream(
                onResume: { [weak multi, weak transfer] in
                    if let multi, let transfer { multi.resume(transfer) }
                },
                onCancel: { [weak multi, weak transfer] in
                    if let multi, let transfer { multi.cancel(transfer) }
                })
            stream = made.stream
            transfer.producer = made.producer
        }
        // The task's cancellation removes the transfer at once (the server sees the abort).
        await withTaskCancellationHandler {
            // Unsafe (no checking canary to allocate): `CurlTransfer.finish` resumes it exactly
            // once and drops it, and only the transfer's single owner calls `finish`.
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                transfer.continuation = continuation
                multi.submit(transfer)
            }
        } onCancel: {
            multi.cancel(transfer)
        }
        var response = try transfer.takeOutcome().get()
        if let stream {
            // The head, parsed on the loop; the body follows in the stream, as sent.
            response.bodyStream = stream
            return response
        }
        // Parsed here, on the awaiting task: the loop thread only kept the bytes.
        if !transfer.parsesHeadersOnLoop { response.headers = transfer.parsedHeaders() }
        if let bodyReader, let started {
            // libcurl stopped reading at the declared length: what the sequence throws or yields
            // after it fails the call (with the server's answer), which is over once it ends.
            defer { bodyReader.close() }
            do {
                try await bodyReader.waitForEnd(timeout: request.options.timeout.map { $0 - (ContinuousClock.now - started) })
            } catch {
                var failure = error
                failure.response = response
                throw failure
            }
        }
        // Inflated here, on the awaiting task, so the one loop thread goes on moving bytes for
        // every other transfer meanwhile.
        guard transfer.decodesOnAwaitingTask else { return response }
        return try ResponseDecoder.decode(response, limit: request.options.maxResponseSize, passingOthers: transfer.asksOwnEncodings)
    }
}

extension CurlDispatcher {
    /// Settings of the shared multi handle.
    public struct Configuration: Sendable {
        /// The most connections open to one origin (scheme, host and port) at once; further
        /// requests wait for one of that origin's, first come first (or share an HTTP/2
        /// connection), never behind requests to another origin. 0 means no limit.
        public var maxConnectionsPerHost: Int
        /// The most connections open in total; 0 means no limit.
        public var maxTotalConnections: Int
        /// How many idle connections are kept for reuse.
        public var connectionCacheSize: Int
        /// The `User-Agent` sent when a request does not set one.
        public var userAgent: String
        /// Who inflates compressed responses (`RequestOptions.acceptCompressedResponses`).
        public var responseDecoding: ResponseDecoding

        public init(
            maxConnectionsPerHost: Int = 8,
            maxTotalConnections: Int = 0,
            connectionCacheSize: Int = 64,
            userAgent: String = "Runway/0.1",
            responseDecoding: ResponseDecoding = .awaitingTask
        ) {
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.maxTotalConnections = maxTotalConnections
            self.connectionCacheSize = connectionCacheSize
            self.userAgent = userAgent
            self.responseDecoding = responseDecoding
        }

        /// The settings with a pool size, which is ignored: see ``easyHandlePoolSize``.
        @available(*, deprecated, message: "easyHandlePoolSize is ignored: every request gets an easy handle of its own")
        public init(
            maxConnectionsPerHost: Int = 8,
            maxTotalConnections: Int = 0,
            connectionCacheSize: Int = 64,
            userAgent: String = "Runway/0.1",
            easyHandlePoolSize: Int,
            responseDecoding: ResponseDecoding = .awaitingTask
        ) {
            self.init(
                maxConnectionsPerHost: maxConnectionsPerHost, maxTotalConnections: maxTotalConnections,
                connectionCacheSize: connectionCacheSize, userAgent: userAgent, responseDecoding: responseDecoding)
        }

        /// Ignored, always 0: every request gets an easy handle of its own, freed when it ends.
        /// Handles were kept for reuse until libcurl 7.88 was found to write into freed memory on a
        /// handle's next transfer when a reply's first header line is folded (a reset handle too);
        /// a new handle costs what a copy of a used one (`curl_easy_duphandle`) does.
        @available(*, deprecated, message: "ignored: every request gets an easy handle of its own")
        public var easyHandlePoolSize: Int {
            get { 0 }
            set {}
        }

        /// Who inflates a compressed response body.
        ///
        /// Either way the dispatcher asks for `gzip, deflate`, the body a caller gets is decoded,
        /// its headers are as the server sent them, `RequestOptions.maxResponseSize` counts
        /// decoded bytes (a gzip bomb is `.responseTooLarge`, never an out-of-memory), and a
        /// stream cut short inside a complete message, corrupt, or in an encoding that was not
        /// asked for is `.responseInvalid` — never a silent prefix. Downloads to a file are always
        /// inflated on the loop, as they arrive; a resumed one asks for `identity` (its range
        /// counts the bytes stored). A request that sets its own `Accept-Encoding` sends it
        /// instead, and gets back decoded what Runway decodes (anything else as sent,
        /// `Content-Encoding` intact); `RequestOptions.acceptCompressedResponses` `false`
        /// turns decoding off.
        public enum ResponseDecoding: Sendable, Hashable {
            /// The task awaiting the response inflates the whole body once it is in. The
            /// default: inflating is the costliest step of a compressed response, and the
            /// dispatcher has one loop thread for every transfer, so the callers' tasks do it
            /// instead, in parallel.
            case awaitingTask
            /// The loop thread inflates the body as it arrives, so the encoded body is never held
            /// whole (less memory for large compressed responses, more work on the one loop).
            case loopThread

            /// Renamed ``loopThread``: libcurl's own decoder passes a truncated stream as complete,
            /// so Runway's inflater does this work on the loop thread.
            @available(*, deprecated, renamed: "loopThread")
            public static var libcurl: Self { .loopThread }
        }
    }
}
