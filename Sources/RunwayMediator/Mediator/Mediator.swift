/// The frozen registry of targets, actions and routes, and the way to call them.
///
/// Built once at start-up by a ``Builder`` and immutable afterwards (`Sendable`, cheap to copy:
/// copies share one table and one target cache). Callers reach other modules' actions
///
/// - by name, locally: ``perform(target:action:parameters:origin:)`` (may reach every action);
/// - by URL: ``perform(url:origin:)`` / ``open(url:origin:)``, remote unless told otherwise
///   (may reach only actions declared ``ActionAccess/remote``).
///
/// ```swift
/// var builder = Mediator.Builder(defaultScheme: "app")
/// try builder.register(ListingTarget.self)
/// builder.add(.loginGate(loginTarget: "account", loginAction: "login") { await session.isLoggedIn })
/// let mediator = try builder.build()
/// let screen = try await mediator.perform(url: "app://listing/42?ref=push")
/// ```
public struct Mediator: Sendable {
    /// The rest of the chain, as handed to a ``RouteInterceptor``.
    public typealias Next = @Sendable (MediatorCall) async throws -> any Sendable

    let storage: Storage

    /// Everything the mediator holds; immutable but for the target cache and lifecycle state,
    /// which are locked classes of their own.
    final class Storage: Sendable {
        let targets: [String: TargetRecord]
        let trie: RouteTrie
        let converters: [String: RouteConverter]
        let chain: Next
        let interceptorNames: [String]
        let fallback: (target: String, action: String)?
        let unmatchedHandler: (@Sendable (UnmatchedRequest) async throws -> (any Sendable)?)?
        let urlOptions: MediatorURLOptions
        let defaultScheme: String
        let implicitRoutes: Bool
        let modules: [any MediatorModule]
        let cache: TargetCache
        let lifecycle: LifecycleState

        init(
            targets: [String: TargetRecord], trie: RouteTrie, converters: [String: RouteConverter], chain: @escaping Next,
            interceptorNames: [String],
            fallback: (target: String, action: String)?,
            unmatchedHandler: (@Sendable (UnmatchedRequest) async throws -> (any Sendable)?)?,
            urlOptions: MediatorURLOptions, defaultScheme: String, implicitRoutes: Bool, modules: [any MediatorModule],
            cache: TargetCache
        ) {
            self.targets = targets
            self.trie = trie
            self.converters = converters
            self.chain = chain
            self.interceptorNames = interceptorNames
            self.fallback = fallback
            self.unmatchedHandler = unmatchedHandler
            self.urlOptions = urlOptions
            self.defaultScheme = defaultScheme
            self.implicitRoutes = implicitRoutes
            self.modules = modules
            self.cache = cache
            self.lifecycle = LifecycleState()
        }
    }

    /// A registered target: how to make it, whether to keep it, its actions.
    struct TargetRecord: Sendable {
        let name: String
        let typeName: String
        let source: String
        let keeps: Bool
        let make: @Sendable () -> any MediatorTarget
        let actions: [String: ActionEntry]
    }

    /// The names of the registered targets, sorted.
    public var targetNames: [String] { storage.targets.keys.sorted() }

    /// The names of the route interceptors, in chain order.
    public var interceptorNames: [String] { storage.interceptorNames }

    /// Every route: pattern, target, action, access, where it was declared; sorted by pattern.
    public var routes: [RouteInfo] {
        storage.trie.routes.map {
            RouteInfo(pattern: $0.pattern, target: $0.entry.target, action: $0.entry.name, access: $0.entry.access, source: $0.source)
        }.sorted { $0.pattern.description < $1.pattern.description }
    }

    /// Whether `target` declares `action`.
    public func hasAction(target: String, action: String) -> Bool {
        storage.targets[target.lowercased()]?.actions[action] != nil
    }

    /// Drops the kept instance of a ``TargetCaching/keep`` target; the next call makes a new one.
    /// - Returns: Whether an instance was kept.
    @discardableResult
    public func releaseCachedTarget(_ name: String) -> Bool {
        storage.cache.release(name.lowercased())
    }

    /// The names of targets with a kept instance, sorted.
    public var cachedTargetNames: [String] { storage.cache.cachedNames }
}

/// One row of the route table.
public struct RouteInfo: Sendable, CustomStringConvertible {
    /// The URL pattern.
    public let pattern: RoutePattern
    /// The target's name.
    public let target: String
    /// The action's name.
    public let action: String
    /// Who may call it.
    public let access: ActionAccess
    /// Where it was declared (`Module/File.swift:line`).
    public let source: String

    public var description: String { "\(pattern)  ->  \(target)/\(action)  [\(access)]  \(source)" }
}
