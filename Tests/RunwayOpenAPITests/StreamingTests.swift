import Crypto
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Runway
import RunwayCurl
import RunwayTestServer
import RunwayTesting
import Testing

@testable import RunwayOpenAPI

/// Streamed bodies both ways through `RunwayTransport`, which response bodies stream, and
/// cancellation by the caller's task.
@Suite struct StreamingTests {
    static func hex(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    @Test func aBodyOfUnknownLengthIsSentChunkedAsItIsRead() async throws {
        try await withTestServer(routes: ItemRoutes().routes) { server in
            let chunks = (0..<40).map { DeterministicBytes.data(count: 10_000, offset: $0 * 10_000) }
            let receipt = try await makeClient(server).uploadBlob(path: .init(name: "a"), body: .binary(onceBody(chunks, length: .unknown)))
                .ok.body.json
            #expect(receipt == .init(size: 400_000, sha256: Self.hex(DeterministicBytes.data(count: 400_000)), chunked: true))
        }
    }

    @Test func aBodyReadOnceWithALengthIsSentWithContentLength() async throws {
        try await withTestServer(routes: ItemRoutes().routes) { server in
            let chunks = (0..<4).map { DeterministicBytes.data(count: 50_000, offset: $0 * 50_000) }
            let receipt = try await makeClient(server)
                .uploadBlob(path: .init(name: "b"), body: .binary(onceBody(chunks, length: .known(200_000)))).ok.body.json
            #expect(receipt == .init(size: 200_000, sha256: Self.hex(DeterministicBytes.data(count: 200_000)), chunked: false))
        }
    }

    @Test func aBodyOverTheBufferLimitIsStreamedAndSentAgainByRetry() async throws {
        let routes = ItemRoutes()
        try await withTestServer(routes: routes.routes) { server in
            let data = DeterministicBytes.data(count: 300_000)
            // Read more than once (.multiple), over the 64 KiB limit set here: streamed with its
            // length, and made anew for the retry after the first upload's 503.
            let retry = try RetryInterceptor.retry(maxAttempts: 2, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(10))
            let bodies = BodyRecorder()
            let client = makeClient(server, interceptors: [retry, bodies], configuration: .init(requestBodyBufferLimit: 64 << 10))
            let receipt = try await client.uploadBlob(path: .init(name: "flaky"), body: .binary(HTTPBody(data))).ok.body.json
            #expect(receipt == .init(size: 300_000, sha256: Self.hex(data), chunked: false))
            #expect(routes.flakyUploads.value == 2)
            #expect(bodies.seen.withLock { $0 } == Array(repeating: .stream(length: 300_000, replayable: true), count: 2))

            // Under the limit, the same body is read into memory.
            _ = try await client.uploadBlob(path: .init(name: "small"), body: .binary(HTTPBody(data.prefix(1000)))).ok
            #expect(bodies.seen.withLock { $0.last } == .data(1000))
        }
    }

    @Test func aBodyReadOnceIsSentOnceRetryOrNot() async throws {
        let routes = ItemRoutes()
        try await withTestServer(routes: routes.routes) { server in
            let retry = try RetryInterceptor.retry(maxAttempts: 3, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(10))
            let bodies = BodyRecorder()
            let client = makeClient(server, interceptors: [retry, bodies])
            let body = onceBody([DeterministicBytes.data(count: 1000)], length: .known(1000))
            let output = try await client.uploadBlob(path: .init(name: "flaky"), body: .binary(body))
            guard case .undocumented(statusCode: 503, _) = output else {
                Issue.record("expected the first upload's 503, got \(output)")
                return
            }
            #expect(routes.flakyUploads.value == 1)
            #expect(bodies.seen.withLock { $0 } == [.stream(length: 1000, replayable: false)])
        }
    }

    @Test func aBufferedBodyOverTheRequestLimitIsRefusedBeforeItIsSent() async throws {
        // Under the buffer limit: read into memory, so `maxRequestBodySize` applies before sending.
        var options = RequestOptions()
        options.maxRequestBodySize = 1000
        try await withTestServer(routes: ItemRoutes().routes) { server in
            let client = makeClient(server, configuration: .init(options: options))
            let error = try #require(
                await clientError { try await client.uploadBlob(path: .init(name: "d"), body: .binary(HTTPBody(Data(count: 2000)))) })
            #expect(error.runwayError?.code == .requestTooLarge)
            #expect(server.stats.requests(path: "/blobs/d") == 0)
        }
    }

    @Test func cancellingTheCallerWhileTheRequestBodyIsReadIsCancelledNotABadBody() async throws {
        try await withTestServer(routes: ItemRoutes().routes) { server in
            // Under the buffer limit, read into memory before anything is sent; its sequence
            // waits after its first chunk until the caller is cancelled, and throws then.
            let waiting = AsyncStream<Void>.makeStream()
            let body = HTTPBody(
                StallingBody(firstChunk: 500, waiting: waiting.continuation), length: .known(1000), iterationBehavior: .multiple)
            let task = Task { try await makeClient(server).uploadBlob(path: .init(name: "c"), body: .binary(body)) }
            var waits = waiting.stream.makeAsyncIterator()
            _ = await waits.next()
            task.cancel()
            let error = try #require(await clientError { try await task.value })
            #expect(error.runwayError?.code == .cancelled, "\(error)")
            #expect(server.stats.requests(path: "/blobs/c") == 0)
        }
    }

