import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import TestHelpers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A 1 GiB body read through a stream keeps the test process's memory flat.
///
/// The server is a Python process of its own (`Scripts/stream_server.py`), so its memory is
/// not the test's. The reader is slow at first, so the buffer fills and libcurl pauses; then it
/// reads as fast as it can. The test checks peak RSS, not time.
///
/// RSS is the whole process's: with the rest of the suite running alongside (uploads of 48 MiB,
/// thousands of actions), the peak measures them. So the suite runs in a process of its own
/// (``StreamingMemoryProcessTests`` starts it there) and is disabled in the normal run.
@Suite("Streaming responses: memory", .enabled(if: OwnProcess.isRunning("StreamingMemoryTests")))
struct StreamingMemoryTests {
    /// A value in kB from `/proc/self/status` (`VmRSS`, `VmHWM`).
    static func status(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        }
        return nil
    }

    /// Resets the peak RSS (`VmHWM`) to the current RSS (Linux 4.0+); false where it cannot.
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }

    @Test(
        "a 1 GiB stream read slowly at first keeps peak RSS within 64 MiB of where it started",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status")), .timeLimit(.minutes(3)))
    func gigabyteStreamKeepsMemoryFlat() async throws {
        let size = 1 << 30
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/stream_server.py")
        let python = try await PythonServer.start(script, [String(size)])
        let (server, port) = (python.process, python.port)
        defer { python.stop() }
        let dispatcher = CurlDispatcher()
        var request = try Request("http://127.0.0.1:\(port)/gigabyte")
        request.streamsResponseBody = true
        request.options.timeout = nil
        // Measured from here: the dispatcher, its thread and the test's own state exist already.
        let reset = Self.resetPeak()
        let baseline = try #require(reset ? Self.status("VmRSS") : Self.status("VmHWM"))

        let response = try await dispatcher.dispatch(request, context: RequestContext())
        #expect(response.headers["Content-Length"] == String(size))
        var received = 0
        var chunks = 0
        var firstBytesMatch = false
        for try await chunk in response.bodyStream! {
            if chunks == 0 { firstBytesMatch = chunk.prefix(256).elementsEqual((0..<256).map { UInt8($0 % 251) }) }
            // Slow at first: the buffer fills to its high-water mark and the transfer pauses.
            if chunks < 10 { try await Task.sleep(for: .milliseconds(30)) }
            received += chunk.count
            chunks += 1
        }
        let peak = try #require(Self.status("VmHWM"))
        let growth = peak - baseline
        print(
            "streamed \(received) bytes in \(chunks) chunks; peak RSS \(peak) kB, \(growth) kB over the \(baseline) kB baseline"
                + (reset ? "" : " (peak not reset: baseline is the earlier peak)"))
        #expect(received == size)
        #expect(firstBytesMatch)
        #expect(growth < 64 << 10, "peak RSS grew by \(growth) kB while streaming 1 GiB")
        #expect(await server.waitForExit() == .exited(0))
    }

    @Test(
        "a reader slower than the connection from start to end keeps peak RSS within 64 MiB over 256 MiB",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status")), .timeLimit(.minutes(3)))
    func slowReaderKeepsMemoryFlat() async throws {
        let size = 256 << 20
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/stream_server.py")
        let python = try await PythonServer.start(script, [String(size)])
        defer { python.stop() }
        let dispatcher = CurlDispatcher()
        var request = try Request("http://127.0.0.1:\(python.port)/slow-reader")
        request.streamsResponseBody = true
        request.options.timeout = nil
        let reset = Self.resetPeak()
        let baseline = try #require(reset ? Self.status("VmRSS") : Self.status("VmHWM"))

        let response = try await dispatcher.dispatch(request, context: RequestContext())
        var received = 0
        var chunks = 0
        // Every chunk waits a little: the transfer stays ahead of the reader to the end, so the
        // stream keeps refilling its buffer while the reader works through it.
        for try await chunk in response.bodyStream! {
            if chunks % 4 == 0 { try await Task.sleep(for: .microseconds(200)) }
            received += chunk.count
            chunks += 1
        }
        let peak = try #require(Self.status("VmHWM"))
        let growth = peak - baseline
        print("slow reader: \(received) bytes in \(chunks) chunks; peak RSS grew by \(growth) kB")
        #expect(received == size)
        #expect(growth < 64 << 10, "peak RSS grew by \(growth) kB while a slow reader streamed 256 MiB")
        #expect(await python.process.waitForExit() == .exited(0))
    }
}

/// Runs ``StreamingMemoryTests`` in a process of its own, where nothing else allocates.
@Suite("Streaming responses: memory, in a process of its own")
struct StreamingMemoryProcessTests {
    @Test(
        "a 1 GiB stream keeps peak RSS flat, measured in a process where nothing else runs",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status")))
    func inItsOwnProcess() async throws {
        try await OwnProcess.run("StreamingMemoryTests")
    }
}
