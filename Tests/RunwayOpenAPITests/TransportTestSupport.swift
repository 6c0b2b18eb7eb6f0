import Foundation
import OpenAPIRuntime
import Runway
import RunwayCurl
import RunwayOpenAPI
import RunwaySync
import RunwayTestServer
import Testing

/// The generated client for `server`, sending through `interceptors` and a libcurl dispatcher.
func makeClient(
    _ server: TestServer, interceptors: [any Interceptor] = [], configuration: RunwayTransport.Configuration = .init()
) -> Client {
    let pipeline = Pipeline(interceptors: interceptors, dispatcher: CurlDispatcher())
    return Client(serverURL: server.baseURL, transport: RunwayTransport(pipeline: pipeline, configuration: configuration))
}

/// Records the API name and operation ID of every call that passes it.
struct ContextRecorder: Interceptor {
    struct Seen: Equatable {
        var apiName: String?
        var operationID: String?
        var serviceID: ServiceID?
    }

    let seen = SeenCalls()

    final class SeenCalls: Sendable {
        private let calls = Locked<[Seen]>([])
        func append(_ call: Seen) { calls.withLock { $0.append(call) } }
        var all: [Seen] { calls.withLock { $0 } }
    }

    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        seen.append(Seen(apiName: context.apiName, operationID: context[OpenAPIOperationID.self], serviceID: context.serviceID))
        return try await next(request, context)
    }
}

/// Records how each request that passes it carries its body: in memory or streamed.
struct BodyRecorder: Interceptor {
    enum Kind: Equatable {
        case none
        case data(Int)
        case stream(length: Int?, replayable: Bool)
    }

    let seen = Locked<[Kind]>([])

    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        let kind: Kind =
            if let stream = request.bodyStream {
                .stream(length: stream.length, replayable: stream.isReplayable)
            } else if let body = request.body {
                .data(body.count)
            } else {
                .none
            }
        seen.withLock { $0.append(kind) }
        return try await next(request, context)
    }
}

/// The `ClientError` that `body` throws; records an issue if it returns or throws another type.
func clientError<T>(_ body: () async throws -> T, sourceLocation: SourceLocation = #_sourceLocation) async -> ClientError? {
    do {
        let value = try await body()
        Issue.record("expected a ClientError, got \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as ClientError {
        return error
    } catch {
        Issue.record("expected a ClientError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// An `AsyncSequence` of `chunks` that can be iterated once, as a body from a file or a socket.
func onceBody(_ chunks: [Data], length: HTTPBody.Length) -> HTTPBody {
    let (stream, continuation) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
    for chunk in chunks { continuation.yield(ArraySlice(chunk)) }
    continuation.finish()
    return HTTPBody(stream, length: length)
}

/// Records how the streamed response body of every call that passes it ended, as metrics,
/// tracing and logging learn it (`ResponseBodyStream.observingEnd`).
struct StreamEndRecorder: Interceptor {
    enum End: Equatable {
        case complete(bytes: Int)
        case failed(RunwayError.Code)
    }

    let ends = Locked<[End]>([])

    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        var response = try await next(request, context)
        let ends = self.ends
        response.bodyStream = response.bodyStream?.observingEnd { end in
            ends.withLock { $0.append(end.error.map { .failed($0.code) } ?? .complete(bytes: end.byteCount)) }
        }
        return response
    }
}

/// A request body that can be read more than once: `firstChunk` bytes, then a wait that only
/// the reading task's cancellation ends (it throws `CancellationError`), told to `waiting`.
struct StallingBody: AsyncSequence, Sendable {
    typealias Element = HTTPBody.ByteChunk

    let firstChunk: Int
    let waiting: AsyncStream<Void>.Continuation

    func makeAsyncIterator() -> Iterator { Iterator(firstChunk: firstChunk, waiting: waiting) }

    struct Iterator: AsyncIteratorProtocol {
        let firstChunk: Int
        let waiting: AsyncStream<Void>.Continuation
        var sentFirst = false

        mutating func next() async throws -> HTTPBody.ByteChunk? {
            if !sentFirst {
                sentFirst = true
                return ArraySlice(repeating: UInt8(ascii: "b"), count: firstChunk)
            }
            waiting.yield()
            try await Task.sleep(for: .seconds(600))  // ended by cancellation, never by time
            return nil
        }
    }
}

/// A request body that yields `chunks`, each time it is read.
struct ChunkList: AsyncSequence, Sendable {
    typealias Element = HTTPBody.ByteChunk

    let chunks: [HTTPBody.ByteChunk]

    func makeAsyncIterator() -> Iterator { Iterator(rest: chunks[...]) }

    struct Iterator: AsyncIteratorProtocol {
        var rest: ArraySlice<HTTPBody.ByteChunk>

        mutating func next() async -> HTTPBody.ByteChunk? { rest.popFirst() }
    }
}
