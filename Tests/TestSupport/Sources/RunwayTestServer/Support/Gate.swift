import Foundation

/// A latch for tests: tasks that `wait()` are held until `open()`, and pass at once after it.
///
/// ```swift
/// let gate = Gate()
/// router.get("/held") { _, _ in await gate.wait(); return "done" }
/// // ... observe the call in flight ...
/// gate.open()
/// ```
/// A stub standing in for a slow server holds its calls with ``waitUnlessCancelled()`` instead,
/// so a call that is cancelled meanwhile ends at once, as it would at a real dispatcher.
public final class Gate: Sendable {
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false thread-sanitizer report on Linux.
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var isOpen = false
    // Guarded by `lock`.
    nonisolated(unsafe) private var waiters: [CheckedContinuation<Void, Never>] = []
    // Guarded by `lock`: the waiters of `waitUnlessCancelled()`, by ticket.
    nonisolated(unsafe) private var cancellableWaiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    // Guarded by `lock`.
    nonisolated(unsafe) private var lastTicket: UInt64 = 0

    public init() {}

    /// Whether ``open()`` has been called.
    public var isOpened: Bool { lock.withLock { isOpen } }

    /// Lets every waiting task go, and every later one pass.
    public func open() {
        let (waiting, cancellable): ([CheckedContinuation<Void, Never>], [CheckedContinuation<Void, any Error>]) = lock.withLock {
            isOpen = true
            defer {
                waiters = []
                cancellableWaiters = [:]
            }
            return (waiters, Array(cancellableWaiters.values))
        }
        for waiter in waiting { waiter.resume() }
        for waiter in cancellable { waiter.resume() }
    }

    /// Opens the gate after `delay`, unless the returned task is cancelled first; the task's
    /// value says whether it did. A safety net for a test that checks something happens while the
    /// gate is still closed, or that opens it itself once something has happened: code that
    /// wrongly waits for the gate then makes the test fail (``isOpened`` is true by the time it
    /// gets past, the task's value is `true`) instead of hanging it. Give it a delay no run needs.
    public func open(after delay: Duration) -> Task<Bool, Never> {
        Task {
            guard (try? await Task.sleep(for: delay)) != nil, !isOpened else { return false }
            open()
            return true
        }
    }

    /// Returns once the gate is open.
    public func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready: Bool = lock.withLock {
                if isOpen { return true }
                waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Returns once the gate is open; throws `CancellationError` as soon as the task is cancelled.
    public func waitUnlessCancelled() async throws {
        let ticket: UInt64 = lock.withLock {
            lastTicket += 1
            return lastTicket
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // A cancellation sets the task's flag before it runs the handler below, so one that
                // came before this registration is seen here, and one after finds the waiter.
                let outcome: Result<Void, any Error>? = lock.withLock {
                    if isOpen { return .success(()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    cancellableWaiters[ticket] = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = lock.withLock { cancellableWaiters.removeValue(forKey: ticket) }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
