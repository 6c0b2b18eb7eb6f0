import Foundation
import Runway
import RunwayTesting
import Testing

/// The test doubles behave like the real thing where a test relies on it: a stub validates,
/// records and reports cancellation like a dispatcher; recorders see the chain's order.
@Suite("RunwayTesting")
struct RunwayTestingTests {
    @Test func aStubAnswersFromItsHandlerAndRecordsEveryRequestInOrder() async throws {
        let stub = StubDispatcher { request in
            Response(status: request.url.path == "/missing" ? 404 : 200, body: Data(request.url.path.utf8))
        }
        let pipeline = Pipeline(interceptors: [], dispatcher: stub)
        let found = try await pipeline.send(try Request("http://api.test/found"))
        let missing = try await pipeline.send(try Request(method: .post, "http://api.test/missing", body: Data("x".utf8)))
        #expect(found.status == 200 && found.body == Data("/found".utf8) && found.origin == .stub)
        #expect(missing.status == 404)
        #expect(stub.requests.map(\.url.path) == ["/found", "/missing"])
        #expect(stub.requests.last?.method == .post && stub.requests.last?.body == Data("x".utf8))
    }

    @Test func aStubRefusesWhatADispatcherRefuses() async throws {
        let stub = StubDispatcher(status: 200, body: Data(count: 64))
        var invalid = try Request("http://api.test/")
        invalid.headers.add(name: "Bad Name", value: "x")
        await #expect { try await stub.dispatch(invalid, context: RequestContext()) } throws: {
            ($0 as? RunwayError)?.code == .invalidHeader
        }
        var small = try Request("http://api.test/")
        small.options.maxResponseSize = 16
        await #expect { try await stub.dispatch(small, context: RequestContext()) } throws: {
            ($0 as? RunwayError)?.code == .responseTooLarge
        }
        #expect(stub.requests.count == 1)
    }

    @Test func aStubThrowsOnlyRunwayErrorsAsADispatcherDoes() async throws {
        struct HandlerFailure: Error {}
        let stub = StubDispatcher { _ in throw HandlerFailure() }
        await #expect { try await stub.dispatch(try Request("http://api.test/"), context: RequestContext()) } throws: { error in
            guard let error = error as? RunwayError else { return false }
            return error.code == .transport && error.stage == .dispatcher("stub") && error.underlying is HandlerFailure
        }
        let refusing = StubDispatcher { _ in throw RunwayError(.serverError, "refused") }
        await #expect { try await refusing.dispatch(try Request("http://api.test/"), context: RequestContext()) } throws: {
            ($0 as? RunwayError)?.code == .serverError
        }
    }

    @Test func aStubLeavesADownloadsBodyInItsFileAsADispatcherDoes() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stub-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let stub = StubDispatcher { request in
            Response(status: request.url.path == "/missing" ? 404 : 200, body: Data("bytes of \(request.url.path)".utf8))
        }
        let pipeline = Pipeline(interceptors: [], dispatcher: stub)
        // Over a file already there, in a folder not made yet; larger than the memory limit.
        let file = folder.appendingPathComponent("deep/report.pdf")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("old".utf8).write(to: file)
        var request = try Request("http://api.test/report")
        request.download = DownloadTarget(file: file)
        request.options.maxResponseSize = 4
        let response = try await pipeline.send(request)
        #expect(response.fileURL == file && response.body.isEmpty)
        #expect(try Data(contentsOf: file) == Data("bytes of /report".utf8))
        #expect(!FileManager.default.fileExists(atPath: DownloadTarget(file: file).partialFile.path))
        // An error's body stays in memory, and the file is left as it was.
        var missing = try Request("http://api.test/missing")
        missing.download = DownloadTarget(file: file)
        let error = try await pipeline.send(missing)
        #expect(error.status == 404 && error.fileURL == nil && error.body == Data("bytes of /missing".utf8))
        #expect(try Data(contentsOf: file) == Data("bytes of /report".utf8))
        // A folder where the file should go is refused before the handler runs, as by a dispatcher.
        var intoFolder = try Request("http://api.test/report")
        intoFolder.download = DownloadTarget(file: folder)
        await #expect { try await pipeline.send(intoFolder) } throws: {
            ($0 as? RunwayError)?.code == .fileIO && ($0 as? RunwayError)?.neverSent == true
        }
        #expect(stub.requests.count == 3)
    }

    @Test func aCancelledCallThroughAStubIsCancelled() async throws {
        let (entered, enter) = AsyncStream.makeStream(of: Void.self)
        let stub = StubDispatcher { _ in
            enter.yield()
            try await Task.sleep(for: .seconds(600))
            return Response(status: 200)
        }
        let pipeline = Pipeline(interceptors: [], dispatcher: stub)
        var iterator = entered.makeAsyncIterator()
        // Through a pipeline, and called directly as a test of a dispatcher's user would; one
        // after the other, each cancelled once inside the handler.
        let calls: [@Sendable () async throws -> Response] = [
            { try await pipeline.send(try Request("http://api.test/slow")) },
            { try await stub.dispatch(try Request("http://api.test/slow"), context: RequestContext()) },
        ]
        for body in calls {
            let call = Task { try await body() }
            await iterator.next()
            call.cancel()
            await #expect { try await call.value } throws: { ($0 as? RunwayError)?.code == .cancelled }
        }
    }

    @Test func recordersSeeRequestsFirstToLastAndResponsesLastToFirst() async throws {
        let log = RecordingInterceptor.Log()
        let pipeline = Pipeline(
            interceptors: [RecordingInterceptor(name: "a", log: log), RecordingInterceptor(name: "b", log: log)],
            dispatcher: StubDispatcher(status: 503))
        _ = try await pipeline.send(try Request("http://api.test/"))
        #expect(log.events.map(\.description) == ["a>", "b>", "<b", "<a"])
        #expect(log.events.last == .response(interceptor: "a", status: 503))

        let failing = Pipeline(interceptors: [RecordingInterceptor(name: "c", log: log)], dispatcher: StubDispatcher(status: 200))
        var bad = try Request("http://api.test/")
        bad.options.timeout = .zero
        _ = try? await failing.send(bad)
        #expect(log.events.last == .failure(interceptor: "c", code: .configuration))
    }

    @Test func aScriptedSourceDrivesTheReachabilityMonitor() async throws {
        let source = ScriptedReachabilitySource(.reachable)
        let monitor = ReachabilityMonitor(source: source, interval: .seconds(3600))
        monitor.refresh()
        #expect(monitor.status == .reachable)
        source.set(.unreachable)
        monitor.refresh()
        #expect(monitor.status == .unreachable)
        #expect(monitor.shouldFailFast(host: nil))
    }
}
