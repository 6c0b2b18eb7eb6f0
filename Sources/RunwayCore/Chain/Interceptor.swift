/// A step in the request pipeline: one `Sendable` async method that receives the request, its
/// context and `next`.
///
/// An interceptor may
/// - change the request and pass it on: `try await next(modified, context)`;
/// - short-circuit with a response of its own (a cache hit) and never call `next`;
/// - observe the request and the response (logging, metrics);
/// - throw, which ends the call; the pipeline attributes the error to this interceptor.
///
/// ## Order
/// Interceptors run in the order they were registered in the ``Pipeline``: **requests go from
/// the first to the last; responses come back from the last to the first.** The first
/// interceptor sees the request first and the response last. The ``Dispatcher`` comes after the
/// last interceptor and is the only place that does I/O.
///
/// ```swift
/// struct UserAgent: Interceptor {
///     func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
///         var request = request
///         request.headers["User-Agent"] = "HouseHunter/1.0"
///         return try await next(request, context)
///     }
/// }
/// ```
public protocol Interceptor: Sendable {
    /// The name used in errors and logs; defaults to the type name.
    var name: String { get }

    /// Handles one request; call `next` to continue down the chain.
    /// - Parameters:
    ///   - request: The request as left by the interceptors before this one.
    ///   - context: Facts about the call (API, service, attempt) and typed values that
    ///     interceptors share.
    ///   - next: The rest of the chain, ending in the dispatcher. It may be called more than
    ///     once (a retry) or not at all (a cache hit).
    /// - Returns: The response handed back to the interceptor before this one.
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response
}

extension Interceptor {
    public var name: String { String(describing: Self.self) }
}

/// An interceptor whose work belongs to each attempt of a request rather than to the call: it
/// replays the request (retry, a redirect) or shapes what goes on the wire (compression, signing, the DNS
/// bypass). Whatever replays a request on its own (a service's token refresh) is placed before
/// the first of these, so every replay passes them again: compressed, signed with a fresh nonce,
/// routed again.
///
/// A marker: it adds no requirement. Conform an interceptor of your own that must see every
/// attempt (one that stamps a per-attempt header, say).
public protocol PerAttemptInterceptor: Interceptor {}
