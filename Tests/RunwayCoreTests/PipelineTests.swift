import Foundation
import Runway
import RunwayTesting
import Testing

@Suite("Pipeline")
struct PipelineTests {
    let url = URL(string: "https://api.example.test/items")!

    @Test("requests go first-to-last, responses come back last-to-first")
    func order() async throws {
        let log = RecordingInterceptor.Log()
        let pipeline = Pipeline(dispatcher: StubDispatcher(status: 200)) {
            RecordingInterceptor(name: "a", log: log)
            RecordingInterceptor(name: "b", log: log)
            RecordingInterceptor(name: "c", log: log)
        }
        _ = try await pipeline.send(Request(url: url))
        #expect(log.events.map(\.description) == ["a>", "b>", "c>", "<c", "<b", "<a"])
        #expect(pipeline.interceptors.map(\.name) == ["a", "b", "c"])
    }

    @Test("the builder block accepts throwing factories and rethrows their configuration error")
    func throwingBuilder() throws {
        func factory(_ name: String) throws -> RecordingInterceptor {
            guard !name.isEmpty else { throw RunwayError(.configuration, "empty name") }
            return RecordingInterceptor(name: name)
        }
        let pipeline = try Pipeline(dispatcher: StubDispatcher(status: 200)) {
            try factory("a")
            RecordingInterceptor(name: "b")
        }
        #expect(pipeline.interceptors.map(\.name) == ["a", "b"])
        let error = #expect(throws: RunwayError.self) {
            try Pipeline(dispatcher: StubDispatcher(status: 200)) {
                RecordingInterceptor(name: "a")
                try factory("")
            }
        }
        #expect(error?.code == .configuration)
    }

    @Test("an interceptor can change the request for those after it")
    func transform() async throws {
        let stub = StubDispatcher(status: 204)
        let pipeline = Pipeline(dispatcher: stub) {
            HeaderSetter(name: "X-First", value: "1")
            HeaderSetter(name: "X-Second", value: "2")
        }
        _ = try await pipeline.send(Request(url: url))
        let sent = try #require(stub.requests.first)
        #expect(sent.headers["x-first"] == "1")
        #expect(sent.headers["X-SECOND"] == "2")
    }

    @Test("a short-circuit answers without reaching the dispatcher or later interceptors")
    func shortCircuit() async throws {
        let log = RecordingInterceptor.Log()
        let stub = StubDispatcher(status: 500)
        let pipeline = Pipeline(dispatcher: stub) {
            RecordingInterceptor(name: "outer", log: log)
            ShortCircuit()
            RecordingInterceptor(name: "inner", log: log)
        }
        let response = try await pipeline.send(Request(url: url))
        #expect(response.status == 200)
        #expect(response.origin == .memoryCache)
        #expect(stub.requests.isEmpty)
        #expect(log.events.map(\.description) == ["outer>", "<outer"])
    }

    @Test("the progress stream of a call no transfer ran for ends with the call: answered or refused by an interceptor")
    func progressEndsWithoutATransfer() async throws {
        let answered = Pipeline(dispatcher: StubDispatcher(status: 500)) { ShortCircuit() }
        let refused = Pipeline(dispatcher: StubDispatcher(status: 500)) { Failing() }
        for pipeline in [answered, refused] {
            var request = Request(url: url)
            let (progress, reporter) = TransferProgress.makeStream()
            request.progress = reporter
            _ = try? await pipeline.send(request)
            let draining = Task {
                for await _ in progress {}
                return !Task.isCancelled
            }
            // A stream left open keeps the task waiting, until it is cancelled after 20 s.
            let timeout = Task {
                try await Task.sleep(for: .seconds(20))
                draining.cancel()
            }
            #expect(await draining.value, "the progress stream stays open")
            timeout.cancel()
        }
    }

    @Test("an interceptor's own error is attributed to it, with the cause kept")
    func interceptorErrorAttribution() async throws {
        let pipeline = Pipeline(dispatcher: StubDispatcher(status: 200)) {
            RecordingInterceptor(name: "outer")
            Failing()
            RecordingInterceptor(name: "inner")
        }
        let error = await #expect(throws: RunwayError.self) { try await pipeline.send(Request(url: url)) }
        #expect(error?.code == .interceptorFailed)
        #expect(error?.stage == .interceptor("Failing"))
        #expect(error?.underlying is Boom)
    }

    @Test("a dispatcher error keeps the dispatcher as its stage through every interceptor")
    func dispatcherErrorAttribution() async throws {
        let log = RecordingInterceptor.Log()
        let stub = StubDispatcher { _ in throw RunwayError(.connectionLost, "reset") }
        let pipeline = Pipeline(dispatcher: stub) {
            RecordingInterceptor(name: "a", log: log)
            RecordingInterceptor(name: "b", log: log)
        }
        let error = await #expect(throws: RunwayError.self) { try await pipeline.send(Request(url: url)) }
        #expect(error?.code == .connectionLost)
        #expect(error?.stage == .dispatcher("stub"))
        #expect(log.events.map(\.description) == ["a>", "b>", "!b", "!a"])
    }

    @Test("a foreign error thrown by the dispatcher becomes a transport error")
    func foreignDispatcherError() async throws {
        let pipeline = Pipeline(interceptors: [], dispatcher: StubDispatcher { _ in throw Boom() })
        let error = await #expect(throws: RunwayError.self) { try await pipeline.send(Request(url: url)) }
        #expect(error?.code == .transport)
        #expect(error?.stage == .dispatcher("stub"))
    }

    @Test("cancelling the calling task passes through the chain as .cancelled")
    func cancellation() async throws {
        let started = AsyncStream.makeStream(of: Void.self)
        let stub = StubDispatcher { _ in
            started.continuation.yield()
            try await Task.sleep(for: .seconds(30))
            return Response(status: 200)
        }
        let log = RecordingInterceptor.Log()
        let pipeline = Pipeline(dispatcher: stub) { RecordingInterceptor(name: "a", log: log) }
        let task = Task { try await pipeline.send(Request(url: url)) }
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        task.cancel()
        let error = await #expect(throws: RunwayError.self) { try await task.value }
        #expect(error?.code == .cancelled)
        #expect(log.events.map(\.description) == ["a>", "!a"])
    }

    @Test("a retrying interceptor may call next more than once")
    func nextTwice() async throws {
        let stub = StubDispatcher(status: 503)
        let pipeline = Pipeline(dispatcher: stub) { Twice() }
        let response = try await pipeline.send(Request(url: url))
        #expect(response.status == 503)
        #expect(stub.requests.count == 2)
    }

    @Test("interceptors share typed values through the context")
    func contextValues() async throws {
        let stub = StubDispatcher { _ in Response(status: 200) }
        let pipeline = Pipeline(dispatcher: stub) {
            ContextWriter()
            ContextReader()
        }
        let response = try await pipeline.send(Request(url: url), context: RequestContext(apiName: "items.list", serviceID: "shop"))
        #expect(response.headers["X-Seen"] == "items.list/shop/42")
    }

    @Test("call IDs are unique")
    func callIDs() {
        let ids = (0..<1000).map { _ in RequestContext().callID }
        #expect(Set(ids).count == 1000)
    }

    @Test("the result builder keeps conditional interceptors in order")
    func builderConditionals() async throws {
        let log = RecordingInterceptor.Log()
        let verbose = Bool.random()
        let pipeline = Pipeline(dispatcher: StubDispatcher(status: 200)) {
            RecordingInterceptor(name: "first", log: log)
            if verbose {
                RecordingInterceptor(name: "maybe", log: log)
            }
            for name in ["x", "y"] {
                RecordingInterceptor(name: name, log: log)
            }
        }
        #expect(pipeline.interceptors.map(\.name) == ["first"] + (verbose ? ["maybe"] : []) + ["x", "y"])
    }
}

struct Boom: Error {}

struct HeaderSetter: Interceptor {
    let name: String
    let value: String

    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        var request = request
        request.headers[name] = value
        return try await next(request, context)
    }
}

struct ShortCircuit: Interceptor {
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        Response(status: 200, body: Data("cached".utf8), origin: .memoryCache)
    }
}

struct Failing: Interceptor {
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        throw Boom()
    }
}

struct Twice: Interceptor {
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        _ = try await next(request, context)
        var context = context
        context.attempt += 1
        return try await next(request, context)
    }
}

enum MagicNumber: ContextKey {
    typealias Value = Int
}

struct ContextWriter: Interceptor {
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        var context = context
        context[MagicNumber.self] = 42
        return try await next(request, context)
    }
}

struct ContextReader: Interceptor {
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        var response = try await next(request, context)
        response.headers["X-Seen"] = "\(context.apiName ?? "")/\(context.serviceID ?? "")/\(context[MagicNumber.self] ?? 0)"
        return response
    }
}
