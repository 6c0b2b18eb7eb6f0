import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request body sent as it is read, from a file or an `AsyncSequence` of chunks, never held
/// whole in memory: set it as ``Request/bodyStream`` instead of ``Request/body``.
///
/// ```swift
/// var upload = try Request(method: .put, "https://example.com/videos/42")
/// upload.bodyStream = try .file(videoURL)                     // Content-Length from the file
/// upload.headers["Content-Type"] = "video/mp4"
///
/// var export = try Request(method: .post, "https://example.com/import")
/// export.bodyStream = .sequence {                              // length unknown: chunked
///     AsyncStream<Data> { continuation in
///         for row in rows { continuation.yield(Data(row.csvLine.utf8)) }
///         continuation.finish()
///     }
/// }
/// ```
/// - **Length.** A known ``length`` is sent as `Content-Length`; without one, HTTP/1.1 sends the
///   body chunked (`Transfer-Encoding: chunked`) and HTTP/2 in frames until its end. A body that
///   ends before its declared length, or runs past it, fails the call with `.invalidRequest`
///   (a file that shrank or grew while it was sent: `.fileIO`), never a short or long body sent as
///   complete.
/// - **Backpressure.** A sequence is read only as fast as the connection takes its bytes: the
///   dispatcher keeps at most about 256 KiB of it buffered.
/// - **Sending again.** A file, or a sequence made by a closure
///   (``sequence(length:sha256:_:)``), can be sent again from its start: by retry, after a
///   token refresh, or on a 307/308 redirect. A sequence passed as a value can be sent once:
///   retry leaves such a request alone, and a second send fails with `.configuration`.
/// - **Failures.** An error thrown by the sequence ends the call with that error (a
///   `RunwayError` as is; anything else as `.invalidRequest` with it as ``RunwayError/underlying``),
///   and the transfer is aborted, so the server never sees a complete body. Cancelling the call
///   stops reading the sequence.
/// - **Signing.** A signature covers the body's SHA-256: declare it (``sha256``) and the signing
///   interceptor signs the request; without it, signing refuses the request with `.configuration`
///   rather than read the body twice.
///
/// The libcurl dispatcher streams these bodies; `URLSessionDispatcher` refuses them
/// (`.configuration`). Interceptors see the stream, not its bytes: compression leaves it as is,
/// caches never store or answer such a call, and logging shows its length.
public struct RequestBodyStream: Sendable {
    /// The body's length in bytes, if known (sent as `Content-Length`); `nil` sends it chunked.
    public let length: Int?
    /// The SHA-256 of the whole body (32 bytes), if the app declares it: what request signing
    /// signs instead of reading the body. Not checked against the bytes sent; the server's
    /// verifier, which hashes what it receives, rejects a wrong one.
    public var sha256: Data?
    /// Whether the body can be sent again from its start (a file, or a sequence made by a
    /// closure); retry leaves a request alone when it cannot.
    public var isReplayable: Bool { source.isReplayable }

    private let source: Source

    private enum Source: Sendable {
        case file(URL)
        /// Makes the sequence and runs the loop that feeds it to a channel.
        case sequence(pump: @Sendable (UploadChannel) async -> Void, once: Locked<Bool>?)

        var isReplayable: Bool {
            if case .sequence(_, let once) = self { return once == nil }
            return true
        }
    }

    private init(source: Source, length: Int?, sha256: Data?) {
        self.source = source
        self.length = length
        self.sha256 = sha256
    }

    /// The contents of a file, read as they are sent; its length is the file's size now. A
    /// symbolic link is followed to the file it points to.
    /// - Throws: `.fileIO` when the file does not exist, cannot be read, or is not a regular file.
    public static func file(_ url: URL, sha256: Data? = nil) throws(RunwayError) -> RequestBodyStream {
        let attributes: (isRegularFile: Bool, size: Int)
        do {
            attributes = try FileReader.attributes(ofPath: url.path)
        } catch {
            throw RunwayError(.fileIO, "cannot read \(url.path): \(error.message)", underlying: error)
        }
        guard attributes.isRegularFile else {
            throw RunwayError(.fileIO, "\(url.path) is not a regular file: it cannot be sent as a request body")
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw RunwayError(.fileIO, "\(url.path) is not readable")
        }
        let size = attributes.size
        return RequestBodyStream(source: .file(url), length: size, sha256: sha256)
    }

