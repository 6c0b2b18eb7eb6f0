import Foundation
import Runway

/// A reachability source whose status the test sets, for driving a `ReachabilityMonitor`
/// through network changes without touching the machine's interfaces:
/// ```swift
/// let source = ScriptedReachabilitySource(.reachable)
/// let monitor = ReachabilityMonitor(source: source)
/// source.set(.unreachable)
/// monitor.refresh()          // publishes .unreachable to observers and streams
/// ```
public final class ScriptedReachabilitySource: ReachabilitySource {
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var value: ReachabilityStatus

    /// Creates a source that reports `status` until told otherwise.
    public init(_ status: ReachabilityStatus) {
        value = status
    }

    /// Sets what the next poll reports.
    public func set(_ status: ReachabilityStatus) {
        lock.withLock { value = status }
    }

    public func currentStatus() -> ReachabilityStatus {
        lock.withLock { value }
    }
}
