import RunwayMediator

/// A refinement of the refinement (read before the one it refines).
public protocol ModalScreenTarget: Sendable, ScreenTarget {}

/// A module-wide refinement, as a team might write.
public protocol ScreenTarget: MediatorTarget {}

public protocol ScreenLike {}

public struct EpsTarget: ScreenTarget {
    public static let name = "eps"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<EpsTarget>) {
        actions.action("show", access: .remote) { _, _ in "eps" }
    }
}

public final class ModalTarget: ModalScreenTarget {
    public static let name = "modal"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<ModalTarget>) {}
}

/// Not a target: its protocol does not refine MediatorTarget.
public struct EpsLookalike: ScreenLike {}

/// A refinement written as a requirement on Self.
public protocol FlowTarget where Self: MediatorTarget {}

public struct FlowStep: FlowTarget {
    public static let name = "flow"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<FlowStep>) {}
}
