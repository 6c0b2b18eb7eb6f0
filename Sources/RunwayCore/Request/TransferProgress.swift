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
    /// The dispatcher finishes the stream when the transfer ends, however it ends.
    public static func makeStream(bufferingNewest limit: Int = 16) -> (AsyncStream<TransferProgress>, ProgressReporter) {
        let (stream, continuation) = AsyncStream.makeStream(of: TransferProgress.self, bufferingPolicy: .bufferingNewest(limit))
        return (stream, ProgressReporter(continuation: continuation))
    }
}

/// The sending end of a progress stream; dispatchers call it.
public struct ProgressReporter: Sendable {
    let continuation: AsyncStream<TransferProgress>.Continuation

    /// Reports progress.
    public func report(_ progress: TransferProgress) {
        continuation.yield(progress)
    }

    /// Ends the stream.
    public func finish() {
        continuation.finish()
    }
}
