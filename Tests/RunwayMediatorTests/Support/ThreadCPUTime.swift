#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The processor time the current thread spent running `body`, synchronous work on one thread.
///
/// For bounds on how much work something does (a linear parse against a quadratic one): unlike
/// the wall clock, it does not count the time the thread waited for a core while the rest of the
/// suite ran in parallel, so a bound on it holds on a busy machine and still fails when the work
/// grows.
func threadCPUTime<T>(_ body: () throws -> T) rethrows -> (result: T, time: Duration) {
    func now() -> Duration {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
    }
    let start = now()
    let result = try body()
    return (result, now() - start)
}