    @Test func aBufferedBodyShorterThanItsLengthIsABadBodyNotABadHeader() async throws {
        try await withTestServer(routes: ItemRoutes().routes) { server in
            // Read more than once, 1000 bytes announced (the generated code sends that as
            // Content-Length, which the caller never set), 500 yielded.
            let body = HTTPBody(
                ChunkList(chunks: [ArraySlice(DeterministicBytes.data(count: 500))]), length: .known(1000), iterationBehavior: .multiple)
            let error = try #require(
                await clientError { try await makeClient(server).uploadBlob(path: .init(name: "s"), body: .binary(body)) })
            #expect(error.runwayError?.code == .invalidRequest, "\(error)")
            #expect(error.runwayError?.stage == RunwayTransport.stage)
            #expect(error.runwayError?.message.contains("500 of the 1000 bytes") == true, "\(error)")
            #expect(server.stats.requests(path: "/blobs/s") == 0)
        }
    }

    @Test func anOctetStreamResponseIsStreamedByDefault() async throws {
        try await withTestServer { server in
            let output = try await makeClient(server).downloadBytes(path: .init(count: 3_000_000))
            let body = try output.ok.body.binary
            #expect(body.iterationBehavior == .single)
            #expect(body.length == .known(3_000_000))
            var received = Data()
            var chunks = 0
            for try await chunk in body {
                received.append(contentsOf: chunk)
                chunks += 1
            }
            #expect(received == DeterministicBytes.data(count: 3_000_000))
            #expect(chunks > 1)
        }
    }

    @Test func aStreamed204Or304HasAnEmptyBodyWhateverLengthItAnnounces() async throws {
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        for status in [204, 304] {
            var response = Response(status: status, headers: HTTPHeaders([("Content-Length", "5")]))
            response.bodyStream = ResponseBodyStream(chunks: [])
            let body = try await RunwayTransport.body(of: response, method: .get, pipeline: pipeline)
            #expect(body?.length == HTTPBody.Length.known(0), "\(status)")
            #expect(try await Data(collecting: try #require(body), upTo: 4).isEmpty, "\(status)")
        }
    }

    @Test func aStreamedResponseWithoutABodyEndsCompleteForTheChainNotCancelled() async throws {
        // A 304 that announces its representation's length, as a server answering a conditional GET does.
        let notModified = try RawResponder("HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nContent-Length: 5\r\n\r\n")
        defer { notModified.stop() }
        try await withTestServer(routes: ItemRoutes().routes) { server in
            let ends = StreamEndRecorder()
            let pipeline = Pipeline(interceptors: [ends], dispatcher: CurlDispatcher())
            let transport = RunwayTransport(pipeline: pipeline, configuration: .init(responseBody: .streamed))
            // A 204 through the generated client; a HEAD and a 304 through the transport itself.
            _ = try await Client(serverURL: server.baseURL, transport: transport).deleteItem(path: .init(itemID: "1")).noContent
            let head = try await transport.send(
                HTTPRequest(method: .head, scheme: nil, authority: nil, path: "/echo"), body: nil, baseURL: server.baseURL,
                operationID: "headEcho")
            #expect(head.0.status == .ok && head.1 == nil)
            let conditional = try await transport.send(
                HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/file"), body: nil, baseURL: notModified.url(),
                operationID: "getFile")
            #expect(conditional.0.status.code == 304)
            #expect(try await Data(collecting: try #require(conditional.1), upTo: 10).isEmpty)
            // Metrics, tracing and logging learn each call's end so: complete, not cancelled.
            #expect(ends.ends.withLock { $0 } == Array(repeating: .complete(bytes: 0), count: 3))
        }
    }

    /// Both fields, which a server must not send. libcurl's dispatcher refuses such a response
    /// (`.responseInvalid`: what the length frames beyond the chunks could pass for the next
    /// response); from a dispatcher that hands one on, the chunks are the body (RFC 9112 §6.3), so
    /// the transport gives it no known length.
    @Test func aStreamedChunkedBodyHasNoLengthWhateverContentLengthSays() async throws {
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/export")
        let responder = try RawResponder(
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 3\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        defer { responder.stop() }
        let overCurl = RunwayTransport(
            pipeline: Pipeline(interceptors: [], dispatcher: CurlDispatcher()), configuration: .init(responseBody: .streamed))
        await #expect {
            _ = try await overCurl.send(request, body: nil, baseURL: responder.url(), operationID: "export")
        } throws: { error in
            (error as? RunwayError)?.code == .responseInvalid
        }

        let stub = StubDispatcher(
            status: 200, headers: ["Content-Type": "application/octet-stream", "Content-Length": "3", "Transfer-Encoding": "chunked"],
            chunks: [Data("hel".utf8), Data("lo".utf8)])
        let transport = RunwayTransport(
            pipeline: Pipeline(interceptors: [], dispatcher: stub), configuration: .init(responseBody: .streamed))
        let (head, body) = try await transport.send(
            request, body: nil, baseURL: try #require(URL(string: "http://api.test")), operationID: "export")
        #expect(head.status == .ok)
        let streamed = try #require(body)
        #expect(streamed.length == .unknown)
        #expect(try await Data(collecting: streamed, upTo: 100) == Data("hello".utf8))
    }

    @Test func aJSONResponseIsBufferedAndTheBufferedPolicyBuffersEverything() async throws {
        try await withTestServer(routes: ItemRoutes().routes) { server in
            let client = makeClient(server, configuration: .init(responseBody: .buffered))
            let body = try await client.downloadBytes(path: .init(count: 1000)).ok.body.binary
            #expect(body.iterationBehavior == .multiple)
            #expect(try await Data(collecting: body, upTo: 1000) == DeterministicBytes.data(count: 1000))

            // A buffered body over maxResponseSize is an error, not a truncated body.
            var options = RequestOptions()
            options.maxResponseSize = 500
            let small = makeClient(server, configuration: .init(options: options, responseBody: .buffered))
            let error = try #require(await clientError { try await small.downloadBytes(path: .init(count: 1000)) })
            #expect(error.runwayError?.code == .responseTooLarge)
        }
    }

    @Test func theStreamedPolicyStreamsNamedOperations() async throws {
        try await withTestServer(routes: ItemRoutes().routes) { server in
            let streamed = makeClient(server, configuration: .init(responseBody: .streamed(operations: ["listItems"])))
            let list = try await streamed.listItems().ok.body.json
            #expect(list.items.count == 3)
            // The decoded output says nothing of how it came; the decision does:
            let request = HTTPRequest(
                method: .get, scheme: nil, authority: nil, path: "/items", headerFields: [.accept: "application/json"])
            #expect(
                RunwayTransport.ResponseBodyPolicy.streamed(operations: ["listItems"]).streams(operationID: "listItems", request: request))
            #expect(!RunwayTransport.ResponseBodyPolicy.automatic.streams(operationID: "listItems", request: request))
        }
    }

    @Test func theAutomaticPolicyStreamsWhenAStreamingTypeIsAccepted() {
        func streams(_ accept: String?) -> Bool {
            var request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/x")
            if let accept { request.headerFields[.accept] = accept }
            return RunwayTransport.ResponseBodyPolicy.automatic.streams(operationID: "x", request: request)
        }
        #expect(streams("application/octet-stream"))
        #expect(streams("application/json, application/octet-stream"))
        #expect(streams("Text/Event-Stream; charset=utf-8"))
        #expect(streams("multipart/mixed"))
        #expect(streams("MULTIPART/Form-Data; boundary=x"))
        #expect(streams(" , application/json ,\tapplication/x-ndjson ;q=0.5,"))
        #expect(!streams("text/event-streams, application/octet-stream-like, multipart"))
        #expect(!streams(",,, ;"))
        #expect(!streams(""))
        #expect(!streams("application/json"))
        #expect(!streams("application/json, text/plain"))
        #expect(!streams("*/*"))
        #expect(!streams(nil))
    }

    @Test func cancellingTheCallerAbortsABufferedTransfer() async throws {
        try await withTestServer { server in
            let client = makeClient(server, configuration: .init(responseBody: .buffered))
            let task = Task { try await client.slowStream(query: .init(ms: 600_000)) }
            #expect(await server.stats.wait { $0.requests(path: "/slow") == 1 })
            task.cancel()
            let error = try #require(await clientError { try await task.value })
            #expect(error.runwayError?.code == .cancelled)
            #expect(await server.stats.waitForAborts())
        }
    }

    @Test func cancellingTheReaderOfAStreamedBodyAbortsTheTransfer() async throws {
        try await withTestServer { server in
            let client = makeClient(server)
            // Ten minutes: the server streams on threads of its own, so a test held up on a
            // loaded machine must not see it end first (nothing left to abort).
            let body = try await client.slowStream(query: .init(ms: 600_000)).ok.body.binary
            let firstChunk = AsyncStream<Void>.makeStream()
            let reader = Task {
                var count = 0
                for try await chunk in body {
                    if count == 0 { firstChunk.continuation.yield() }
                    count += chunk.count
                }
                return count
            }
            var arrived = firstChunk.stream.makeAsyncIterator()
            _ = await arrived.next()
            reader.cancel()
            do {
                let count = try await reader.value
                Issue.record("the body ended after \(count) bytes instead of failing")
            } catch let error as RunwayError {
                #expect(error.code == .cancelled)
            }
            #expect(await server.stats.waitForAborts())
        }
    }
}
