import Foundation
import RunwayCore

/// A first-in, first-out async lock: one page load at a time, in call order.
final class PageGate: Sendable {
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false thread-sanitizer report on Linux.
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var busy = false
    // Guarded by `lock`.
    nonisolated(unsafe) private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Waits for the turn.
    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = lock.withLock { () -> Bool in
                if busy {
                    waiters.append(continuation)
                    return false
                }
                busy = true
                return true
            }
            if granted { continuation.resume() }
        }
    }

    /// Hands the turn to the next waiter.
    func release() {
        let next = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            if waiters.isEmpty {
                busy = false
                return nil
            }
            return waiters.removeFirst()
        }
        next?.resume()
    }
}
