import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

/// Task cancellation reaches the server.
extension DispatcherSuite {
    @Test("cancelling the task aborts the transfer and the server sees it", arguments: DispatcherUnderTest.all)
    func cancellation(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let request = makeRequest(server.url("/slow?ms=30000"))
            let call = Task { try await dut.send(dispatcher, request) }
            #expect(await server.stats.wait(timeout: .seconds(20)) { $0.requests(path: "/slow") == 1 })
            try await Task.sleep(for: .milliseconds(100))
            let start = ContinuousClock.now
            call.cancel()
            let error = await runwayError { try await call.value }
            #expect(error?.code == .cancelled)
            #expect(ContinuousClock.now - start < .seconds(10))
            #expect(await server.waitForAbort(timeout: .seconds(10)))
            #expect(server.stats.aborts(path: "/slow") == 1)
        }
    }

    @Test("a task cancelled before dispatch sends nothing", arguments: DispatcherUnderTest.all)
    func cancelledBeforeStart(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let request = makeRequest(server.url("/json"))
            let call = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await dut.send(dispatcher, request)
            }
            let error = await runwayError { try await call.value }
            #expect(error?.code == .cancelled)
            try await Task.sleep(for: .milliseconds(100))
            #expect(server.stats.totalRequests == 0)
        }
    }
}
