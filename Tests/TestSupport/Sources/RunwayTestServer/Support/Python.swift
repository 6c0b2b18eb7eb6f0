import Foundation

/// Runs `python3 script arguments...` to its end (the tests' Python checkers and verifiers),
/// waiting on a thread of its own (see ``runToEnd(_:_:environment:)``).
public func runPython(_ script: URL, _ arguments: [String]) async throws -> ProcessOutcome {
    try await runToEnd(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path] + arguments)
}

/// A Python server script started as a process of its own (`python3 script arguments...`), which
/// prints the port it listens on as its first line. The process gets a pipe as its standard input:
/// a script may exit when it closes, which ``stop()`` (and the deinit) does before terminating it.
public final class PythonServer: Sendable {
    /// The process.
    public let process: ChildProcess
    /// The port the script printed.
    public let port: Int
    private let input: FileHandle

    /// Starts `script` and reads its port, waiting on a thread of its own (see ``runToEnd(_:_:environment:)``).
    public static func start(_ script: URL, _ arguments: [String] = []) async throws -> PythonServer {
        try await offThePool { try PythonServer(script, arguments) }
    }

    private init(_ script: URL, _ arguments: [String]) throws {
        process = try ChildProcess("/usr/bin/env", ["python3", script.path] + arguments, standardInput: .pipe, standardOutput: .pipe)
        input = process.standardInput!
        var line = Data()
        while let output = process.standardOutput {
            let byte = readAvailable(output, upTo: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            process.signal()
            throw PythonServerError(script: script.lastPathComponent, firstLine: String(decoding: line, as: UTF8.self))
        }
        self.port = port
    }

    /// Closes the script's standard input and terminates it if it still runs.
    public func stop() {
        try? input.close()
        if process.isRunning { process.signal() }
    }

    deinit {
        stop()
    }
}

/// A Python server that did not print its port.
public struct PythonServerError: Error, CustomStringConvertible {
    public let script: String
    public let firstLine: String
    public var description: String { "\(script) did not print its port (first line: \(firstLine.debugDescription))" }
}
