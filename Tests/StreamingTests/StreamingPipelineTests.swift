import Foundation
import Runway
import RunwayTestServer
import RunwayTesting
import RunwayURLSession
import TestHelpers
import Testing

/// Streamed bodies through the rest of Runway: the URLSession fallback, the stub, validation
/// and retry.
@Suite("Streaming responses: dispatchers and interceptors")
struct StreamingPipelineTests {
    static func streamed(_ url: String) throws -> Request {
        var request = try Request(url)
        request.streamsResponseBody = true
        return request
    }

    @Test("URLSessionDispatcher refuses a streamed request with .configuration, sending nothing")
    func urlSessionRefuses() async throws {
        try await withTestServer { server in
            let request = try Self.streamed(server.url("/bytes/10").absoluteString)
            let error = await runwayError { try await URLSessionDispatcher().dispatch(request, context: RequestContext()) }
            #expect(error?.code == .configuration)
            #expect(error?.field == "streamsResponseBody")
            #expect(server.stats.totalRequests == 0)
        }
    }

    @Test("the stub streams its answer to a streamed request, and buffers it for any other")
    func stubStreams() async throws {
        let stub = StubDispatcher(headers: ["Content-Type": "text/plain"], chunks: [Data("ab".utf8), Data("cd".utf8)])
        let streamed = try await stub.dispatch(try Self.streamed("https://api.test/x"), context: RequestContext())
        #expect(streamed.body.isEmpty)
        var chunks: [Data] = []
        for try await chunk in try #require(streamed.bodyStream) { chunks.append(chunk) }
        #expect(chunks == [Data("ab".utf8), Data("cd".utf8)])
        let buffered = try await stub.dispatch(try Request("https://api.test/x"), context: RequestContext())
        #expect(buffered.bodyStream == nil)
        #expect(buffered.body == Data("abcd".utf8))
        // A handler's buffered body reaches a streamed request as one chunk.
        let plain = StubDispatcher(status: 200, body: Data("whole".utf8))
        let wrapped = try await plain.dispatch(try Self.streamed("https://api.test/y"), context: RequestContext())
        var body = Data()
        for try await chunk in try #require(wrapped.bodyStream) { body.append(chunk) }
        #expect(body == Data("whole".utf8))
    }

    @Test("validation checks a streamed response's status and content type, not its body; a refused one is aborted")
    func validation() async throws {
        let rules = try APIValidation(response: ResponseRule(contentType: "application/json", json: .object(["id": .integer])))
        let validation = try ValidationInterceptor.validation(["export": rules])
        let context = RequestContext(apiName: "export")
        // Not JSON at all, but the body is the reader's: it passes on its head.
        let csv = StubDispatcher(headers: ["Content-Type": "application/json"], chunks: [Data("not json".utf8)])
        let passed = try await Pipeline(interceptors: [validation], dispatcher: csv).send(
            try Self.streamed("https://api.test/e"), context: context)
        var body = Data()
        for try await chunk in try #require(passed.bodyStream) { body.append(chunk) }
        #expect(body == Data("not json".utf8))

        let aborted = Counter()
        let wrongType = StubDispatcher { _ in
            let (stream, producer) = ResponseBodyStream.makeStream(onResume: {}, onCancel: { aborted.increment() })
            _ = producer.yield(Data("a,b".utf8))
            return Response(status: 200, headers: ["Content-Type": "text/csv"], bodyStream: stream)
        }
        let error = await runwayError {
            try await Pipeline(interceptors: [validation], dispatcher: wrongType).send(
                try Self.streamed("https://api.test/e"), context: context)
        }
        #expect(error?.code == .responseInvalid)
        #expect(error?.field == "Content-Type")
        #expect(aborted.value == 1)
    }

    @Test("retry retries a streamed response on its head's status, aborting the unread one")
    func retryOnHeadStatus() async throws {
        let attempts = Counter()
        let aborted = Counter()
        let stub = StubDispatcher { _ in
            let attempt = attempts.increment()
            let (stream, producer) = ResponseBodyStream.makeStream(onResume: {}, onCancel: { aborted.increment() })
            _ = producer.yield(Data("attempt \(attempt)".utf8))
            if attempt > 1 { producer.finish() }
            return Response(status: attempt == 1 ? 503 : 200, bodyStream: stream)
        }
        let retry = RetryInterceptor(policy: try RetryPolicy(maxAttempts: 2, initialBackoff: .zero, maxBackoff: .zero))
        let response = try await Pipeline(interceptors: [retry], dispatcher: stub).send(try Self.streamed("https://api.test/r"))
        #expect(response.status == 200)
        #expect(attempts.value == 2)
        #expect(aborted.value == 1)
        var body = Data()
        for try await chunk in try #require(response.bodyStream) { body.append(chunk) }
        #expect(body == Data("attempt 2".utf8))
    }

    @Test("observingEnd reports the bytes read and a clean end once, without reading")
    func observingEnd() async throws {
        let ends = Counter()
        let stream = ResponseBodyStream(chunks: [Data("abc".utf8), Data("de".utf8)]).observingEnd { end in
            #expect(end.byteCount == 5)
            #expect(end.error == nil)
            ends.increment()
        }
        #expect(ends.value == 0)
        var count = 0
        for try await chunk in stream { count += chunk.count }
        #expect(count == 5)
        #expect(ends.value == 1)
    }
}
