import RunwayCore

/// Whether the network can be reached: the one cross-layer event the design allows to be
/// broadcast (one-to-many, opt-in).
public struct ReachabilityStatus: Hashable, Sendable, CustomStringConvertible {
    private enum Base: String, Hashable, Sendable {
        case unknown, reachable, unreachable
    }

    private let base: Base

    /// Not determined yet.
    public static let unknown = ReachabilityStatus(base: .unknown)
    /// A route out of this machine exists.
    public static let reachable = ReachabilityStatus(base: .reachable)
    /// No route out of this machine exists: calls fail fast with `.noNetwork`.
    public static let unreachable = ReachabilityStatus(base: .unreachable)

    public var description: String { base.rawValue }
}

/// Tells a ``ReachabilityMonitor`` the current status when it polls.
public protocol ReachabilitySource: Sendable {
    /// The status now; called from the monitor's polling task.
    func currentStatus() -> ReachabilityStatus
}
