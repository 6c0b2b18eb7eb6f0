import Foundation
import RunwayTestServer
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `ActionLogCrashHelper` running as a child process: its stdout lines as they arrive, a
/// SIGKILL, and its exit.
final class HelperProcess: Sendable {
    private let process: ChildProcess
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false thread-sanitizer report on Linux.
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var lines: [String] = []

    /// The helper binary: built by `swift build` next to the test bundle (the tests' target
    /// depends on it).
    static var executable: URL { builtProduct("ActionLogCrashHelper") }

    /// Starts the helper with `arguments`.
    init(_ arguments: [String]) throws {
        process = try ChildProcess(Self.executable.path, arguments, standardOutput: .pipe, standardError: .inherit)
        guard let reader = process.standardOutput else { return }
        Thread { [self] in
            var pending = Data()
            while true {
                let chunk = readAvailable(reader)
                if chunk.isEmpty { break }
                pending += chunk
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[pending.index(after: newline)...])
                    lock.withLock { lines.append(line) }
                }
            }
        }.start()
    }

    /// Every line printed so far.
    var output: [String] { lock.withLock { lines } }

    /// The `n`-th line (1-based) that satisfies `matches`, once printed; `nil` after `timeout`
    /// or when the process has ended without printing it.
    func line(_ n: Int = 1, timeout: Duration = .seconds(60), where matches: @Sendable (String) -> Bool) async -> String? {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            let found = output.filter(matches)
            if found.count >= n { return found[n - 1] }
            if process.exit != nil {
                try? await Task.sleep(for: .milliseconds(50))  // lines still in the pipe
                let found = output.filter(matches)
                return found.count >= n ? found[n - 1] : nil
            }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return nil
    }

    /// Kills the process with SIGKILL: no clean-up of any kind runs in it.
    func kill() {
        process.signal(SIGKILL)
    }

    /// Waits for the process to end; `nil` after `timeout`.
    func exitStatus(timeout: Duration = .seconds(60)) async -> ChildProcess.Exit? {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if let exit = process.exit { return exit }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }

    /// The highest `n` the helper reported durable (`DURABLE n`), if any.
    var lastDurable: Int? {
        output.compactMap { line in line.hasPrefix("DURABLE ") ? Int(line.dropFirst(8)) : nil }.max()
    }
}

/// A seeded random generator (SplitMix64), so a failing crash run can be replayed.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
