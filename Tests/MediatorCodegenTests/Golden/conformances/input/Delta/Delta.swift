import RunwayMediator

/// Conformance written as a protocol composition.
public struct DeltaTarget: MediatorTarget & Sendable {
    public static let name = "delta"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<DeltaTarget>) {
        actions.action("show", access: .remote) { _, _ in "delta" }
    }
}

/// Conformance through a typealias (declared in another file of the module).
public struct DeltaTwoTarget: Routable {
    public static let name = "delta2"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<DeltaTwoTarget>) {
        actions.action("show", access: .remote) { _, _ in "delta2" }
    }
}

/// Through a typealias of a composition, with the conformance in an extension.
public struct DeltaThree {
    public init() {}
}

extension DeltaThree: Equatable, SendableRoutable {
    public static let name = "delta3"
    public static func declareActions(_ actions: inout MediatorActions<DeltaThree>) {}
}

/// Not a target: a composition without MediatorTarget.
public struct DeltaValue: Sendable & Equatable {}
