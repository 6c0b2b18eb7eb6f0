/// A step in the mediator's call chain: one `Sendable` async method that receives `next`.
///
/// The same shape as the network layer's `Interceptor`. An interceptor may
/// - change the call and pass it on (`try await next(redirected)`: a login gate),
/// - answer itself and never call `next` (a cached screen),
/// - observe the call and its result (analytics),
/// - throw, which ends the call.
///
/// ## Order
/// Interceptors run in the order they were added to the ``Mediator/Builder``: **calls go from the
/// first to the last; results come back from the last to the first.** The action comes after the
/// last interceptor. Every call goes through the chain: local calls, URL calls, fallback calls.
public protocol RouteInterceptor: Sendable {
    /// The name used in errors; defaults to the type name.
    var name: String { get }

    /// Handles one call; call `next` to continue towards the action.
    func intercept(_ call: MediatorCall, next: Mediator.Next) async throws -> any Sendable
}

extension RouteInterceptor {
    /// Default: the type name.
    public var name: String { String(describing: Self.self) }
}
