import RunwayCore
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sends the cookies of a ``CookieJar`` with each request and keeps those each response sets:
/// what an API that keeps its session in a cookie needs.
///
/// ```swift
/// let jar = CookieJar()
/// let pipeline = Pipeline(interceptors: [.logging(logger), .cookies(jar), cache, try .retry(maxAttempts: 3)],
///                         dispatcher: CurlDispatcher())
/// ```
/// - A request that carries a `Cookie` header of its own is sent as it is; any other gets the
///   jar's cookies for its URL (host or domain, path, `Secure` over HTTPS only, unexpired).
/// - Every `Set-Cookie` of a response is offered to the jar, which keeps what RFC 6265 allows
///   for the URL that answered (see ``CookieJar``), whatever the status: a `302` after a login
///   included. Redirects followed in the chain (``RedirectInterceptor``) keep what each sets,
///   and each next request carries the jar's cookies for its own URL. A response after redirects
///   the dispatcher followed (`RedirectPolicy.follow(max:)`) comes from a URL the chain does not
///   see, so its cookies are not kept.
///
/// ## Where it belongs
/// After validation and **before the cache** (see ``DefaultOrder``): the cache keys a call by
/// whose it is, and a `Cookie` header says whose; after it, one user's cached answer could reach
/// the next user who signs in. A response the retry interceptor retries (a `503` setting a
/// sticky-session cookie), or a `401` a token refresh replays (renewing the session cookie), is
/// kept all the same, and the next attempt carries the jar's cookies as they are then; so is the
/// response of a cache-then-network call's background refresh, which no caller gets back.
public struct CookieInterceptor: Interceptor {
    /// The jar it sends from and stores into.
    public let jar: CookieJar

    public var name: String { "cookies" }

    /// Creates the interceptor over `jar`.
    public init(jar: CookieJar) {
        self.jar = jar
    }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        var request = request
        let fromJar = request.headers["Cookie"] == nil
        if fromJar, let header = jar.cookieHeader(for: request.url) {
            request.headers["Cookie"] = header
        }
        // Each response that retry, a redirect or the token refresh further down answers by
        // sending a request again is kept too, from the URL that answered it, and the next
        // request gets the jar's cookies for its URL as they are then. A retry after a failure
        // keeps nothing, and what answers it is kept from its own URL (the first one, not where
        // an earlier attempt was redirected: a plain-HTTP answer is never taken for an HTTPS one).
        let jar = jar
        let lastSent = Locked(request.url)
        let context = ResendHandlers.adding(
            { request, response in
                let answered = lastSent.withLock { sent in
                    defer { sent = request.url }
                    return sent
                }
                if let response { Self.keep(response, from: answered, in: jar) }
                guard fromJar else { return request }
                var request = request
                request.headers["Cookie"] = jar.cookieHeader(for: request.url)
                return request
            }, to: context)
        let response = try await next(request, context)
        Self.keep(response, from: lastSent.withLock { sent in sent }, in: jar)
        return response
    }

    /// Offers `jar` what `response` sets, unless it came from a URL the chain does not see (a
    /// redirect libcurl followed).
    private static func keep(_ response: Response, from url: URL, in jar: CookieJar) {
        guard response.metrics.redirectCount == 0 else { return }
        let values = response.headers.values(for: "Set-Cookie")
        if !values.isEmpty { jar.store(setCookie: values, from: url) }
    }
}

extension Interceptor where Self == CookieInterceptor {
    /// Sends and keeps cookies in `jar`; see ``CookieInterceptor``.
    public static func cookies(_ jar: CookieJar) -> CookieInterceptor {
        CookieInterceptor(jar: jar)
    }
}
