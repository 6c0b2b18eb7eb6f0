import Runway
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A dispatcher that answers from a closure instead of the network, and records every request.
///
/// For testing code that sends requests (API managers, interceptors) without a server:
/// ```swift
/// let stub = StubDispatcher { request in
///     Response(status: 200, body: Data(#"{"ok":true}"#.utf8))
/// }
/// let pipeline = Pipeline(interceptors: [], dispatcher: stub)
/// ```
/// Like every dispatcher it validates the request first, reports task cancellation as
/// `.cancelled`, and throws only `RunwayError`: an error of another type from the handler is
/// `.transport`, with the handler's error as `underlying`.
///
/// A request with `streamsResponseBody` set gets its answer's body as a `ResponseBodyStream`
/// (one chunk, or the chunks a handler puts in `Response.bodyStream` itself, or those given to
/// ``init(status:headers:chunks:failure:)``), so code that reads streams can be tested too.
///
/// A request with a `download` gets a 2xx answer's body in the file, as a real dispatcher
/// leaves it (`Response.fileURL` set, `body` empty); any other status keeps its body in memory
/// and writes no file. A destination a download cannot use (a folder, a device) is refused with
/// `.fileIO` before the handler is called.
public final class StubDispatcher: Dispatcher {
    /// Answers one request.
    public typealias Handler = @Sendable (Request) async throws -> Response

    private let handler: Handler
    private let recorded = Locked<[Request]>([])

    /// Creates a stub answering with `handler`.
    public init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    /// Creates a stub that answers every request with the same status and body.
    public convenience init(status: Int = 200, body: Data = Data(), headers: HTTPHeaders = [:]) {
        self.init { _ in Response(status: status, headers: headers, body: body, origin: .stub) }
    }

    /// Creates a stub that answers every request with the same status and a body in `chunks`:
    /// streamed to a request with `streamsResponseBody` set (ending with `failure`, if given, after
    /// the chunks), joined into `Response.body` for any other (which `failure` then fails).
    public convenience init(status: Int = 200, headers: HTTPHeaders = [:], chunks: [Data], failure: RunwayError? = nil) {
        self.init { request in
            if request.streamsResponseBody {
                return Response(
                    status: status, headers: headers, bodyStream: ResponseBodyStream(chunks: chunks, failure: failure), origin: .stub)
            }
            if let failure { throw failure }
            return Response(status: status, headers: headers, body: chunks.reduce(Data(), +), origin: .stub)
        }
    }

    public var name: String { "stub" }

    /// The requests received so far, in arrival order.
    public var requests: [Request] {
        recorded.withLock { $0 }
    }

    public func dispatch(_ request: Request, context: RequestContext) async throws -> Response {
        defer { request.progress?.finish() }
        try request.validate()
        recorded.withLock { $0.append(request) }
        try Self.checkCancellation()
        try request.download?.checkPlaces()
        var response: Response
        do {
            response = try await handler(request)
        } catch is CancellationError {
            // A handler that sleeps or waits throws Swift's error; a dispatcher reports `.cancelled`.
            throw RunwayError(.cancelled, "the calling task was cancelled", underlying: CancellationError())
        } catch let error as RunwayError {
            throw error
        } catch {
            // A dispatcher throws only `RunwayError`: the handler's own error is the transport's.
            throw RunwayError(.transport, "\(error)", stage: .dispatcher(name), underlying: error)
        }
        try Self.checkCancellation()
        if request.streamsResponseBody {
            if response.bodyStream == nil {
                response.bodyStream = ResponseBodyStream(chunks: response.body.isEmpty ? [] : [response.body])
                response.body = Data()
            }
        } else if let download = request.download, (200..<300).contains(response.status), response.fileURL == nil {
            // A download's body goes to the file, whatever its size, as a real dispatcher's does.
            try Self.save(response.body, to: download)
            response.fileURL = download.file
            response.body = Data()
        } else if response.body.count > request.options.maxResponseSize {
            throw RunwayError(.responseTooLarge, "stub response is \(response.body.count) bytes")
        }
        if response.origin == .network { response.origin = .stub }
        return response
    }

    /// Writes a download's body to its file at once (no partial file: nothing is ever resumed).
    private static func save(_ body: Data, to download: DownloadTarget) throws(RunwayError) {
        do {
            try FileManager.default.createDirectory(at: download.file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try body.write(to: download.file, options: .atomic)
        } catch {
            throw RunwayError(.fileIO, "cannot write the stub's download to \(download.file.path)", underlying: error)
        }
        download.removePartialFiles()
    }

    private static func checkCancellation() throws(RunwayError) {
        if Task.isCancelled {
            throw RunwayError(.cancelled, "the calling task was cancelled", underlying: CancellationError())
        }
    }
}
