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
            // Five minutes of body: a call that ended any other way than by the cancellation
            // would end long after the bound below.
            let request = makeRequest(server.url("/slow?ms=300000"))
            let call = Task { try await dut.send(dispatcher, request) }
            #expect(await server.stats.wait { $0.requests(path: "/slow") == 1 })
            let start = ContinuousClock.now
            call.cancel()
            let error = await runwayError { try await call.value }
            #expect(error?.code == .cancelled)
            #expect(ContinuousClock.now - start < .seconds(60))
            #expect(await server.waitForAbort())
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
            // A request sent after it through the same dispatcher comes back: had the cancelled
            // one gone out, the server would have it by then.
            let later = try await dut.send(dispatcher, makeRequest(server.url("/echo")))
            #expect(later.status == 200)
            #expect(server.stats.requests(path: "/json") == 0)
            #expect(server.stats.totalRequests == 1)
        }
    }
}
