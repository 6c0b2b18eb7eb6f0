import RunwayMediator

// One type, declared once per branch: registered in each.
#if os(iOS)
public struct PlatformTarget: MediatorTarget {
    public static let name = "platform"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<PlatformTarget>) {
        actions.action("show", access: .remote, routes: ["app://platform/<int:id>"]) { _, _ in "touch" }
    }
}
#else
public enum PlatformTarget: MediatorTarget {
    case pointer
    public static var name: String { "platform" }
    public init() { self = .pointer }
    public static func declareActions(_ actions: inout MediatorActions<PlatformTarget>) {
        actions.action("show", access: .remote, routes: ["app://platform/<int:id>"]) { _, _ in "pointer" }
    }
}
#endif

// Conforms only when FEATURE_X is set: the extension's condition.
public struct LateTarget {
    public init() {}
}

#if FEATURE_X
extension LateTarget: MediatorTarget {
    public static let name = "late"
    public static func declareActions(_ actions: inout MediatorActions<LateTarget>) {}
}
#endif
