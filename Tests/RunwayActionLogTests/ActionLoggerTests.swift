import Foundation
import InMemoryLogging
import Logging
import Runway
import RunwayActionLog
import RunwayStorage
import RunwayTestServer
import Testing

/// The action log end to end: `ActionLogger` against the batch endpoint on the test server.
@Suite struct ActionLoggerTests {
    @Test func tenThousandActionsGoOutInCeilTenThousandOverThirtyRequests() async throws {
        let sink = ActionSink()
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            let actions = try ActionLogger(testConfiguration(folder, registry: try analyticsRegistry(server)))
            for n in 0..<10_000 {
                #expect(actions.record("tap", attributes: ["n": String(n)]))
            }
            // 333 full batches go out by themselves; flush sends the last 10.
            #expect(await eventually(timeout: .seconds(60)) { sink.acknowledged.count == 333 })
            try await actions.flush()
            #expect(sink.requests.count == 334)
            #expect(sink.requests.count == (10_000 + 29) / 30)
            #expect(sink.requests.dropLast().allSatisfy { $0.recordIDs.count == 30 })
            #expect(sink.requests.last?.recordIDs.count == 10)
            let numbers = sink.stored.compactMap(\.n)
            #expect(numbers.count == 10_000)
            #expect(numbers == Array(0..<10_000))  // every action once, in order
            #expect(Set(sink.stored.map(\.id)).count == 10_000)
            #expect(sink.duplicates == 0)
            let statistics = actions.statistics
            #expect(statistics.recorded == 10_000)
            #expect(statistics.uploaded == 10_000)
            #expect(statistics.batchesUploaded == 334)
            #expect(statistics.pending == 0)
            await actions.shutdown()
        }
    }

    @Test func aSecondLoggerOnTheSameFileIsRefusedUntilTheFirstShutsDown() async throws {
        let sink = ActionSink()
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            let configuration = testConfiguration(folder, registry: try analyticsRegistry(server))
            let first = try ActionLogger(configuration)
            #expect(first.record("tap"))
            var error: RunwayError?
            do throws(RunwayError) {
                _ = try ActionLogger(configuration)
            } catch let refused {
                error = refused
            }
            #expect(error?.code == .configuration)
            #expect(error?.message.contains("one logger per file") == true, "\(String(describing: error))")
            await first.shutdown()
            // Free once the first has shut down: its action is there for the next.
            let second = try ActionLogger(configuration)
            #expect(second.statistics.stored == 1)
            await second.shutdown()
        }
    }

    @Test("a log file whose lock is held for a moment only (by a child process being started) opens")
    func aLockHeldForAMomentIsWaitedFor() async throws {
        let sink = ActionSink()
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            let configuration = testConfiguration(folder, registry: try analyticsRegistry(server))
            try FileManager.default.createDirectory(at: configuration.file.deletingLastPathComponent(), withIntermediateDirectories: true)
            // Another holder of the lock for 50 ms from now, on a thread of its own.
            let holder = open(configuration.file.path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            #expect(holder >= 0)
            #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)
            Thread.detachNewThread {
                usleep(50_000)
                close(holder)
            }
            let actions = try ActionLogger(configuration)
            #expect(actions.record("tap"))
            await actions.shutdown()
        }
    }

    @Test func recordIsSafeFromManyTasksAndThreadsAtOnce() async throws {
        let sink = ActionSink()
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            let actions = try ActionLogger(testConfiguration(folder, registry: try analyticsRegistry(server)))
            await withTaskGroup(of: Void.self) { group in
                for task in 0..<16 {
                    group.addTask {
                        for n in 0..<400 { actions.record("tap", attributes: ["n": String(task * 1_000 + n)]) }
                    }
                }
            }
            let threads = (0..<4).map { thread in
                Thread {
                    for n in 0..<400 { actions.record("tap", attributes: ["n": String(100_000 + thread * 1_000 + n)]) }
                }
            }
            for thread in threads { thread.start() }
            #expect(await eventually(timeout: .seconds(60)) { actions.statistics.recorded == 16 * 400 + 4 * 400 })
            try await actions.flush()
            var expected = Set<Int>()
            for task in 0..<16 { for n in 0..<400 { expected.insert(task * 1_000 + n) } }
            for thread in 0..<4 { for n in 0..<400 { expected.insert(100_000 + thread * 1_000 + n) } }
            #expect(sink.stored.count == expected.count)
            #expect(Set(sink.stored.compactMap(\.n)) == expected)
            #expect(sink.requests.count == (expected.count + 29) / 30)
            await actions.shutdown()
        }
    }

    @Test func aPartialBatchGoesOutOnTheFlushInterval() async throws {
        let sink = ActionSink()
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            var configuration = testConfiguration(folder, registry: try analyticsRegistry(server))
            configuration.flushInterval = .milliseconds(200)
            let actions = try ActionLogger(configuration)
            for n in 0..<29 { actions.record("idle", attributes: ["n": String(n)]) }
            // 29 actions, never 30: the interval sends them anyway, without a flush.
            #expect(await eventually(timeout: .seconds(60)) { sink.stored.count == 29 })
            #expect(sink.requests.count == 1)
            #expect(await eventually(timeout: .seconds(60)) { actions.statistics.pending == 0 })
            await actions.shutdown()
        }
    }

    @Test("a write the outbox refuses (another program holds its lock) is a writeFailed event, and is retried until it goes")
    func aRefusedWriteIsReportedAndRetried() async throws {
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer { server in
            let events = EventRecorder()
            let actions = try ActionLogger(testConfiguration(folder, registry: try analyticsRegistry(server), events: events))
            // Another program's write transaction on the file, held (on its store's write queue,
            // not a thread of the cooperative pool) until released.
            let other = try SQLiteStore(file: folder.outbox, label: "other") { _ in }
            let (inside, hold) = (Gate(), DispatchSemaphore(value: 0))
            let held = Task {
                try await other.write { db in
                    try db.execute("DELETE FROM action WHERE 0")
                    inside.open()
                    hold.wait()
                }
            }
            await inside.wait()
            actions.record("tap")
            // SQLite waits for the lock for a while, then the write fails: reported, kept queued.
            #expect(await eventually(timeout: .seconds(60)) { !events.of(.writeFailed).isEmpty })
            let failed = try #require(events.of(.writeFailed).first)
            #expect(failed.count == 1 && failed.error?.code == .fileIO && failed.retryDelay != nil, "\(failed)")
            #expect(actions.statistics.queued == 1 && actions.statistics.written == 0)
            hold.signal()
            try await held.value
            try await actions.persist()
            #expect(actions.statistics.written == 1 && actions.statistics.lost == 0)
            // The event follows the commit the waiters hear of.
            #expect(await eventually { events.total(.written) == 1 })
            await actions.shutdown()
        }
    }

    @Test func flushSendsEverythingNowAndThrowsWhenTheServerFails() async throws {
        let sink = ActionSink(.init(failures: 1, failureStatus: 503))
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            var configuration = testConfiguration(folder, registry: try analyticsRegistry(server))
            configuration.initialBackoff = .seconds(30)  // only flush() may send during the backoff
            configuration.maxBackoff = .seconds(30)
            let actions = try ActionLogger(configuration)
            for n in 0..<7 { actions.record("tap", attributes: ["n": String(n)]) }
            let failure = await outcome { try await actions.flush() }
            #expect(failure?.code == .serverError)
            #expect(failure?.response?.status == 503)
            #expect(actions.statistics.stored == 7)
            try await actions.flush()
            #expect(sink.stored.compactMap(\.n) == Array(0..<7))
            #expect(sink.requests.map(\.batchID).count == 2)
            #expect(Set(sink.requests.map(\.batchID)).count == 1)  // the same batch, sent again
            #expect(actions.statistics.pending == 0)
            await actions.shutdown()
        }
    }

    @Test func recordDurablyReturnsOnceTheActionIsInTheFile() async throws {
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer { server in
            let actions = try ActionLogger(testConfiguration(folder, registry: try analyticsRegistry(server)))
            try await actions.recordDurably("purchase", attributes: ["sku": "A-1"])
            // Another connection sees the committed row at once.
            let reader = try SQLiteStore(file: folder.outbox, label: "test") { _ in }
            let rows = try reader.read { db in try db.rows("SELECT record FROM action") { $0.data(0) ?? Data() } }
            #expect(rows.count == 1)
            let record = try ActionBatch(decoding: ActionBatchBody.wrap(rows)).records.first
            #expect(record?.name == "purchase")
            #expect(record?.attributes == ["sku": "A-1"])
            #expect(UUID(uuidString: record?.id ?? "") != nil)
            await actions.shutdown()
        }
    }

    @Test func invalidActionsAreRefusedCountedAndLogged() async throws {
        let folder = TestFolder()
        defer { folder.remove() }
        let logs = InMemoryLogHandler()
        try await withTestServer { server in
            var configuration = testConfiguration(folder, registry: try analyticsRegistry(server))
            configuration.maxActionBytes = 100
            configuration.logger = Logger(label: "actions") { _ in logs }
            let actions = try ActionLogger(configuration)
            #expect(!actions.record(""))
            #expect(!actions.record("big", attributes: ["blob": String(repeating: "x", count: 200)]))
            let failure = await outcome { try await actions.recordDurably("") }
            #expect(failure?.code == .paramsInvalid)
            #expect(failure?.field == "action")
            #expect(actions.record("fine"))
            try await actions.persist()
            #expect(actions.statistics.rejected == 3)
            #expect(actions.statistics.written == 1)
            #expect(
                await eventually(timeout: .seconds(60)) {
                    logs.entries.filter { $0.level == .warning && "\($0.message)".contains("rejected") }.count >= 2
                })
            await actions.shutdown()
        }
    }

    @Test func shutdownWritesWhatIsQueuedAndTheNextRunUploadsIt() async throws {
        let sink = ActionSink()
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            let registry = try analyticsRegistry(server)
            do {
                var configuration = testConfiguration(folder, registry: registry)
                configuration.batchSize = 1_000  // nothing goes out during this run
                let actions = try ActionLogger(configuration)
                for n in 0..<100 { actions.record("tap", attributes: ["n": String(n)]) }
                await actions.shutdown()
                #expect(!actions.record("late"))
                #expect(actions.statistics.stored == 100)
                #expect(actions.statistics.rejected == 1)
                let failure = await outcome { try await actions.flush() }
                #expect(failure?.code == .cancelled)
            }
            #expect(sink.requests.isEmpty)
            let events = EventRecorder()
            let next = try ActionLogger(testConfiguration(folder, registry: registry, events: events))
            #expect(next.statistics.leftovers == 100)
            #expect(await eventually(timeout: .seconds(60)) { sink.stored.count == 100 })
            #expect(sink.requests.map(\.recordIDs.count) == [30, 30, 30, 10])
            #expect(events.total(.leftoversFound) == 100)
            await next.shutdown()
        }
    }

    @Test func badConfigurationIsATypedErrorNamingTheField() throws {
        let folder = TestFolder()
        defer { folder.remove() }
        func check(_ field: String, _ change: (inout ActionLogger.Configuration) -> Void) {
            var configuration = ActionLogger.Configuration(file: folder.outbox, serviceID: .analytics)
            change(&configuration)
            #expect {
                try ActionLogger(configuration)
            } throws: { error in
                (error as? RunwayError)?.code == .configuration && (error as? RunwayError)?.field == field
            }
        }
        check("batchSize") { $0.batchSize = 0 }
        check("maxRecords") { $0.maxRecords = 10 }
        check("apiName") { $0.apiName = "" }
        check("flushInterval") { $0.flushInterval = .zero }
        check("initialBackoff") { $0.initialBackoff = .zero }
        check("maxRefusals") { $0.maxRefusals = 0 }
        check("maxBackoff") { $0.maxBackoff = .milliseconds(1) }
    }
}

/// Wraps stored record bodies into a batch body, to read them back with ``ActionBatch``.
enum ActionBatchBody {
    static func wrap(_ records: [Data]) -> Data {
        var body = Data(#"{"batch":"\#(UUID().uuidString)","records":["#.utf8)
        for (index, record) in records.enumerated() {
            if index > 0 { body += Data(",".utf8) }
            body += record
        }
        return body + Data("]}".utf8)
    }
}
