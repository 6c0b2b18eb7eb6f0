import Foundation

/// How a run of a Python script ended.
public struct PythonOutcome: Sendable, CustomStringConvertible {
    /// The exit status.
    public let status: Int32
    /// Standard output and error together.
    public let output: String

    public var description: String { "exit \(status): \(output)" }
}

/// Runs `python3 script arguments...` to its end (the tests' Python checkers and verifiers).
public func runPython(_ script: URL, _ arguments: [String]) throws -> PythonOutcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return PythonOutcome(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
}
