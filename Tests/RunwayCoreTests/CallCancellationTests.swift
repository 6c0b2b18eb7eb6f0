import Foundation
import Runway
import RunwayTesting
import Testing

/// A call's cancellation apart from its task's (what an API manager uses for calls that run in
/// the caller's task): the chain and the dispatchers observe it, the task stays as it was.
@Suite("CallCancellation")
struct CallCancellationTests {
    let url = URL(string: "https://api.example.test/items")!

    @Test func handlersRunOnceAndAHandlerRegisteredLateRunsAtOnce() async {
        let cancellation = CallCancellation()
        let runs = LockedCount()
        let entered = LockedCount()
        let context = RequestContext(cancellation: cancellation)
        let task = Task {
            await context.withCancellationHandler {
                entered.increment()
                await waitUntil { runs.value == 1 }
            } onCancel: {
                runs.increment()
            }
        }
        await waitUntil { entered.value == 1 }
        cancellation.cancel()
        cancellation.cancel()
        await task.value
        #expect(runs.value == 1)
        #expect(cancellation.isCancelled)
        #expect(context.isCancelled)
        await context.withCancellationHandler {} onCancel: { runs.increment() }
        #expect(runs.value == 2)
        #expect(throws: RunwayError.self) { try context.checkCancellation() }
    }

    @Test func aCancelledCallIsNotDispatchedAndItsTaskIsNotCancelled() async throws {
        let dispatcher = StubDispatcher(status: 200)
        let pipeline = Pipeline(dispatcher: dispatcher) { RecordingInterceptor(name: "a") }
        let cancellation = CallCancellation()
        cancellation.cancel()
        let error = await #expect(throws: RunwayError.self) {
            try await pipeline.send(Request(url: url), context: RequestContext(cancellation: cancellation))
        }
        #expect(error?.code == .cancelled)
        #expect(dispatcher.requests.isEmpty)
        #expect(!Task.isCancelled)
    }

    @Test func cancellingTheCallCancelsAStubHandlerInFlight() async throws {
        let entered = LockedCount()
        let dispatcher = StubDispatcher { _ in
            entered.increment()
            try await Task.sleep(for: .seconds(30))
            return Response(status: 200)
        }
        let pipeline = Pipeline(interceptors: [], dispatcher: dispatcher)
        let cancellation = CallCancellation()
        let call = Task { try await pipeline.send(Request(url: url), context: RequestContext(cancellation: cancellation)) }
        await waitUntil { entered.value == 1 }
        let started = ContinuousClock.now
        cancellation.cancel()
        let error = await #expect(throws: RunwayError.self) { try await call.value }
        #expect(error?.code == .cancelled)
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test func cancellingTheCallStopsARetryBackoffAtOnce() async throws {
        let attempts = LockedCount()
        let dispatcher = StubDispatcher { _ in
            attempts.increment()
            return Response(status: 503)
        }
        let policy = try RetryPolicy(maxAttempts: 3, initialBackoff: .seconds(30), maxBackoff: .seconds(30), jitter: 0)
        let pipeline = Pipeline(interceptors: [RetryInterceptor(policy: policy)], dispatcher: dispatcher)
        let cancellation = CallCancellation()
        let call = Task { try await pipeline.send(Request(url: url), context: RequestContext(cancellation: cancellation)) }
        await waitUntil { attempts.value == 1 }
        let started = ContinuousClock.now
        cancellation.cancel()
        let error = await #expect(throws: RunwayError.self) { try await call.value }
        #expect(error?.code == .cancelled)
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(attempts.value == 1)
    }
}

private final class LockedCount: Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}

/// Polls `condition` every millisecond, for at most 10 s.
private func waitUntil(_ condition: @Sendable () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition(), ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(1))
    }
}
