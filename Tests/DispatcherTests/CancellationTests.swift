import Foundation
import Runway
import RunwayCurl
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
            #expect(error?.neverSent != true, "it was sent: \(String(describing: error))")
            #expect(ContinuousClock.now - start < .seconds(60))
            #expect(await server.waitForAbort())
            #expect(server.stats.aborts(path: "/slow") == 1)
        }
    }

    @Test("a request cancelled while its connection is still being made says nothing was sent")
    func cancelledWhileConnecting() async throws {
        let blackhole = try BlackholeListener.start()
        let dispatcher = CurlDispatcher()
        let request = makeRequest(blackhole.url("/json")) { $0.connectTimeout = .seconds(300) }
        let call = Task { try await dispatcher.dispatch(request, context: RequestContext()) }
        try await Task.sleep(for: .milliseconds(300))
        call.cancel()
        let error = await runwayError { try await call.value }
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        #expect(error?.neverSent == true, "\(String(describing: error))")
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
