#if Cache  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Answers from a ``ResponseCache`` when it can and fills it from the network when it cannot.
///
/// Per call it finds the policy (``ResponseCache/policy(for:)``); `.never` passes straight
/// through, and so does a `PUT`, `PATCH`, `DELETE` or any method but `GET`, `HEAD` and `POST`,
/// whatever the policy, and a `POST` under the cache's `defaultPolicy` (it is cached only under a
/// policy named for its API, or set for the call: an API that reads through a POST). Such a
/// write, once answered with a status below 400 (or failed after it may have reached the
/// server), removes the entries of its URL, whatever API stored them, and of the URLs its
/// `Location` and `Content-Location` name on the same origin (RFC 9111 §4.4;
/// ``ResponseCache/invalidate(url:)``). A fresh
/// entry is returned without calling `next` (its `Response.origin` is `.memoryCache` or
/// `.diskCache`); a miss or a stale entry goes on to the network and a
/// successful answer is stored. An entry whose `Vary` names request fields that this request
/// sends with other values is a miss (``ResponseCache``). A stale entry with an `ETag` or a `Last-Modified` makes the
/// `GET` conditional (`If-None-Match`, `If-Modified-Since`), unless the request has
/// preconditions of its own: a `304 Not Modified` then answers with the stored body
/// (`Response.origin` `.revalidated`), which is stored again with a new
/// lifetime; a `304` that names another `ETag` than the stored one confirms another
/// representation, so the `GET` is sent again without the validators. A request that streams its response body
/// (`Request.streamsResponseBody`) or its request body (`Request.bodyStream`) is neither
/// answered from the cache nor stored. Under
/// ``CachePolicy/cacheThenNetwork(maxStale:)`` a cached entry is returned even when stale, and
/// the network refresh runs in the background (one per key at a time) and is delivered to the
/// context's ``CacheRefreshObserver`` of the call that started it and of every call answered
/// from the cache while it runs. Concurrent identical
/// *misses* each go to the network: give their API manager the `shareInFlight` load policy to
/// send one.
///
/// ## Position
/// As in `DefaultOrder`: after tracing, metrics, logging (they see hits, with their origin)
/// and validation (an invalid call is never answered from the cache), before retry,
/// compression, signing and the dispatcher: a hit skips all of them and the key never sees
/// per-request signature headers. Validation's response rules run outside the cache, so they
/// check hits as well as network responses; validation passes its rules down with the call's
/// context, and a response that breaks the response rule is never stored, and
/// never delivered as `.updated` by a background refresh (`.failed` with `.responseInvalid`
/// instead). So is one the calling API manager refuses (`validate(response:)`, a body that is
/// not JSON): a refresh that brings one ends `.failed` with the manager's error. A background
/// refresh runs the interceptors after the cache again (retried, signed afresh). A refresh
/// answered with no success (a `500`, or an error by the reading of the call's
/// `RequestContext.service`, such as a business error sent with status 200) ends `.failed` too,
/// with that response in the error.
public struct CacheInterceptor: Interceptor {
    /// The store.
    public let cache: ResponseCache

    /// Creates an interceptor over `cache`.
    public init(cache: ResponseCache) {
        self.cache = cache
    }

