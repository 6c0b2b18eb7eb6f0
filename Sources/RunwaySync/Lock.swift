#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A non-recursive pthread mutex: the lock under ``Locked``, and for the rare state that
/// ``Locked``'s `sending` contract refuses (a weak reference to a non-`Sendable` delegate).
///
/// The mutex lives in memory of its own, allocated once: a pthread mutex must not move, and a
/// class's stored property gives no stable address. Foundation's `NSLock` is the same mutex;
/// this one spares every module that locks the Foundation import (see ARCHITECTURE.md).
package final class Lock: @unchecked Sendable {
    // @unchecked Sendable: the mutex is the synchronisation itself; `mutex` is set once in
    // `init`, and the memory it points to is changed only by the pthread functions.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    @inlinable
    package func lock() {
        let status = pthread_mutex_lock(mutex)
        assert(status == 0, "pthread_mutex_lock failed: \(status)")
    }

    @inlinable
    package func unlock() {
        let status = pthread_mutex_unlock(mutex)
        assert(status == 0, "pthread_mutex_unlock failed: \(status)")
    }

    /// Runs `body` holding the lock.
    @inlinable
    package func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
