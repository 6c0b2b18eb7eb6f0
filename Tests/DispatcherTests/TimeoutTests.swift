import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

/// Total and connect timeouts.
extension DispatcherSuite {
    @Test("the total timeout stops a request that waits for headers", arguments: DispatcherUnderTest.all)
    func totalTimeoutBeforeHeaders(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let request = makeRequest(server.url("/delay?ms=20000")) { $0.timeout = .milliseconds(300) }
            let start = ContinuousClock.now
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error?.code == .timeout)
            // Well under the server's 20 s, with room for a loaded machine.
            #expect(ContinuousClock.now - start < .seconds(10))
        }
    }

    @Test("the total timeout stops a slow body, and the server sees the abort", arguments: DispatcherUnderTest.all)
    func totalTimeoutDuringBody(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let request = makeRequest(server.url("/slow?ms=20000")) { $0.timeout = .milliseconds(500) }
            let start = ContinuousClock.now
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error?.code == .timeout)
            // Well under the server's 20 s, with room for a loaded machine.
            #expect(ContinuousClock.now - start < .seconds(10))
            #expect(await server.waitForAbort(timeout: .seconds(10)))
        }
    }

    @Test("the total timeout bounds a connect that never completes", arguments: DispatcherUnderTest.all)
    func totalTimeoutDuringConnect(_ dut: DispatcherUnderTest) async throws {
        let blackhole = try BlackholeListener.start()
        let request = makeRequest(blackhole.url("/json")) {
            $0.connectTimeout = .seconds(30)
            $0.timeout = .milliseconds(500)
        }
        let start = ContinuousClock.now
        let error = await runwayError { try await dut.send(dut.make(), request) }
        #expect(error?.code == .timeout)
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test("the connect timeout fires before the total timeout", arguments: DispatcherUnderTest.all(supporting: .connectTimeout))
    func connectTimeout(_ dut: DispatcherUnderTest) async throws {
        let blackhole = try BlackholeListener.start()
        let request = makeRequest(blackhole.url("/json")) {
            $0.connectTimeout = .milliseconds(300)
            $0.timeout = .seconds(30)
        }
        let start = ContinuousClock.now
        let error = await runwayError { try await dut.send(dut.make(), request) }
        #expect(error?.code == .timeout)
        #expect(ContinuousClock.now - start < .seconds(10))
    }
}