    public var name: String { "cache" }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        let policy = cache.policy(for: context)
        let cached = policy.isEnabled && cache.caches(request.method, context: context)
        // A write: what the cache holds of the resources it changes is out of date once it is done.
        if !cached, !Self.isSafe(request.method) {
            return try await write(request, context: context, next: next)
        }
        // A streamed body is never held whole, so it can neither be stored nor answered.
        guard cached, request.download == nil, !request.streamsResponseBody, request.bodyStream == nil else {
            return try await next(request, context)
        }
        let key = cache.key(for: request, context: context)
        let api = context.apiName ?? ""
        var stale: CacheEntry?
        // An entry stored for other values of the fields its `Vary` names is a miss.
        if let (entry, origin) = cache.lookup(key, policy: policy), CacheVary.matches(request, entry) {
            let now = cache.clock()
            switch policy.mode {
            case .cacheFirst where entry.isFresh(at: now):
                return entry.response(origin: origin)
            case .cacheThenNetwork(let maxStale) where entry.isUsable(at: now, maxStale: maxStale):
                let cached = entry.response(origin: origin)
                refreshInBackground(
                    request, context: context, next: next, key: key, api: api, policy: policy, served: (entry, cached))
                return cached
            default:
                stale = entry
            }
        }
        return try await fetch(request, context: context, next: next, key: key, api: api, policy: policy, stored: stale).response
    }

    /// Whether `method` only reads (RFC 9110 §9.2.1): `GET`, `HEAD`, `OPTIONS` and `TRACE`.
    static func isSafe(_ method: HTTPMethod) -> Bool {
        switch method.rawValue {
        case "GET", "HEAD", "OPTIONS", "TRACE": true
        default: false
        }
    }

    /// Sends a write (a `PUT`, `PATCH`, `DELETE`, a `POST` not cached as a read) and removes the
    /// entries of what it may have changed (RFC 9111 §4.4): its URL's, and those its response's
    /// `Location` and `Content-Location` name on the same origin, when it answers with a status
    /// below 400; its URL's when it fails in a way that may have reached the server (a timeout, a
    /// reset: the server may have carried it out). Responses to reads in flight meanwhile are
    /// not stored.
    private func write(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            if (error as? RunwayError)?.neverSent != true {
                await cache.invalidate(resources: ResponseCache.resources(writtenBy: request, response: nil))
            }
            throw error
        }
        if response.status < 400 {
            await cache.invalidate(resources: ResponseCache.resources(writtenBy: request, response: response))
        }
        return response
    }

    /// Sends `request` and stores the answer. With a `stored` entry that has validators the
    /// request is conditional, and a `304 Not Modified` to it answers with the stored body
    /// (`ResponseOrigin.revalidated`), which is stored again with a new lifetime; a `304` that
    /// names another `ETag` than the stored one is not about the stored body, and `request` is
    /// sent again as it is.
    /// - Returns: The response, and why it breaks the call's response rule (`APIValidation.Key`
    ///   in the context, or the rule registered for the API) or why the calling API manager's response validator refuses it, if
    ///   either does: it is then not stored.
    private func fetch(
        _ request: Request, context: RequestContext, next: Pipeline.Next, key: CacheKey, api: String, policy: CachePolicy,
        stored: CacheEntry?
    ) async throws -> (response: Response, broken: RunwayError?) {
        let mark = cache.invalidationMark
        let conditional = stored.flatMap { CacheRevalidation.conditional(request, for: $0) }
        var response = try await next(conditional ?? request, context)
        if let stored, conditional != nil, response.status == 304 {
            // A 304 naming another ETag confirms another representation than the stored one: the
            // stored body is not current, so the safe request is sent again without validators.
            response =
                CacheRevalidation.confirms(stored, by: response)
                ? CacheRevalidation.confirmed(stored, by: response) : try await next(request, context)
        }
        var broken: RunwayError?
        do {
            try context[APIValidation.Key.self]?.validate(response)
        } catch {
            broken = RunwayError.attributing(error, to: .interceptor("validation"))
        }
        // Nor what breaks the rule registered for the API, or what the calling API manager's
        // own response validator refuses.
        if broken == nil, let rules = context.ruleAcceptance { broken = rules.refusal(of: response) }
        if broken == nil, response.bodyStream == nil, let acceptance = context.acceptance {
            broken = acceptance.refusal(of: response)
        }
        if response.bodyStream == nil, broken == nil {
            await cache.store(response, for: request, key: key, api: api, policy: policy, service: context.service, fetchedAt: mark)
        }
        return (response, broken)
    }

    private func refreshInBackground(
        _ request: Request, context: RequestContext, next: Pipeline.Next, key: CacheKey, api: String, policy: CachePolicy,
        served: (entry: CacheEntry, response: Response)
    ) {
        let cache = self.cache
        let waiter = context[CacheRefreshObserver.Key.self].map { ResponseCache.RefreshWaiter(observer: $0, served: served.response) }
        // A refresh of the key already running tells this call's observer of its outcome too.
        guard cache.beginRefresh(key, for: waiter) else { return }
        Task {
            let outcome: Result<Response, RunwayError>
            do {
                let fetched = try await fetch(
                    request, context: context, next: next, key: key, api: api, policy: policy, stored: served.entry)
                // The interceptors before this one keep what it sets (a rotated session cookie),
                // as they do for a response they get back.
                ResendHandlers.keep(fetched.response, answering: request, in: context)
                // What is no success is no update either: a 500, or a business error the service reads in a 200.
                let refused =
                    fetched.broken
                    ?? ResponseCache.error(in: fetched.response, service: context.service).map {
                        RunwayError.attributing($0, to: .interceptor("cache"))
                    }
                outcome = refused.map { .failure($0) } ?? .success(fetched.response)
            } catch {
                outcome = .failure(RunwayError.attributing(error, to: .interceptor("cache")))
            }
            for waiter in cache.endRefresh(key) {
                switch outcome {
                case .success(let fresh):
                    let same = fresh.status == waiter.served.status && fresh.body == waiter.served.body
                    waiter.observer.handler(same ? .unchanged(fresh) : .updated(fresh))
                case .failure(let error):
                    waiter.observer.handler(.failed(error))
                }
            }
        }
    }
}

extension Interceptor where Self == CacheInterceptor {
    /// Caches responses in `cache`; see ``CacheInterceptor``.
    public static func cache(_ cache: ResponseCache) -> CacheInterceptor {
        CacheInterceptor(cache: cache)
    }

    /// Creates a ``ResponseCache`` and its interceptor in one step (keep
    /// ``CacheInterceptor/cache`` to invalidate).
    /// - Throws: `RunwayError` `.configuration`; see ``ResponseCache``.
    public static func cache(
        environment: String = "production", policies: [String: CachePolicy], defaultPolicy: CachePolicy = .never,
        diskFile: URL? = nil, limits: ResponseCache.Limits = ResponseCache.Limits()
    ) throws(RunwayError) -> CacheInterceptor {
        CacheInterceptor(
            cache: try ResponseCache(
                environment: environment, policies: policies, defaultPolicy: defaultPolicy, diskFile: diskFile, limits: limits))
    }
}

#endif
