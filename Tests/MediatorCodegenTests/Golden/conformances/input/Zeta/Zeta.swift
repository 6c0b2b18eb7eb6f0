import Eps
import RunwayMediator

/// `ScreenTarget` is Eps's, declared in another module: not followed, so not found (Modules.md
/// says so, and how to have it registered).
public struct ZetaTarget: ScreenTarget {
    public static let name = "zeta"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<ZetaTarget>) {}
}
