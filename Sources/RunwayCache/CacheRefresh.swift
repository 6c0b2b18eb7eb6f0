#if Cache  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

/// What a background refresh of a cache-then-network call produced.
public enum CacheRefresh: Sendable {
    /// The network answered with success and a different status or body; it is here, and stored
    /// unless it may not be (it says `Cache-Control: no-store`, sets a cookie...; see ``ResponseCache``).
    case updated(Response)
    /// The network answered with the same status and body as the response already delivered.
    case unchanged(Response)
    /// The refresh failed, or brought no success (a `500`: `RunwayError.response` holds it); the
    /// cached response already delivered stays in the cache.
    case failed(RunwayError)
}

/// Receives the second delivery of a cache-then-network call (see
/// ``CachePolicy/cacheThenNetwork(maxStale:)``). An API manager puts one in the call's context:
/// ```swift
/// var context = RequestContext(apiName: "listing.rent")
/// context[CacheRefreshObserver.Key.self] = CacheRefreshObserver { refresh in
///     if case .updated(let fresh) = refresh { delegate.didUpdate(fresh) }
/// }
/// let first = try await pipeline.send(request, context: context)   // cached, at once
/// ```
/// The handler is called exactly once per call that was answered from the cache under a
/// cache-then-network policy, from a background task, after the refreshed response is stored.
public struct CacheRefreshObserver: Sendable {
    let handler: @Sendable (CacheRefresh) -> Void

    /// Creates an observer.
    public init(_ handler: @escaping @Sendable (CacheRefresh) -> Void) {
        self.handler = handler
    }

    /// Carries the observer in a `RequestContext`.
    public enum Key: ContextKey {
        public typealias Value = CacheRefreshObserver
    }
}

#endif
