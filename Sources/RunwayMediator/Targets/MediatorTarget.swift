/// A named group of actions that a business module offers to the rest of the app.
///
/// Business modules never import each other; they declare targets, and callers reach them
/// through the ``Mediator`` by name (`perform(target:action:)`) or by URL. No reflection:
/// targets are registered (by hand or by the code the `MediatorRegistrationPlugin` generates
/// from every public type that conforms to this protocol).
/// ```swift
/// public struct ListingTarget: MediatorTarget {
///     public static let name = "listing"
///     public init() {}
///     public static func declareActions(_ actions: inout MediatorActions<Self>) {
///         actions.action("detail", access: .remote, routes: ["app://listing/<int:id>"]) { target, call in
///             ListingDetail(id: try call.parameters.int("id"))
///         }
///         actions.action("prefetch") { target, call in  // local-only by default
///             await target.cache.prefetch()
///         }
///     }
/// }
/// ```
public protocol MediatorTarget: Sendable {
    /// The target's name: the host of its URLs (`app://listing/...`). Letters, digits, `-`, `_`, `.`.
    static var name: String { get }
    /// Whether the mediator keeps the instance between calls; defaults to ``TargetCaching/perCall``.
    static var caching: TargetCaching { get }
    /// Creates an instance for a call (or once, when cached).
    init()
    /// Declares the target's actions, their access and their URL patterns.
    static func declareActions(_ actions: inout MediatorActions<Self>)
}

extension MediatorTarget {
    /// Default: a new instance for every call.
    public static var caching: TargetCaching { .perCall }
}

/// Whether the mediator keeps a target instance between calls (CTMediator's target cache).
public struct TargetCaching: Hashable, Sendable {
    private enum Base: Hashable, Sendable { case perCall, keep }
    private let base: Base
    /// A new instance for every call.
    public static let perCall = TargetCaching(base: .perCall)
    /// One instance, created on first use and kept until ``Mediator/releaseCachedTarget(_:)``.
    public static let keep = TargetCaching(base: .keep)
    var keeps: Bool { base == .keep }
}

/// The instance behind targets registered with ``Mediator/Builder/register(targetNamed:source:fileID:line:_:)``:
/// no state, so its actions are plain closures.
public struct AdHocTarget: MediatorTarget {
    /// Unused: ad-hoc targets are registered under the name given at registration.
    public static var name: String { "ad-hoc" }
    /// Creates the (stateless) instance.
    public init() {}
    /// Declares nothing: ad-hoc actions are declared in the registration closure.
    public static func declareActions(_ actions: inout MediatorActions<AdHocTarget>) {}
}