    /// The chunks of `sequence`, sent once: a second send of the request fails with
    /// `.configuration` (retry leaves such a request alone). For a body that may be sent again,
    /// pass a closure that makes the sequence.
    /// - Parameters:
    ///   - sequence: The chunks of the body, in order.
    ///   - length: The total bytes the sequence yields, if known (sent as `Content-Length`).
    ///   - sha256: The body's SHA-256, for signing.
    public static func sequence<S: AsyncSequence & Sendable>(
        _ sequence: S, length: Int? = nil, sha256: Data? = nil
    ) -> RequestBodyStream where S.Element == Data {
        RequestBodyStream(
            source: .sequence(pump: { channel in await channel.pump(sequence) }, once: Locked(false)), length: length, sha256: sha256)
    }

    /// A body made anew by `makeSequence` for each send, so it can be sent again from its start
    /// (retry, a token refresh, a 307/308 redirect).
    /// - Parameters:
    ///   - length: The total bytes each sequence yields, if known (sent as `Content-Length`).
    ///   - sha256: The body's SHA-256, for signing.
    ///   - makeSequence: Makes the sequence; called once per send.
    public static func sequence<S: AsyncSequence & Sendable>(
        length: Int? = nil, sha256: Data? = nil, _ makeSequence: @escaping @Sendable () -> S
    ) -> RequestBodyStream where S.Element == Data {
        RequestBodyStream(
            source: .sequence(pump: { channel in await channel.pump(makeSequence()) }, once: nil), length: length, sha256: sha256)
    }

    /// Reads the whole body into memory, failing past `limit` bytes: for stubs and tests, or a
    /// dispatcher that cannot stream. Counts as a send for a body that can be sent once.
    /// Cancelling the task stops reading the sequence and throws `.cancelled`.
    public func collect(upTo limit: Int) async throws(RunwayError) -> Data {
        let reader = try makeReader(highWaterMark: Swift.min(limit, 1 << 20) + 1)
        defer { reader.close() }
        var data = Data()
        while true {
            switch reader.read(upTo: 64 << 10) {
            case .data(let chunk):
                guard data.count + chunk.count <= limit else {
                    throw RunwayError(.requestTooLarge, "the request body is over the \(limit)-byte limit")
                }
                data.append(chunk)
            case .end:
                return data
            case .failed(let error):
                throw error
            case .wait:
                await reader.waitUntilReadable()
            }
        }
    }

    /// Starts one send of the body: opens the file, or starts the task that reads the sequence.
    /// - Throws: `.fileIO` when the file cannot be opened, `.configuration` when a body that can be
    ///   sent once was sent already.
    package func makeReader(highWaterMark: Int = 256 << 10) throws(RunwayError) -> RequestBodyReader {
        switch source {
        case .file(let url):
            let handle: FileReader
            do {
                handle = try FileReader(path: url.path)
            } catch {
                throw RunwayError(.fileIO, "cannot open \(url.path) to send it: \(error.message)", underlying: error)
            }
            return RequestBodyReader(file: handle, path: url.path, length: length ?? 0)
        case .sequence(let pump, let once):
            if let once {
                let used = once.withLock { used in
                    defer { used = true }
                    return used
                }
                if used {
                    throw RunwayError(
                        .configuration,
                        "this request body stream was sent already and a sequence passed as a value is read once (make it with "
                            + "RequestBodyStream.sequence(length:sha256:_:) to send it again)",
                        field: "bodyStream")
                }
            }
            let length = length
            let start: @Sendable () -> UploadChannel = {
                let channel = UploadChannel(length: length, highWaterMark: highWaterMark)
                channel.start(pump)
                return channel
            }
            // A sequence made by a closure is made anew when the send starts over.
            return RequestBodyReader(channel: start(), restart: once == nil ? start : nil)
        }
    }
}
