import Foundation

/// A latch for tests: tasks that `wait()` are held until `open()`, and pass at once after it.
///
/// ```swift
/// let gate = Gate()
/// router.get("/held") { _, _ in await gate.wait(); return "done" }
/// // ... observe the call in flight ...
/// gate.open()
/// ```
public final class Gate: Sendable {
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false thread-sanitizer report on Linux.
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var isOpen = false
    // Guarded by `lock`.
    nonisolated(unsafe) private var waiters: [CheckedContinuation<Void, Never>] = []

    public init() {}

    /// Lets every waiting task go, and every later one pass.
    public func open() {
        let waiting: [CheckedContinuation<Void, Never>] = lock.withLock {
            isOpen = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
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
}
