import CCurl
import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

@testable import RunwayCurl

/// Tasks that run on the dispatcher's loop thread (`CurlDispatcher.loopExecutor`), against the
/// test server, on both ways the loop waits.
@Suite("libcurl loop: the loop as a task executor", .timeLimit(.minutes(2)))
struct LoopExecutorTests {
    static let backends: [SocketWatch.Backend] = [.epoll, .poll]

    /// The loop thread's kernel ID, once it runs.
    private func loopThread(of dispatcher: CurlDispatcher) async throws -> Int {
        for _ in 0..<3000 {
            if let id = dispatcher.loopThreadID { return id }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw RunwayError(.timeout, "the loop thread never started")
    }

    @Test("a task that prefers the loop runs on its thread before and after each call, and gets every response whole", arguments: backends)
    func taskRunsOnTheLoop(_ backend: SocketWatch.Backend) async throws {
        #if os(Linux)
        let dispatcher = CurlDispatcher(socketBackend: backend)
        let loop = try await loopThread(of: dispatcher)
        let pipeline = Pipeline(interceptors: [], dispatcher: dispatcher)
        try await withTestServer { server in
            let threads = try await Task(executorPreference: dispatcher.loopExecutor) {
                var seen: Set<Int> = [runway_thread_id()]
                for index in 0..<50 {
                    let response = try await pipeline.send(makeRequest(server.url("/echo?n=\(index)")))
                    #expect(response.status == 200)
                    // The whole query, quoted: "n=1" alone is also in the answer to n=10.
                    #expect(String(decoding: response.body, as: UTF8.self).contains("\"query\":\"n=\(index)\""))
                    seen.insert(runway_thread_id())
                }
                return seen
            }.value
            #expect(threads == [loop])
            #expect(server.stats.connectionsAccepted == 1)
        }
        #endif
    }

    @Test("64 tasks on the loop, 40 calls each, every answer theirs", arguments: backends)
    func manyTasksOnTheLoop(_ backend: SocketWatch.Backend) async throws {
        let dispatcher = CurlDispatcher(configuration: .init(maxConnectionsPerHost: 8), socketBackend: backend)
        let pipeline = Pipeline(interceptors: [], dispatcher: dispatcher)
        try await withTestServer { server in
            let answered = try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<64 {
                    group.addTask(executorPreference: dispatcher.loopExecutor) {
                        for call in 0..<40 {
                            let body = try await pipeline.send(makeRequest(server.url("/echo?w=\(worker)&c=\(call)"))).body
                            let query = "\"query\":\"w=\(worker)&c=\(call)\""
                            guard String(decoding: body, as: UTF8.self).contains(query) else { return 0 }
                        }
                        return 40
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(answered == 64 * 40)
            #expect(server.stats.connectionsAccepted <= 8)
        }
    }

    @Test("cancelling a task that waits on the loop ends its transfer at once", arguments: backends)
    func cancelOnTheLoop(_ backend: SocketWatch.Backend) async throws {
        let dispatcher = CurlDispatcher(socketBackend: backend)
        let pipeline = Pipeline(interceptors: [], dispatcher: dispatcher)
        try await withTestServer { server in
            // Five minutes of body: a call that ended any other way than by the cancellation
            // would end long after the bound below (generous for a loaded sanitizer run).
            let call = Task(executorPreference: dispatcher.loopExecutor) {
                try await pipeline.send(makeRequest(server.url("/slow?ms=300000")))
            }
            #expect(await server.stats.wait { $0.requests(path: "/slow") == 1 })
            let started = ContinuousClock.now
            call.cancel()
            let error = await runwayError { try await call.value }
            #expect(error?.code == .cancelled)
            #expect(ContinuousClock.now - started < .seconds(60))
            #expect(await server.waitForAbort())
            // The loop goes on serving others.
            let status = try await pipeline.send(makeRequest(server.url("/json"))).status
            #expect(status == 200)
        }
    }

    @Test("a task on the loop streams a body down (pausing the transfer) and one up (fed by itself)", arguments: backends)
    func streamsOnTheLoop(_ backend: SocketWatch.Backend) async throws {
        let dispatcher = CurlDispatcher(socketBackend: backend)
        let pipeline = Pipeline(interceptors: [], dispatcher: dispatcher)
        try await withTestServer { server in
            let (received, answer) = try await Task(executorPreference: dispatcher.loopExecutor) { () async throws -> (Int, String) in
                var download = makeRequest(server.url("/bytes/\(8 << 20)"))
                download.streamsResponseBody = true
                let response = try await pipeline.send(download)
                var received = 0
                var chunks = 0
                for try await chunk in try #require(response.bodyStream) {
                    // Slow at first: the buffer fills past its mark and the transfer pauses.
                    if chunks < 5 { try await Task.sleep(for: .milliseconds(20)) }
                    received += chunk.count
                    chunks += 1
                }
                // The body is fed by this same task while a child task (which keeps the
                // preference) sends it.
                var upload = makeRequest(.post, server.url("/upload"))
                let (stream, feed) = AsyncStream<Data>.makeStream()
                upload.bodyStream = .sequence(stream)
                async let sent = pipeline.send(upload)
                for _ in 0..<64 {
                    feed.yield(Data(repeating: 7, count: 64 << 10))
                    await Task.yield()
                }
                feed.finish()
                return (received, String(decoding: try await sent.body, as: UTF8.self))
            }.value
            #expect(received == 8 << 20)
            #expect(answer.contains("\"received\":\(64 << 16)"))
        }
    }

    @Test("a task that prefers the loop of a released dispatcher runs on, on the global executor")
    func executorOutlivesItsDispatcher() async throws {
        var dispatcher: CurlDispatcher? = CurlDispatcher()
        let executor = try #require(dispatcher?.loopExecutor)
        // Waiting on the loop when the dispatcher goes: its transfer fails, and the task still runs.
        let waiting = Task(executorPreference: executor) { [weak dispatcher] () async -> RunwayError? in
            guard let dispatcher else { return nil }
            let pipeline = Pipeline(interceptors: [], dispatcher: dispatcher)
            return await runwayError { try await pipeline.send(makeRequest(URL(string: "http://127.0.0.1:9/")!)) }
        }
        _ = await waiting.value
        dispatcher = nil
        let after = await Task(executorPreference: executor) { () async -> Int in
            var total = 0
            for step in 1...10 {
                await Task.yield()
                total += step
            }
            return total
        }.value
        #expect(after == 55)
    }

    @Test("a dispatcher released by a task on its own loop shuts down, and the task finishes")
    func releasedFromItsOwnLoop() async throws {
        try await withTestServer { server in
            let holder = DispatcherHolder(CurlDispatcher())
            let executor = try #require(holder.dispatcher?.loopExecutor)
            let status = try await Task(executorPreference: executor) { () async throws -> Int in
                let pipeline = Pipeline(interceptors: [], dispatcher: try #require(holder.dispatcher))
                let status = try await pipeline.send(makeRequest(server.url("/json"))).status
                holder.dispatcher = nil  // the pipeline still holds it
                _ = consume pipeline
                await Task.yield()
                return status
            }.value
            #expect(status == 200)
        }
    }
}

/// Lets a task drop the last reference to a dispatcher.
private final class DispatcherHolder: @unchecked Sendable {
    // @unchecked: only the one task in `releasedFromItsOwnLoop` writes it, after the test read it.
    var dispatcher: CurlDispatcher?
    init(_ dispatcher: CurlDispatcher) { self.dispatcher = dispatcher }
}
