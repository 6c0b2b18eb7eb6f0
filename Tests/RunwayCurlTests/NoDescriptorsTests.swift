import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

@testable import RunwayCurl

#if os(Linux)
/// A dispatcher made while the process has no file descriptors left: it has no event loop, and
/// refuses its calls. In a process of its own (the limit is the process's).
@Suite("libcurl: no file descriptors left", .enabled(if: OwnProcess.isRunning("NoDescriptorsTests")))
struct NoDescriptorsTests {
    @Test("a dispatcher made without descriptors refuses every call as never sent; the next one works")
    func refusesAsNeverSent() async throws {
        try await withTestServer { server in
            let broken = try Self.withoutDescriptors { CurlDispatcher() }
            #expect(broken.socketBackend == nil)
            for _ in 0..<2 {
                let error = await runwayError { try await broken.dispatch(makeRequest(server.url("/json")), context: RequestContext()) }
                #expect(error?.code == .transport)
                #expect(error?.neverSent == true)
                #expect(error?.message.contains("no file descriptors") == true)
            }
            #expect(server.stats.requests(path: "/json") == 0)
            let working = CurlDispatcher()
            #expect(try await working.dispatch(makeRequest(server.url("/json")), context: RequestContext()).status == 200)
        }
    }

    /// Runs `body` while every descriptor the process may open is taken, then gives them back.
    static func withoutDescriptors<T>(_ body: () throws -> T) throws -> T {
        var saved = rlimit()
        try #require(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &saved) == 0)
        let highest = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { Int($0) }.max() ?? 0
        var lowered = saved
        lowered.rlim_cur = rlim_t(highest + 1)
        try #require(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &lowered) == 0)
        // The numbers below the highest that are free: taken too.
        var fillers: [Int32] = []
        // Given back however `body` ends.
        defer {
            for fd in fillers { close(fd) }
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &saved)
        }
        while true {
            let fd = open("/dev/null", O_RDONLY)
            if fd < 0 { break }
            fillers.append(fd)
        }
        return try body()
    }
}

/// Runs ``NoDescriptorsTests`` in a process of its own.
@Suite("libcurl: no file descriptors left, in a process of its own")
struct NoDescriptorsProcessTests {
    @Test("a dispatcher made without descriptors, tested in a process where nothing else runs")
    func inItsOwnProcess() async throws {
        try await OwnProcess.run("NoDescriptorsTests")
    }
}
#endif
