/// Collects the actions a ``MediatorTarget`` declares in ``MediatorTarget/declareActions(_:)``.
public struct MediatorActions<Target: MediatorTarget> {
    /// A handler: the target instance and the call in, any value out (a screen, a service, `()`).
    public typealias Handler = @Sendable (Target, MediatorCall) async throws -> any Sendable

    var entries: [ActionEntry] = []
    var errors: [MediatorError] = []
    /// The name of the target being declared (lowercased).
    public let targetName: String

    init(targetName: String) { self.targetName = targetName.lowercased() }

    /// Declares an action.
    /// - Parameters:
    ///   - name: The action's name, unique within the target; also the path of its implicit
    ///     URL `scheme://target/name`.
    ///   - access: Who may call it; local-only unless you say `.remote`.
    ///   - routes: URL patterns that reach it, e.g. `"app://listing/<int:id>"`.
    ///   - tags: Labels for route interceptors (e.g. ``LoginGate/requiresLogin``).
    ///   - fileID: Where the action is declared, for error messages and `swift package routes`.
    ///   - line: The line of the declaration.
    ///   - handler: The work; may suspend and may throw.
    public mutating func action(
        _ name: String, access: ActionAccess = .localOnly, routes: [String] = [], tags: Set<String> = [],
        fileID: String = #fileID, line: Int = #line, _ handler: @escaping Handler
    ) {
        let source = "\(fileID):\(line)"
        var patterns: [RoutePattern] = []
        for route in routes {
            do { patterns.append(try RoutePattern(route)) } catch var error as MediatorError {
                error.target = targetName
                error.action = name
                error.sources = [source]
                errors.append(error)
            } catch {
                errors.append(MediatorError(.malformedPattern, "\(error)", target: targetName, action: name, sources: [source]))
            }
        }
        let targetType = Target.self
        entries.append(
            ActionEntry(
                target: targetName, name: name, access: access, tags: tags, patterns: patterns, source: source,
                handler: { instance, call in
                    guard let typed = instance as? Target else {
                        throw MediatorError(
                            .actionFailed, "target instance is \(type(of: instance)), not \(targetType)",
                            target: call.target, action: call.action)
                    }
                    return try await handler(typed, call)
                }))
    }
}

/// One declared action, type-erased and immutable.
final class ActionEntry: Sendable {
    let target: String
    let name: String
    let access: ActionAccess
    let tags: Set<String>
    let patterns: [RoutePattern]
    let source: String
    let handler: @Sendable (any MediatorTarget, MediatorCall) async throws -> any Sendable

    init(
        target: String, name: String, access: ActionAccess, tags: Set<String>, patterns: [RoutePattern], source: String,
        handler: @escaping @Sendable (any MediatorTarget, MediatorCall) async throws -> any Sendable
    ) {
        self.target = target
        self.name = name
        self.access = access
        self.tags = tags
        self.patterns = patterns
        self.source = source
        self.handler = handler
    }
}
