import Foundation
import RunwayTestServer
import Testing

/// Runs the built `house-hunter` executable, as a user would.
enum HouseHunterProcess {
    /// What a run printed and how it ended.
    struct Outcome {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// The `house-hunter` built next to this test bundle (`swift build --build-tests` and
    /// `swift test` build it).
    static var binary: URL {
        get throws {
            let runner = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            let binary = runner.deletingLastPathComponent().appendingPathComponent("house-hunter")
            guard FileManager.default.isExecutableFile(atPath: binary.path) else {
                throw ProcessFailure("house-hunter is not built next to the tests (\(binary.path)); run swift build --build-tests")
            }
            return binary
        }
    }

    /// A fresh action-log outbox file, so runs never see each other's actions; the caller
    /// removes it (``removeActionLog(_:)``).
    static func freshActionLog() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("househunter-test-actions-\(UUID().uuidString).sqlite")
    }

    /// Removes an outbox file and those SQLite and the outbox keep beside it (`-wal`, `-shm`,
    /// `.lock`), so test runs leave nothing in the temporary directory.
    static func removeActionLog(_ file: URL) {
        for suffix in ["", "-wal", "-shm", "-journal", ".lock"] {
            try? FileManager.default.removeItem(atPath: file.path + suffix)
        }
    }

    /// Runs `house-hunter arguments...` to the end (killing it after `timeout`), with its action
    /// log in `actionLog`, or in a fresh file removed after the run. Started with `ChildProcess`,
    /// not Foundation's `Process` (whose start can crash a busy test process on Linux).
    static func run(_ arguments: [String], actionLog: URL? = nil, timeout: Duration = .seconds(120)) async throws -> Outcome {
        let log = actionLog ?? freshActionLog()
        defer { if actionLog == nil { removeActionLog(log) } }
        var environment = ProcessInfo.processInfo.environment
        environment["HOUSEHUNTER_ACTION_LOG"] = log.path
        let process = try ChildProcess(
            try binary.path, arguments, environment: environment, standardOutput: .pipe, standardError: .pipe)
        let output = Collector(process.standardOutput!)
        let errors = Collector(process.standardError!)
        let finished = await wait(for: process, timeout: timeout)
        if !finished { process.signal() }
        let exit = await process.waitForExit()
        let status: Int32 =
            switch exit {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        let outcome = Outcome(status: status, stdout: output.text(), stderr: errors.text())
        if !finished {
            throw ProcessFailure("house-hunter \(arguments) did not finish within \(timeout):\n\(outcome.stdout)\n\(outcome.stderr)")
        }
        return outcome
    }

    /// Waits for `process` to exit, polling; `false` when `timeout` passed first.
    static func wait(for process: ChildProcess, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }
}

/// Reads a pipe to its end on a thread of its own, so a full pipe never blocks the child.
final class Collector: Sendable {
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = readAvailable(handle)
                if chunk.isEmpty { break }
                lock.withLock { data.append(chunk) }
            }
            done.signal()
        }
    }

    /// What has been read so far.
    func snapshot() -> String {
        lock.withLock { String(decoding: data, as: UTF8.self) }
    }

    /// Everything read, once the writer closed the pipe.
    func text() -> String {
        done.wait()
        done.signal()
        return lock.withLock { String(decoding: data, as: UTF8.self) }
    }
}

/// A test-side failure with a message.
struct ProcessFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}
