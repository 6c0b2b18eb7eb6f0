/// One call travelling through the route interceptors to an action.
///
/// Interceptors may read it, change it (a redirect changes ``target`` and ``action``) and pass
/// it on. The final stage checks ``origin`` against the action's ``ActionAccess`` again, so an
/// interceptor cannot carry a remote call into a local-only action by accident.
public struct MediatorCall: Sendable {
    /// The target's name (lowercased).
    public var target: String
    /// The action's name.
    public var action: String
    /// The parameters: path captures and query values for URL calls.
    public var parameters: MediatorParameters
    /// Where the call comes from.
    public var origin: CallOrigin
    /// The URL string, for URL calls.
    public var url: String?
    /// The pattern that matched, for URL calls.
    public var pattern: RoutePattern?
    /// The tags of the action being called (from its declaration).
    public var tags: Set<String>
    /// For a call to the fallback action: the request that found nothing.
    public var unmatched: UnmatchedRequest?
    /// The mediator making the call, so that an action can reach other modules in turn.
    public var mediator: Mediator?

    /// Creates a call (interceptors use this to redirect).
    public init(
        target: String, action: String, parameters: MediatorParameters = [:], origin: CallOrigin = .local,
        url: String? = nil, pattern: RoutePattern? = nil, tags: Set<String> = [], unmatched: UnmatchedRequest? = nil,
        mediator: Mediator? = nil
    ) {
        self.target = target
        self.action = action
        self.parameters = parameters
        self.origin = origin
        self.url = url
        self.pattern = pattern
        self.tags = tags
        self.unmatched = unmatched
        self.mediator = mediator
    }
}

/// A request that matched no action: what the unmatched-URL handler and the fallback get.
public struct UnmatchedRequest: Sendable, CustomStringConvertible {
    /// The URL string, when the request was a URL.
    public var url: String?
    /// The target asked for (the URL's host for URL requests).
    public var target: String?
    /// The action asked for, for local calls.
    public var action: String?
    /// The parameters of the original request (query values for URLs).
    public var parameters: MediatorParameters
    /// Where it came from.
    public var origin: CallOrigin

    public var description: String {
        url ?? "\(target ?? "?")/\(action ?? "?")"
    }
}

/// The result of resolving a URL: which action, with which typed parameters.
public struct RouteMatch: Sendable {
    /// The target's name.
    public let target: String
    /// The action's name.
    public let action: String
    /// Path captures (typed by their converters) followed by query values.
    public let parameters: MediatorParameters
    /// The pattern that matched.
    public let pattern: RoutePattern
    /// Who may call the matched action.
    public let access: ActionAccess
    /// The URL's fragment (after `#`), if any; it never takes part in matching.
    public let fragment: String?
    let entry: ActionEntry
}
