#if OpenAPI  // the whole module: without its package trait, only TraitCheck.swift's error

import Foundation
import RunwayCore
import RunwayHTTPTypes

#if OpenAPI  // the package trait that brings these dependencies (TraitCheck.swift)
import HTTPTypes
import OpenAPIRuntime
#endif

/// A swift-openapi-runtime `ClientTransport` that sends every operation of a generated client
/// through a Runway `Pipeline`: its interceptors (validation, cache, retry,
/// signing, DNS bypass, logging, metrics) and its one dispatcher.
///
/// ```swift
/// let client = Client(serverURL: try Servers.Server1.url(), transport: RunwayTransport(pipeline: pipeline))
/// let item = try await client.getItem(path: .init(itemID: "42")).ok.body.json
/// ```
/// Each operation is one call, whose `RequestContext.apiName` is the operation's API name (the
/// operation ID unless ``Configuration/apiName`` maps it), so the pipeline's per-API policies
/// apply to it; the operation ID itself is in the context under ``OpenAPIOperationID``.
///
/// - **Request bodies.** A body the runtime can read more than once and whose length is known,
///   up to ``Configuration/requestBodyBufferLimit`` (every JSON or form body the generated code
///   makes), is read into `Request.body`: signing, the cache key, retry and merging
///   see its bytes. Any other body is streamed (`Request.bodyStream`), with its
///   `Content-Length` when known and chunked otherwise; a body that can be read once is sent
///   once (retry leaves such a call alone).
/// - **Response bodies.** Buffered into memory (bounded by
///   `RequestOptions.maxResponseSize`, so a cache can store and answer them), unless
///   ``Configuration/responseBody`` says to stream: by default when the request accepts a
///   streaming media type (`application/octet-stream`, `text/event-stream`, JSON Lines, ...),
///   which is what the generated code asks for an operation that returns one. A streamed body
///   is read once, as it arrives, with backpressure.
/// - **Errors.** The transport throws `RunwayError`; the runtime wraps it in a
///   `ClientError`, whose ``OpenAPIRuntime/ClientError/runwayError`` gives it back.
/// - **Cancellation.** Cancelling the task that called the operation (or that reads a streamed
///   body) aborts the transfer; the error's code is `.cancelled`.
public struct RunwayTransport: ClientTransport {
    /// The pipeline every operation is sent through.
    public let pipeline: Pipeline
    /// How operations become calls: API names, service, options, bodies.
    public let configuration: Configuration

    /// Creates a transport that sends through `pipeline`.
    public init(pipeline: Pipeline, configuration: Configuration = Configuration()) {
        self.pipeline = pipeline
        self.configuration = configuration
    }

