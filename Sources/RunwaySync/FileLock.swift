#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Takes `flock`'s exclusive lock on `descriptor` without waiting for a holder that keeps it:
/// what keeps a second user of a file (a download's partial file, an action log), in this
/// process or another, from writing into it too.
///
/// A lock found held is tried again for up to a quarter of a second. A lock belongs to the open
/// file, and a child process that another thread is starting holds a copy of every descriptor
/// until it runs its program (which closes an `O_CLOEXEC` one): a file let go of a moment ago
/// can look held for that moment. A holder that really uses the file keeps it far longer. The
/// calling thread sleeps meanwhile, so call it where a short wait is acceptable (before a
/// transfer starts, when a logger opens), never per request.
/// - Returns: Whether the lock is taken; when it is not, `errno` says why (`EWOULDBLOCK`:
///   another holder).
package func lockExclusively(_ descriptor: Int32) -> Bool {
    var tries = 0
    while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
        guard errno == EWOULDBLOCK, tries < 50 else { return false }
        usleep(5_000)
        tries += 1
    }
    return true
}
