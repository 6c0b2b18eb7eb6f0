import Foundation
import RunwayTestServer
import Testing

/// Tests that must have the process to themselves, run in a new process of this test binary.
///
/// `swift test` runs every test of the package at once in one process. A test that measures
/// something of the whole process (its peak memory) or changes something every test shares (its
/// environment variables, which URLSession, libcurl and child processes read) would be
/// disturbed by the others, or disturb them; `.serialized` only orders the tests of one suite.
/// Such a suite is enabled only in its own process, and a test of the normal run starts it there:
/// ```swift
/// @Suite(.enabled(if: OwnProcess.isRunning("StreamingMemoryTests")))
/// struct StreamingMemoryTests { ... }
///
/// @Test func inItsOwnProcess() async throws { try await OwnProcess.run("StreamingMemoryTests") }
/// ```
package enum OwnProcess {
    /// The variable that names the suite a process of its own was started for.
    static let variable = "RUNWAY_TEST_OWN_PROCESS"

    /// Whether this process was started by ``run(_:sourceLocation:)`` for the suite `name`.
    package static func isRunning(_ name: String) -> Bool {
        ProcessInfo.processInfo.environment[variable] == name
    }

    /// Runs the suite `name` (a type name) in a new process of this test binary and records an
    /// issue with that process's output unless every one of its tests passed. Waits on a thread of
    /// its own, not the cooperative pool.
    package static func run(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        // Never from a process started for a suite: each would start the next.
        guard ProcessInfo.processInfo.environment[variable] == nil else {
            Issue.record("\(name) asked for a process of its own from one already", sourceLocation: sourceLocation)
            return
        }
        #if os(Linux)
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #else
        let binary = URL(fileURLWithPath: CommandLine.arguments[0])
        #endif
        var environment = ProcessInfo.processInfo.environment
        environment[variable] = name
        // A test's identifier is `Module.Suite/test()/File.swift:line:column`: the suite's
        // name as a component, not the file's (the test starting it may live in that file).
        let filter = "\\.\(name)(/|$)"
        let outcome = try await runToEnd(
            binary, ["--testing-library", "swift-testing", "--no-parallel", "--filter", filter], environment: environment)
        // A filter that matched nothing would pass too: the run must have had tests.
        let ran = outcome.output.firstMatch(of: /Test run with (\d+) tests? .* passed/).flatMap { Int($0.1) } ?? 0
        #expect(outcome.status == 0 && ran > 0, "\(name) in its own process: \(outcome)", sourceLocation: sourceLocation)
    }
}
