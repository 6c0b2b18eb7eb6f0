/// How far an upload and a download have come.
public struct TransferProgress: Sendable, Equatable {
    /// Request-body bytes sent so far.
    public var bytesSent: Int64
    /// Request-body size, when known.
    public var totalBytesToSend: Int64?
    /// Response-body bytes received so far (as transferred, before decompression): the final
    /// response's, never those of a redirect followed on the way.
    public var bytesReceived: Int64
    /// Response-body size, when the server announced it (for the final response).
    public var totalBytesToReceive: Int64?

    public init(bytesSent: Int64 = 0, totalBytesToSend: Int64? = nil, bytesReceived: Int64 = 0, totalBytesToReceive: Int64? = nil) {
        self.bytesSent = bytesSent
        self.totalBytesToSend = totalBytesToSend
        self.bytesReceived = bytesReceived
        self.totalBytesToReceive = totalBytesToReceive
    }

    /// Makes a progress stream and the reporter a request carries to feed it.
    ///
    /// ```swift
    /// let (progress, reporter) = TransferProgress.makeStream()
    /// request.progress = reporter
    /// Task { for await p in progress { print(p.bytesReceived) } }
    /// ```
    /// The dispatcher finishes the stream when the transfer ends, however it ends, and
    /// `Pipeline.send` when the call ends, also one that needed no transfer (a cache hit, a call
    /// joined to another in flight, one an interceptor refused); a call that sends more than one
    /// request (retry, a redirect followed in the chain, a token refresh) reports each in turn,
    /// and its stream ends with the last.
    public static func makeStream(bufferingNewest limit: Int = 16) -> (AsyncStream<TransferProgress>, ProgressReporter) {
        let (stream, continuation) = AsyncStream.makeStream(of: TransferProgress.self, bufferingPolicy: .bufferingNewest(limit))
        return (stream, ProgressReporter(continuation: continuation))
    }
}

/// The sending end of a progress stream; dispatchers call it.
///
/// A call that sends more than one request (a retry, a redirect followed in the chain, the
/// replay after a token refresh) reports each one's progress in turn, and its stream ends with
/// the call's last transfer: the interceptor that sends again hands each request a reporter
/// that does not end the stream and ends it itself.
public struct ProgressReporter: Sendable {
    let continuation: AsyncStream<TransferProgress>.Continuation
    /// Whether ``finish()`` ends the stream; not for a request that may be followed by another.
    private var finishes = true

    init(continuation: AsyncStream<TransferProgress>.Continuation) {
        self.continuation = continuation
    }

    /// Reports progress.
    public func report(_ progress: TransferProgress) {
        continuation.yield(progress)
    }

    /// Ends the stream.
    public func finish() {
        if finishes { continuation.finish() }
    }

    /// The same stream, reported to by a request that another may follow: its ``finish()`` does
    /// not end the stream.
    package var forwardingReports: ProgressReporter {
        var reporter = self
        reporter.finishes = false
        return reporter
    }

    /// Ends the stream with `response`'s call: now, or when its streamed body ends. A forwarding
    /// reporter ends nothing, so it leaves the body as it is (the interceptor further out that
    /// holds the stream's own reporter observes it once).
    package func finish(after response: inout Response) {
        guard finishes else { return }
        guard let stream = response.bodyStream else { return finish() }
        response.bodyStream = stream.observingEnd { _ in self.finish() }
    }
}
