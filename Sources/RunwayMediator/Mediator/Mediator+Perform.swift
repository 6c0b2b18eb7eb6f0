extension Mediator {
    /// Calls an action by name, from code inside the app (may reach every action).
    ///
    /// An unknown target or action goes to the fallback action when one is set, else throws
    /// `.notFound`. An error the action (or a route interceptor) throws reaches the caller as
    /// itself: a `RunwayError` from an API manager stays a `RunwayError`; the mediator's own
    /// failures are ``MediatorError``. A `CancellationError` becomes ``MediatorError`` `.cancelled`
    /// (with the `CancellationError` as its underlying error), as the pipeline makes it a
    /// `RunwayError` `.cancelled`.
    @discardableResult
    public func perform(
        target: String, action: String, parameters: MediatorParameters = [:], origin: CallOrigin = .local
    ) async throws -> any Sendable {
        let key = target.lowercased()
        guard let entry = storage.targets[key]?.actions[action] else {
            let unmatched = UnmatchedRequest(url: nil, target: key, action: action, parameters: parameters, origin: origin)
            return try await performFallback(unmatched)
        }
        let call = MediatorCall(target: key, action: action, parameters: parameters, origin: origin, tags: entry.tags, mediator: self)
        return try await run(call)
    }

    /// Calls an action by name and returns its result as `T` (`.unexpectedResult` otherwise).
    public func perform<T>(
        target: String, action: String, parameters: MediatorParameters = [:], origin: CallOrigin = .local,
        as type: T.Type
    ) async throws -> T {
        let result = try await perform(target: target, action: action, parameters: parameters, origin: origin)
        return try Self.cast(result, to: type, target: target, action: action)
    }

    /// Calls the action a URL resolves to; remote unless `origin` says otherwise.
    ///
    /// No match: the unmatched-URL handler runs first (a non-`nil` result ends the call), then
    /// the fallback action, else `.notFound`. Throws `.malformedURL` for bad input and
    /// `.remoteCallForbidden` when a remote URL only matches local-only actions.
    ///
    /// The rule is ``resolve(_:origin:)``'s: the query is read only once a route matches. A URL
    /// that matches no route is unmatched whatever its query holds (`app://nowhere/x?q=%ZZ` goes
    /// to the handler and the fallback, which get no parameters when the query cannot be read);
    /// a URL that matches a route but whose query cannot be read throws `.malformedURL`.
    ///
    /// A URL with user info, a port or an IP literal (`https://example.com:8443/x`,
    /// `https://[::1]/x`) is no mediator URL, so ``resolve(_:origin:)`` refuses it; it is still a
    /// well-formed URL that matches no route, so `perform` hands it to the unmatched-URL handler
    /// and the fallback like any other (its ``UnmatchedRequest/target`` is the host alone).
    @discardableResult
    public func perform(url: String, origin: CallOrigin = .remote) async throws -> any Sendable {
        let match: RouteMatch?
        do {
            match = try resolve(url, origin: origin)
        } catch let error as MediatorError where error.code == .malformedURL {
            guard let unmatched = foreignUnmatchedRequest(url: url, origin: origin) else { throw error }
            return try await performUnmatched(unmatched, url: url)
        }
        guard let match else {
            return try await performUnmatched(try unmatchedRequest(url: url, origin: origin), url: url)
        }
        let call = MediatorCall(
            target: match.target, action: match.action, parameters: match.parameters, origin: origin, url: url,
            pattern: match.pattern, tags: match.entry.tags, mediator: self)
        return try await run(call)
    }

    /// Calls the action a URL resolves to and returns its result as `T`.
    public func perform<T>(url: String, origin: CallOrigin = .remote, as type: T.Type) async throws -> T {
        let result = try await perform(url: url, origin: origin)
        return try Self.cast(result, to: type, target: nil, action: nil)
    }

    /// Opens a URL (a deep link): like ``perform(url:origin:)``, for callers that want no result.
    public func open(url: String, origin: CallOrigin = .remote) async throws {
        _ = try await perform(url: url, origin: origin)
    }

    /// The unmatched-URL handler, then the fallback.
    private func performUnmatched(_ unmatched: UnmatchedRequest, url: String) async throws -> any Sendable {
        if let handler = storage.unmatchedHandler,
            let handled = try await Self.nested(url: url, target: nil, action: nil, { try await handler(unmatched) })
        {
            return handled
        }
        return try await performFallback(unmatched)
    }

    private func performFallback(_ unmatched: UnmatchedRequest) async throws -> any Sendable {
        guard let fallback = storage.fallback, let entry = storage.targets[fallback.target]?.actions[fallback.action] else {
            throw MediatorError(
                .notFound, "nothing handles \(unmatched)", url: unmatched.url, target: unmatched.target, action: unmatched.action)
        }
        let call = MediatorCall(
            target: fallback.target, action: fallback.action, parameters: unmatched.parameters, origin: unmatched.origin,
            url: unmatched.url, tags: entry.tags, unmatched: unmatched, mediator: self)
        return try await run(call)
    }

    /// Runs a call through the route interceptors and its action.
    private func run(_ call: MediatorCall) async throws -> any Sendable {
        try await Self.nested(url: call.url, target: call.target, action: call.action) { try await storage.chain(call) }
    }

    /// How deeply calls may nest: an action, a route interceptor or the unmatched-URL handler that
    /// calls the mediator in turn is one level deeper. Past it the call throws
    /// `.callDepthExceeded` instead of looping until memory runs out.
    public static let maxCallDepth = 64

    /// How many calls through the mediator the current task is inside.
    @TaskLocal static var callDepth = 0

    /// Runs `body` one call deeper (`.callDepthExceeded` past ``maxCallDepth``), turning a
    /// `CancellationError` into `.cancelled`; other errors pass as they are.
    private static func nested<T>(
        url: String?, target: String?, action: String?, _ body: () async throws -> T
    ) async throws -> T {
        let depth = callDepth + 1
        guard depth <= maxCallDepth else {
            throw MediatorError(
                .callDepthExceeded,
                "calls through the mediator nest more than \(maxCallDepth) deep: an action, a route interceptor or the "
                    + "unmatched-URL handler calls the mediator in a loop", url: url, target: target, action: action)
        }
        do {
            return try await $callDepth.withValue(depth) { try await body() }
        } catch let error as CancellationError {
            throw MediatorError(.cancelled, "the call was cancelled", url: url, target: target, action: action, underlying: error)
        }
    }

    private static func cast<T>(_ value: any Sendable, to type: T.Type, target: String?, action: String?) throws -> T {
        guard let typed = value as? T else {
            throw MediatorError(
                .unexpectedResult, "the action returned \(Swift.type(of: value)), not \(T.self)", target: target, action: action)
        }
        return typed
    }

    /// The last stage of the chain: find the action, check the origin again, run it.
    static func invoke(_ call: MediatorCall, targets: [String: TargetRecord], cache: TargetCache) async throws -> any Sendable {
        let key = call.target.lowercased()
        guard let record = targets[key], let entry = record.actions[call.action] else {
            throw MediatorError(
                .notFound, "no action \(call.target)/\(call.action)", url: call.url, target: call.target, action: call.action)
        }
        guard entry.access.allows(call.origin) else {
            throw MediatorError(
                .remoteCallForbidden, "a remote call may not reach local-only action \(key)/\(call.action)", url: call.url,
                target: key, action: call.action)
        }
        let instance = record.keeps ? cache.instance(named: key, make: record.make) : record.make()
        // The action's own errors go to the caller as they are (a manager's RunwayError).
        return try await entry.handler(instance, call)
    }
}