    /// Sends one operation's request through the pipeline and hands back the response.
    /// - Throws: `RunwayError`: what the pipeline throws, or, before anything is
    ///   sent, `.invalidURL`, `.invalidRequest` or `.invalidHeader` for a request that cannot be
    ///   converted (a path parameter that is `.` or `..` included) or a body that fails while it
    ///   is read into memory or ends before its known length (stage `transport RunwayTransport`);
    ///   `.cancelled` when the calling task is cancelled meanwhile; `.responseInvalid` for a
    ///   response `HTTPResponse` cannot hold.
    public func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        if let path = request.path { try Self.checkDotSegments(path) }
        var runwayRequest: Request
        do {
            runwayRequest = try Request(request, baseURL: baseURL, options: configuration.options)
            if let body { try await Self.attach(body, to: &runwayRequest, bufferLimit: configuration.requestBodyBufferLimit) }
        } catch {
            throw RunwayError.attributing(error, to: Self.stage, fallback: .invalidRequest)
        }
        runwayRequest.streamsResponseBody = configuration.responseBody.streams(operationID: operationID, request: request)
        var context = RequestContext(apiName: configuration.apiName(operationID), serviceID: configuration.serviceID)
        context[OpenAPIOperationID.self] = operationID
        let response = try await pipeline.send(runwayRequest, context: context)
        let head: HTTPResponse
        do {
            head = try HTTPResponse(response)
        } catch {
            response.bodyStream?.cancel()
            throw RunwayError.attributing(error, to: Self.stage)
        }
        return (head, try await Self.body(of: response, method: request.method, pipeline: pipeline))
    }

    /// Reads the stream of a response that has no body to its end, which the transfer reaches with
    /// the head, so the interceptors that watch the stream (metrics, tracing, logging) see the call
    /// complete, not cancelled. A byte that comes anyway is not a body: the transfer is aborted.
    private static func finishWithoutBody(_ stream: ResponseBodyStream) async throws(RunwayError) {
        var chunks = stream.makeAsyncIterator()
        if try await chunks.next() != nil { stream.cancel() }
    }

    /// Refuses a path with a `.` or `..` segment. Operation paths have none of their own: these
    /// come from path parameters, which the generated code puts into the path with their dots as
    /// they are. libcurl removes dot segments before it sends (`..` for `/items/{id}` would call
    /// `/`), and written `%2E%2E` one is still the same segment to a server that normalizes the
    /// path (RFC 3986 §6.2.2.2; nginx does, in front of an app): no spelling reaches every server
    /// as a value, so the call fails before anything is sent.
    static func checkDotSegments(_ path: String) throws(RunwayError) {
        let pathPart = path[..<(path.firstIndex(of: "?") ?? path.endIndex)]
        guard pathPart.contains(".") else { return }
        for segment in pathPart.split(separator: "/", omittingEmptySubsequences: false) where segment == "." || segment == ".." {
            throw RunwayError(
                .invalidURL,
                "the path \(pathPart) has a path parameter that is \"\(segment)\", a dot segment: a server would read it (also as "
                    + "\(segment == "." ? "%2E" : "%2E%2E")) as a step in the path and answer another resource; nothing was sent",
                stage: stage, neverSent: true)
        }
    }

    /// Where conversion errors are attributed.
    static let stage = RunwayError.Stage(kind: "transport", name: "RunwayTransport")

    /// Puts `body` on `request`: in memory when it can be read again and its known length is
    /// within `bufferLimit`, streamed otherwise.
    static func attach(_ body: HTTPBody, to request: inout Request, bufferLimit: Int) async throws(RunwayError) {
        let length: Int?
        switch body.length {
        case .known(let count): length = Int(count)
        case .unknown: length = nil
        }
        switch body.iterationBehavior {
        case .multiple:
            if let length, length <= bufferLimit {
                let data: Data
                do {
                    data = try await Data(collecting: body, upTo: length)
                } catch {
                    // The caller's cancellation, seen by the body's sequence, is not a bad body.
                    if error is CancellationError || Task.isCancelled { throw cancelledWhileReading(error) }
                    throw RunwayError(
                        .invalidRequest, "the request body could not be read (\(length) bytes announced): \(error)", underlying: error)
                }
                // The runtime sends the announced length as Content-Length: a body that ends
                // short is the body's fault, said here, not a header the caller never set.
                guard data.count == length else {
                    if Task.isCancelled { throw cancelledWhileReading(nil) }
                    throw RunwayError(.invalidRequest, "the request body ended after \(data.count) of the \(length) bytes it announced")
                }
                request.body = data
            } else {
                request.bodyStream = .sequence(length: length) { RequestBodyChunks(body: body) }
            }
        case .single:
            request.bodyStream = .sequence(RequestBodyChunks(body: body), length: length)
        }
    }

    /// The error of a call whose caller was cancelled while its request body was read into memory.
    private static func cancelledWhileReading(_ error: (any Error)?) -> RunwayError {
        RunwayError(.cancelled, "the calling task was cancelled while the request body was read", underlying: error)
    }

    /// The response's body as the runtime takes it: `nil` for `HEAD`, empty for a 1xx, 204 or 304,
    /// the stream for a streamed response (its length from `Content-Length` when no
    /// `Transfer-Encoding` frames it, read once), the bytes otherwise.
    ///
    /// A streamed body keeps `pipeline` (its dispatcher) alive until it is read or dropped: a
    /// client made for one call and released once the call returns must not end the transfer
    /// of a body its caller is still reading.
    /// - Throws: `RunwayError` when the transfer of a response without a body fails before its end.
    static func body(of response: Response, method: HTTPRequest.Method, pipeline: Pipeline) async throws(RunwayError) -> HTTPBody? {
        let status = response.status
        let hasNoBody = method == .head || status < 200 || status == 204 || status == 304
        if hasNoBody, let stream = response.bodyStream {
            // No body, whatever length the head announces (a 304's is the representation's).
            try await finishWithoutBody(stream)
        }
        if method == .head { return nil }
        if hasNoBody, response.bodyStream != nil { return HTTPBody(ArraySlice<UInt8>()) }
        guard let stream = response.bodyStream else {
            return HTTPBody(ArraySlice(response.body))
        }
        // A streamed body is handed over as sent (never inflated), so Content-Length is its length,
        // unless Transfer-Encoding frames the body: it overrides Content-Length (RFC 9112 §6.3),
        // and libcurl reads the chunks whatever length the head announces.
        let length =
            response.headers["Transfer-Encoding"] != nil
            ? nil : response.headers["Content-Length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        let chunks = ResponseBodyChunks(stream: stream, pipeline: pipeline)
        return HTTPBody(chunks, length: length.map { .known($0) } ?? .unknown, iterationBehavior: .single)
    }
}

/// The operation ID of a call sent by ``RunwayTransport``, in its `RequestContext`: for an
/// interceptor that needs the operation itself rather than its API name.
///
/// ```swift
/// let operation = context[OpenAPIOperationID.self]  // "getItem"
/// ```
public enum OpenAPIOperationID: ContextKey {
    /// The operation ID, as in the OpenAPI document.
    public typealias Value = String
}

/// A request `HTTPBody`'s chunks as `Data`, for a `RequestBodyStream`.
struct RequestBodyChunks: AsyncSequence, Sendable {
    typealias Element = Data

    let body: HTTPBody

    func makeAsyncIterator() -> Iterator {
        Iterator(base: body.makeAsyncIterator())
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: HTTPBody.Iterator

        mutating func next() async throws -> Data? {
            guard let chunk = try await base.next() else { return nil }
            return Data(chunk)
        }
    }
}

/// A streamed response body's chunks as `HTTPBody` byte chunks.
struct ResponseBodyChunks: AsyncSequence, Sendable {
    typealias Element = HTTPBody.ByteChunk
    typealias Failure = RunwayError

    let stream: ResponseBodyStream
    /// Held so that the dispatcher outlives the transfer (see `RunwayTransport.body(of:method:pipeline:)`).
    let pipeline: Pipeline

    func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator(), pipeline: pipeline)
    }

    struct Iterator: AsyncIteratorProtocol {
        typealias Element = HTTPBody.ByteChunk
        typealias Failure = RunwayError

        var base: ResponseBodyStream.Iterator
        /// Held while the body is read.
        let pipeline: Pipeline

        mutating func next() async throws(RunwayError) -> HTTPBody.ByteChunk? {
            guard let chunk = try await base.next() else { return nil }
            return ArraySlice(chunk)
        }
    }
}

#endif
