import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

/// Total and connect timeouts.
///
/// Each test sets one short timeout against a much longer wait (the server's five minutes, the
/// other timeout's five minutes, the kernel's two minutes of SYN retries to the black hole), and
/// bounds the call at one minute: a call ended by anything but the short timeout fails the bound,
/// and a loaded machine, where a task can wait many seconds for a thread, passes it with room to
/// spare.
extension DispatcherSuite {
    /// Well under every wait the timeouts below cut short.
    static let timeoutBound: Duration = .seconds(60)

    @Test("the total timeout stops a request that waits for headers", arguments: DispatcherUnderTest.all)
    func totalTimeoutBeforeHeaders(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let request = makeRequest(server.url("/delay?ms=300000")) { $0.timeout = .milliseconds(300) }
            let start = ContinuousClock.now
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error?.code == .timeout)
            #expect(ContinuousClock.now - start < Self.timeoutBound)
        }
    }

    @Test("the total timeout stops a slow body, and the server sees the abort", arguments: DispatcherUnderTest.all)
    func totalTimeoutDuringBody(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        // The server sees the abort only if its body had begun when the client gave up: a
        // loaded machine (the thread sanitizer) can start the handler after a short timeout,
        // and a server that never began a body has nothing to abort. So the timeout grows until
        // the body began first, each time against a server of its own.
        var bodyBegan = false
        for timeout in [Duration.milliseconds(500), .seconds(5), .seconds(60)] where !bodyBegan {
            try await withTestServer { server in
                let request = makeRequest(server.url("/slow?ms=300000")) { $0.timeout = timeout }
                let start = ContinuousClock.now
                let error = await runwayError { try await dut.send(dispatcher, request) }
                #expect(error?.code == .timeout)
                #expect(ContinuousClock.now - start < timeout + Self.timeoutBound)
                bodyBegan = server.stats.bodiesStarted(path: "/slow") > 0
                if bodyBegan { #expect(await server.waitForAbort()) }
            }
        }
        #expect(bodyBegan, "the server began no body within even the longest timeout")
    }

    /// A request like the last one on a handle but for its timeout keeps the handle's options
    /// (libcurl), and must still get its own timeout: a retry's attempts differ only by it.
    @Test("each request on a kept handle has its own total timeout", arguments: DispatcherUnderTest.all)
    func eachRequestHasItsOwnTimeout(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let long = makeRequest(server.url("/delay?ms=0")) { $0.timeout = .seconds(60) }
            let first = try await dut.send(dispatcher, long)
            #expect(first.status == 200)
            let short = makeRequest(server.url("/delay?ms=300000")) { $0.timeout = .milliseconds(300) }
            let start = ContinuousClock.now
            #expect(await runwayError { try await dut.send(dispatcher, short) }?.code == .timeout)
            #expect(ContinuousClock.now - start < Self.timeoutBound)
            let none = makeRequest(server.url("/delay?ms=1000")) { $0.timeout = nil }
            let last = try await dut.send(dispatcher, none)
            #expect(last.status == 200)
        }
    }

    /// `.seconds(.max)` wrapped round libcurl's deadline in nanoseconds to one already passed (the
    /// call failed at once with `.timeout`), and trapped the URLSession dispatcher's timer.
    @Test("a total timeout of centuries is a long one, not one already passed", arguments: DispatcherUnderTest.all)
    func aTimeoutOfCenturiesIsALongOne(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            // The second wrapped to 0.29 s; the answer comes after a second.
            for timeout in [Duration.seconds(Int64.max), .seconds(18_446_744_074)] {
                let request = makeRequest(server.url("/delay?ms=1000")) { $0.timeout = timeout }
                let response = try await dut.send(dispatcher, request)
                #expect(response.status == 200, "timeout \(timeout)")
            }
        }
    }

    @Test("the total timeout bounds a connect that never completes", arguments: DispatcherUnderTest.all)
    func totalTimeoutDuringConnect(_ dut: DispatcherUnderTest) async throws {
        let blackhole = try BlackholeListener.start()
        let request = makeRequest(blackhole.url("/json")) {
            $0.connectTimeout = .seconds(300)
            $0.timeout = .milliseconds(500)
        }
        let start = ContinuousClock.now
        let error = await runwayError { try await dut.send(dut.make(), request) }
        #expect(error?.code == .timeout)
        #expect(ContinuousClock.now - start < Self.timeoutBound)
    }

    @Test("the connect timeout fires before the total timeout", arguments: DispatcherUnderTest.all(supporting: .connectTimeout))
    func connectTimeout(_ dut: DispatcherUnderTest) async throws {
        let blackhole = try BlackholeListener.start()
        let request = makeRequest(blackhole.url("/json")) {
            $0.connectTimeout = .milliseconds(300)
            $0.timeout = .seconds(300)
        }
        let start = ContinuousClock.now
        let error = await runwayError { try await dut.send(dut.make(), request) }
        #expect(error?.code == .timeout)
        #expect(ContinuousClock.now - start < Self.timeoutBound)
    }
}
