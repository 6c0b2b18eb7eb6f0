import Foundation
import InMemoryLogging
import Logging
import Runway
import RunwayActionLog
import RunwayStorage
import RunwayTestServer
import Testing

/// The outbox file: its bound and drop policies, and a corrupt file.
@Suite struct OutboxTests {
    @Test func dropOldestKeepsTheNewestAndCountsReportsAndLogsEveryDrop() async throws {
        let sink = ActionSink(.init(failures: 1_000))
        let folder = TestFolder()
        defer { folder.remove() }
        let logs = InMemoryLogHandler()
        try await withTestServer(routes: sink.routes) { server in
            let events = EventRecorder()
            var configuration = testConfiguration(folder, registry: try analyticsRegistry(server), events: events)
            configuration.maxRecords = 50
            configuration.logger = Logger(label: "actions") { _ in logs }
            let actions = try ActionLogger(configuration)
            for n in 0..<200 {
                #expect(actions.record("tap", attributes: ["n": String(n)]))  // dropOldest accepts the new one
            }
            try await actions.persist()
            let statistics = actions.statistics
            #expect(statistics.stored == 50)
            #expect(statistics.dropped == 150)
            #expect(statistics.dropped + statistics.stored == 200)
            // The counts the triggers keep (so no write scans the table) are the real ones.
            let reader = try SQLiteStore(file: folder.outbox, label: "test") { _ in }
            let (kept, real) = try reader.read { db in
                (
                    try db.firstRow("SELECT total, unassigned FROM counts") { [$0.int(0), $0.int(1)] },
                    try db.firstRow("SELECT count(*), count(*) FILTER (WHERE batch IS NULL) FROM action") { [$0.int(0), $0.int(1)] }
                )
            }
            #expect(kept?[0] == 50)
            #expect(kept == real)
            // Counted at once; reported and logged by the writer thread right after.
            #expect(await eventually(timeout: .seconds(60)) { events.total(.dropped) == 150 })
            #expect(logs.entries.contains { $0.level == .warning && "\($0.message)".contains("the outbox is full") })
            // The server comes back: it gets what was kept, and the newest 20 are among it.
            sink.setBehaviour { $0.failures = 0 }
            try await actions.flush()
            let received = Set(sink.stored.compactMap(\.n))
            #expect(received.count == 50)
            #expect(Set(180..<200).isSubset(of: received))
            await actions.shutdown()
        }
    }

    @Test func dropNewestRefusesNewActionsOnceFull() async throws {
        let sink = ActionSink(.init(failures: 1_000))
        let folder = TestFolder()
        defer { folder.remove() }
        try await withTestServer(routes: sink.routes) { server in
            let events = EventRecorder()
            var configuration = testConfiguration(folder, registry: try analyticsRegistry(server), events: events)
            configuration.maxRecords = 50
            configuration.whenFull = .dropNewest
            let actions = try ActionLogger(configuration)
            let accepted = (0..<120).filter { n in actions.record("tap", attributes: ["n": String(n)]) }
            #expect(accepted == Array(0..<50))
            let failure = await outcome { try await actions.recordDurably("one.more") }
            #expect(failure?.code == .fileIO)
            try await actions.persist()
            #expect(actions.statistics.dropped == 71)
            #expect(await eventually(timeout: .seconds(60)) { events.total(.dropped) == 71 })
            sink.setBehaviour { $0.failures = 0 }
            try await actions.flush()
            #expect(sink.stored.compactMap(\.n) == Array(0..<50))
            await actions.shutdown()
        }
    }

    @Test func aDatabaseOfAnotherProgramIsRefusedAndLeftAsItIs() async throws {
        let folder = TestFolder()
        defer { folder.remove() }
        let schema = "CREATE TABLE IF NOT EXISTS action (id INTEGER PRIMARY KEY, what TEXT, batch TEXT, seq INTEGER)"
        let other = try SQLiteStore(file: folder.outbox, label: "other") { try $0.executeScript(schema) }
        try await other.write { db in try db.execute("INSERT INTO action (what) VALUES (?)", "the other program's row") }
        try await withTestServer { server in
            let configuration = testConfiguration(folder, registry: try analyticsRegistry(server))
            // Taken for an outbox, its row (no `seq`) was counted as waiting and never put in a batch:
            // the logger's start-up assigned batches to it forever.
            let error = #expect(throws: RunwayError.self) { try ActionLogger(configuration) }
            #expect(error?.code == .configuration)
            let reason = String(describing: error?.underlying)
            #expect(reason.contains("not an action-log outbox"))
            // Said in the message too, not only in the underlying error.
            #expect(error?.message.contains(": not an action-log outbox: its table action has the columns") == true)
        }
        let tables = try other.read { db in try db.rows("SELECT name FROM sqlite_master WHERE type = 'table'") { $0.string(0) ?? "" } }
        #expect(tables == ["action"])
        #expect(try other.read { db in try db.firstRow("SELECT what FROM action") { $0.string(0) } } == "the other program's row")
    }

    @Test func aCorruptOutboxIsRebuiltAndTheLossIsReported() async throws {
        let folder = TestFolder()
        defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        try Data(repeating: 0x42, count: 8_192).write(to: folder.outbox)
        let logs = InMemoryLogHandler()
        try await withTestServer { server in
            let events = EventRecorder()
            var configuration = testConfiguration(folder, registry: try analyticsRegistry(server), events: events)
            configuration.logger = Logger(label: "actions") { _ in logs }
            let actions = try ActionLogger(configuration)
            #expect(events.of(.lost).count == 1)
            #expect(events.of(.lost).first?.reason?.contains("cannot be counted") == true)
            #expect(actions.statistics.lost == 0)
            #expect(logs.entries.contains { $0.level == .error && "\($0.message)".contains("corrupt") })
            #expect(FileManager.default.fileExists(atPath: folder.outbox.path + ".corrupt"))
            try await actions.recordDurably("after")
            #expect(actions.statistics.stored == 1)
            await actions.shutdown()
        }
    }
}
