import RunwayMediator

let decoy = """
    #if NEVER
    """

public struct GammaTarget: MediatorTarget {
    public static let name = "gamma"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<GammaTarget>) {
        actions.action("show", access: .remote) { _, _ in "gamma" }
        #if DEBUG
        actions.action("inspect") { _, _ in "debug" }
        #endif
    }
}

#if os(Windows)
public struct WindowsOnlyTarget: MediatorTarget {
    public static let name = "winonly"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<WindowsOnlyTarget>) {}
}
#endif

#if DEBUG
public struct DebugTarget: MediatorTarget {
    public static let name = "debug"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<DebugTarget>) {}
}
#elseif canImport(Glibc)   &&  os(Linux)
public struct LinuxReleaseTarget: MediatorTarget {
    public static let name = "linux"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<LinuxReleaseTarget>) {}
}
#else
#if os(macOS)  // nested
public struct MacReleaseTarget: MediatorTarget {
    public static let name = "mac"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<MacReleaseTarget>) {}
}
#endif
#endif
