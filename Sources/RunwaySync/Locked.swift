/// State guarded by one lock: every read and write goes through ``withLock(_:)``.
///
/// The package's one locked-state primitive; fields that share a lock are grouped into one
/// `State` value. Keep the closure short and never call out of it (a continuation resumed, a
/// callback run): return what is needed and act on it after the lock is released. The lock is
/// not recursive: calling `withLock` on the same box from inside the closure deadlocks.
///
/// Why not `Synchronization.Mutex`: on Linux, `swift test --sanitize=thread` reports a false data
/// race on state guarded by a `Mutex` (it locks with a futex the sanitizer does not model as a
/// lock), so the thread sanitizer could not be run clean. ``Lock`` is a pthread mutex, which the
/// sanitizer understands (and, unlike `NSLock`, needs no Foundation).
package final class Locked<State>: @unchecked Sendable {
    // @unchecked Sendable: `state` is read and written only inside `withLock`, holding `lock`;
    // values go in and come out `sending`, so no unprotected reference to it escapes.
    @usableFromInline let lock = Lock()
    // Exclusivity is unchecked because the lock already guarantees it (a nested access would
    // deadlock on the lock first).
    @usableFromInline @exclusivity(unchecked) var state: State

    package init(_ initial: sending State) {
        state = initial
    }

    /// Runs `body` on the state while holding the lock; a thrown error leaves the state as
    /// `body` left it.
    @inlinable
    package func withLock<Result, Failure: Error>(
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
