/// A business module as the mediator sees it: it registers its targets and gets start-up events.
///
/// Order is defined and never depends on the order modules were added: dependencies first,
/// otherwise by name. ``Mediator/Builder/build()`` calls ``register(into:)`` in that order;
/// ``Mediator/start(configuration:)`` calls every ``configure(_:)`` in that order, then every
/// ``start(_:)`` in that order; ``Mediator/stop()`` calls ``stop()`` in reverse order.
public protocol MediatorModule: Sendable {
    /// The module's unique name.
    var name: String { get }
    /// Names of modules that must be configured and started before this one.
    var dependencies: [String] { get }
    /// Registers the module's targets, converters, interceptors. It may not add modules (the
    /// order is fixed by then): ``Mediator/Builder/build()`` throws `.invalidRegistration`.
    func register(into builder: inout Mediator.Builder) throws
    /// Receives the app's configuration (no other module is running yet).
    func configure(_ configuration: MediatorParameters) throws
    /// Starts; every module it depends on has started, and it may call the mediator.
    func start(_ mediator: Mediator) async throws
    /// Stops; modules that depend on it have stopped.
    func stop() async
}

extension MediatorModule {
    /// Default: no dependencies.
    public var dependencies: [String] { [] }
    /// Default: registers nothing.
    public func register(into builder: inout Mediator.Builder) throws {}
    /// Default: ignores the configuration.
    public func configure(_ configuration: MediatorParameters) throws {}
    /// Default: nothing to start.
    public func start(_ mediator: Mediator) async throws {}
    /// Default: nothing to stop.
    public func stop() async {}
}

/// Orders modules: dependencies first, ties by name (Kahn's algorithm over sorted names).
enum ModuleOrder {
    static func sorted(_ modules: [any MediatorModule]) throws -> [any MediatorModule] {
        var byName: [String: any MediatorModule] = [:]
        for module in modules {
            guard byName[module.name] == nil else {
                throw MediatorError(.invalidRegistration, "module '\(module.name)' is added twice")
            }
            byName[module.name] = module
        }
        for module in modules {
            for dependency in module.dependencies where byName[dependency] == nil {
                throw MediatorError(.invalidRegistration, "module '\(module.name)' depends on unknown module '\(dependency)'")
            }
        }
        var done: Set<String> = []
        var ordered: [any MediatorModule] = []
        while ordered.count < modules.count {
            let ready = byName.keys.sorted().filter { name in
                !done.contains(name) && (byName[name]?.dependencies.allSatisfy { done.contains($0) } ?? false)
            }
            guard let next = ready.first, let module = byName[next] else {
                let stuck = byName.keys.filter { !done.contains($0) }.sorted()
                throw MediatorError(.invalidRegistration, "modules depend on each other in a cycle: \(stuck.joined(separator: ", "))")
            }
            done.insert(next)
            ordered.append(module)
        }
        return ordered
    }
}
