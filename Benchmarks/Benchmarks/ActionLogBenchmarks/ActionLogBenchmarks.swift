// The caller's cost of logging one user action (issue 6: `record` ≤ 5 µs median), side by side
// with what users build by hand (a synchronous SQLite insert per action) and with the floor
// (appending to a locked array, no persistence at all); and the durability window (from
// handing an action over to its commit).
//
// One iteration is one action (scaling factor 1), so the wall-clock percentiles are per call.
// The logger or database is opened in `setup`, outside the measurement, and closed in
// `teardown`.
import Benchmark
import Foundation
import Runway
import RunwayActionLog

/// What a benchmark's `setup` opens and its `teardown` closes, in a folder of its own.
final class Fixture<Value: Sendable>: Sendable {
    let folder = FileManager.default.temporaryDirectory.appending(path: "runway-action-bench-\(UUID().uuidString)")
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false thread-sanitizer report on Linux.
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var stored: Value?

    var value: Value {
        guard let value = lock.withLock({ stored }) else { fatalError("benchmark fixture used outside setup/teardown") }
        return value
    }

    func set(_ value: Value?) { lock.withLock { stored = value } }

    func removeFolder() { try? FileManager.default.removeItem(at: folder) }
}

/// A logger with nothing to upload to, so only the caller's side and the writer run.
func openLogger(_ fixture: Fixture<ActionLogger>) throws {
    var settings = ActionLogger.Configuration(file: fixture.folder.appending(path: "actions.sqlite"), serviceID: "analytics")
    settings.batchSize = 10_000
    settings.flushInterval = nil
    settings.maxRecords = 2_000_000
    fixture.set(try ActionLogger(settings))
}

func closeLogger(_ fixture: Fixture<ActionLogger>) async {
    await fixture.value.shutdown()
    fixture.set(nil)
    fixture.removeFolder()
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal, .throughput],
        warmupIterations: 1_000,
        scalingFactor: .one,
        maxDuration: .seconds(3),
        maxIterations: 300_000
    )
    let attributes = ["screen": "listing/detail", "listing": "42"]

    let recording = Fixture<ActionLogger>()
    Benchmark(
        "actions: ActionLogger.record", configuration: configuration,
        closure: { benchmark in
            let actions = recording.value
            for _ in benchmark.scaledIterations {
                blackHole(actions.record("tap", attributes: attributes))
            }
        },
        setup: { try openLogger(recording) },
        teardown: { await closeLogger(recording) })

    let durable = Fixture<ActionLogger>()
    Benchmark(
        "actions: ActionLogger.recordDurably (hand-over to commit)", configuration: configuration,
        closure: { benchmark in
            let actions = durable.value
            for _ in benchmark.scaledIterations {
                try await actions.recordDurably("tap", attributes: attributes)
            }
        },
        setup: { try openLogger(durable) },
        teardown: { await closeLogger(durable) })

    let database = Fixture<HandWrittenLog>()
    Benchmark(
        "actions: synchronous SQLite insert per action (WAL)", configuration: configuration,
        closure: { benchmark in
            let log = database.value
            for _ in benchmark.scaledIterations {
                try log.record(UserAction("tap", attributes: attributes))
            }
        },
        setup: {
            try FileManager.default.createDirectory(at: database.folder, withIntermediateDirectories: true)
            database.set(try HandWrittenLog(path: database.folder.appending(path: "hand.sqlite").path))
        },
        teardown: {
            database.set(nil)
            database.removeFolder()
        })

    let lock = NSLock()
    nonisolated(unsafe) var queue: [UserAction] = []
    Benchmark(
        "actions: append to a locked array (no persistence)", configuration: configuration,
        closure: { benchmark in
            for _ in benchmark.scaledIterations {
                let action = UserAction("tap", attributes: attributes)
                lock.withLock { queue.append(action) }
            }
        },
        teardown: { lock.withLock { queue = [] } })
}
