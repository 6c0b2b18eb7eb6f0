#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A lock with a pthread condition variable: a thread holding the lock can ``wait()`` until
/// another one, holding it too, calls ``signal()``. Foundation's `NSCondition` without Foundation;
/// pthread rather than `Synchronization` for the reason ``Locked`` gives.
///
/// ```swift
/// condition.lock()
/// while queue.isEmpty { condition.wait() }   // the lock is released while waiting
/// let work = queue.removeFirst()
/// condition.unlock()
/// ```
/// Waiting can wake without a signal (the system allows it), so always wait in a loop on the
/// state the signal announces.
package final class Condition: @unchecked Sendable {
    // @unchecked Sendable: `mutex` and `variable` are set once in `init`; the memory behind
    // them is changed only by the pthread functions, which are the synchronisation itself.
    private let mutex = Lock()
    private let variable: UnsafeMutablePointer<pthread_cond_t>

    package init() {
        // Memory of its own, as the lock's mutex: a condition variable must not move.
        variable = .allocate(capacity: 1)
        variable.initialize(to: pthread_cond_t())
        let status = pthread_cond_init(variable, nil)
        precondition(status == 0, "pthread_cond_init failed: \(status)")
    }

    deinit {
        pthread_cond_destroy(variable)
        variable.deinitialize(count: 1)
        variable.deallocate()
    }

    /// Takes the lock.
    package func lock() {
        mutex.lock()
    }

    /// Releases the lock.
    package func unlock() {
        mutex.unlock()
    }

    /// Releases the lock, sleeps until signalled, and takes the lock again; only while holding it.
    package func wait() {
        let status = pthread_cond_wait(variable, mutex.mutex)
        assert(status == 0, "pthread_cond_wait failed: \(status)")
    }

    /// Wakes one thread waiting in ``wait()``, if any.
    package func signal() {
        pthread_cond_signal(variable)
    }

    /// Wakes every thread waiting in ``wait()``.
    package func broadcast() {
        pthread_cond_broadcast(variable)
    }

    /// Runs `body` holding the lock.
    package func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
