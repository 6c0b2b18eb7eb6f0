import RunwayCore
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A first-in, first-out async lock: one page load at a time, in call order. A task cancelled
/// while it waits for its turn leaves the queue at once, without the turn.
final class PageGate: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var busy = false
        var nextID: UInt64 = 0
        var waiters: [Waiter] = []
    }

    private let state = Locked(State())

    /// Waits for the turn. Returns `false`, without the turn, when the waiting task is
    /// cancelled first (or was already); the caller then must not ``release()``.
    func acquire() async -> Bool {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID &+= 1 }
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                // The cancelled flag is set before the handler runs, and both sides hold the
                // lock: either the task is seen cancelled here, or the handler finds its waiter.
                let granted = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if state.busy {
                        state.waiters.append(Waiter(id: id, continuation: continuation))
                        return nil
                    }
                    state.busy = true
                    return true
                }
                if let granted { continuation.resume(returning: granted) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0) }
            }
            waiter?.continuation.resume(returning: false)
        }
    }

    /// How many page loads wait for their turn.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Hands the turn to the next waiter.
    func release() {
        let next = state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                state.busy = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.continuation.resume(returning: true)
    }
}
