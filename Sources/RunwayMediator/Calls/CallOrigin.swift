/// Where a call comes from, which decides what it may reach.
///
/// `.local` calls (code inside the app: `perform(target:action:)`) may reach every action.
/// `.remote` calls (a URL from outside: a deep link, a push, a web page) may only reach actions
/// declared ``ActionAccess/remote``. URL calls are remote unless the caller says otherwise.
public struct CallOrigin: Hashable, Sendable, CustomStringConvertible {
    private enum Base: String, Hashable, Sendable { case local, remote }
    private let base: Base

    /// A call from code inside the app.
    public static let local = CallOrigin(base: .local)
    /// A call from outside the app (a URL).
    public static let remote = CallOrigin(base: .remote)

    public var description: String { base.rawValue }
}

/// Who may call an action.
///
/// The default for every action is ``localOnly``: remote calls are denied unless an action opts
/// in (CTMediator's `native` prefix, made explicit and default deny).
public struct ActionAccess: Hashable, Sendable, CustomStringConvertible {
    private enum Base: String, Hashable, Sendable {
        case localOnly = "local"
        case remote
    }
    private let base: Base

    /// Only code inside the app may call the action (the default).
    public static let localOnly = ActionAccess(base: .localOnly)
    /// URLs from outside may call the action too.
    public static let remote = ActionAccess(base: .remote)

    /// Whether a call from `origin` may reach an action with this access.
    public func allows(_ origin: CallOrigin) -> Bool {
        origin == .local || base == .remote
    }

    public var description: String { base.rawValue }
}
