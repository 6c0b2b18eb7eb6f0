import Runway
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A reachability source whose status the test sets, for driving a `ReachabilityMonitor`
/// through network changes without touching the machine's interfaces:
/// ```swift
/// let source = ScriptedReachabilitySource(.reachable)
/// let monitor = ReachabilityMonitor(source: source)
/// source.set(.unreachable)
/// monitor.refresh()          // publishes .unreachable to observers and streams
/// ```
public final class ScriptedReachabilitySource: ReachabilitySource {
    private let value: Locked<ReachabilityStatus>

    /// Creates a source that reports `status` until told otherwise.
    public init(_ status: ReachabilityStatus) {
        value = Locked(status)
    }

    /// Sets what the next poll reports.
    public func set(_ status: ReachabilityStatus) {
        value.withLock { $0 = status }
    }

    public func currentStatus() -> ReachabilityStatus {
        value.withLock { $0 }
    }
}
