import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a run of a program ended.
public struct ProcessOutcome: Sendable, CustomStringConvertible {
    /// The exit status (128 and the signal's number for a program a signal ended, as shells say).
    public let status: Int32
    /// Standard output and error together.
    public let output: String

    public var description: String { "exit \(status): \(output)" }
}

/// Runs `executable arguments...` to its end, with `environment` (this process's when `nil`),
/// standard input empty.
///
/// The process is waited for on a thread of its own, never one of the cooperative pool: a
/// blocked pool thread (there may be only two) would hold up every other test meanwhile,
/// the in-process test servers included. It is started with ``ChildProcess``, not `Process`.
public func runToEnd(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) async throws -> ProcessOutcome {
    try await offThePool {
        let child = try ChildProcess(
            executable.path, arguments, environment: environment, standardOutput: .pipe, standardError: .output)
        let data = child.standardOutput.map(readToEnd) ?? Data()
        let status: Int32 =
            switch child.waitForExitBlocking() {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        return ProcessOutcome(status: status, output: String(decoding: data, as: UTF8.self))
    }
}

/// The executable product `name` of this package, built by `swift build` next to the test bundle
/// (the test target that runs it depends on it, so it is built).
public func builtProduct(_ name: String) -> URL {
    #if os(Linux)
    let products = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    #else
    let bundle = Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") } ?? Bundle.main
    let products = bundle.bundleURL.deletingLastPathComponent()
    #endif
    return products.appending(path: name)
}

/// Runs `work`, which blocks (on a process, a pipe), on a new thread, and returns its result.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}

/// Reads `handle` (a pipe) to its end. Foundation's own `readDataToEndOfFile()` and
/// `availableData` end the process when a read is interrupted by a signal (`try!` on `EINTR`),
/// and in a test process children exit all the time, each with a `SIGCHLD`: these retry instead.
public func readToEnd(_ handle: FileHandle) -> Data {
    var data = Data()
    while case let chunk = readAvailable(handle), !chunk.isEmpty { data.append(chunk) }
    return data
}

/// What `handle` (a pipe) has now, waiting for something if it is empty; empty at its end (or
/// on an error other than an interrupted read). See ``readToEnd(_:)``.
public func readAvailable(_ handle: FileHandle, upTo count: Int = 64 << 10) -> Data {
    var buffer = [UInt8](repeating: 0, count: count)
    while true {
        let received = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, count) }
        if received >= 0 { return Data(buffer[0..<received]) }
        if errno != EINTR { return Data() }
    }
}
