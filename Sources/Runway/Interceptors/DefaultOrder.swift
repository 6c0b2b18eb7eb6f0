import RunwayCore

/// The order Runway's standard interceptors belong in, first (outermost) to last.
///
/// Requests pass them top to bottom and then the dispatcher; responses come back bottom to top.
///
/// 1. `tracing`: Outermost: the span covers everything below, cache hits and every retry included;
///    later spans nest inside it.
/// 2. `metrics`: Counts and times every call once — cache hits, validation failures and the total
///    of all retries — as the caller experienced it.
/// 3. `logging`: One entry per call with its final outcome; before the cache, so **cache hits are
///    logged** (`[memory-cache hit]`). Observes only. It shows the request as the application built
///    it, before compression and signing.
/// 4. `har`: Optional (`HARInterceptor`, RunwayHAR). Records each call for a HAR file where logging
///    logs it, for the same reasons: cache hits recorded and marked, one entry per call with its
///    final outcome, the request as the application built it. Observes only.
/// 5. `validation`: Parameter rules before anything else sees the request: an invalid call is never
///    answered from the cache (a disk cache may outlive a rule change), never signed, never sent.
/// 6. `cookies`: Optional (``CookieInterceptor``). Sends a ``CookieJar``'s cookies and keeps those
///    responses set; before the cache, whose key counts the `Cookie` header as whose call it is, so
///    one user's cached answer never reaches the next user who signs in.
/// 7. `cache`: A hit returns before anything costs: no signing, no network. The key is built from
///    the logical parameters, before signing adds a timestamp and a nonce.
/// 8. `merging`: Optional (``RequestMergingInterceptor``). After the cache, so a hit never waits in
///    a merge queue; before retry, compression and signing, so the combined request is retried,
///    compressed and signed as what goes on the wire.
/// 9. `retry`: Wraps compression, signing and the DNS bypass, so **every attempt is re-signed**
///    with a fresh timestamp and nonce (the verifier rejects a replayed nonce) and re-routed to the
///    fastest address still alive. Inside the cache: a retried success is stored once.
/// 10. `redirects`: Optional (``RedirectInterceptor``). Follows a redirect to the call's own
///     origin by sending the next request down the rest of the chain, so it is compressed, signed
///     for its own path and routed again; inside retry, so a failed attempt starts over from the
///     call's URL within the call's total timeout; after the cookies, which keep what each
///     redirect sets.
/// 11. `compression`: Gzips the body before it is signed, so the signature's body hash covers the
///     bytes sent (the verifier checks what it received, before decoding).
/// 12. `signing`: Signs the request as it will go on the wire.
/// 13. `dns-bypass`: Chooses the address per attempt. Its failover between addresses happens only
///     when no connection was made — nothing was sent — so the same signature is still fresh.
///
/// Then the dispatcher, the only I/O.
///
/// A service with a ``TokenAuthenticator`` gets a `token-refresh` interceptor that the registry
/// puts between `cache` and `retry` (before the first `PerAttemptInterceptor`), so the replay after a
/// refresh is signed again like any retry.
///
/// ```swift
/// let pipeline = Pipeline(interceptors: [
///     tracing, metrics, .logging(logger), .har(recorder), validation, .cookies(jar), cache,
///     try .retry(maxAttempts: 3), try .redirects(max: 5), try .compression(), signing, .dnsBypass(bypass),
/// ], dispatcher: CurlDispatcher())
/// assert(DefaultOrder.misplaced(in: pipeline.interceptors).isEmpty)
/// ```
/// The names are the standard interceptors' `Interceptor.name` values; interceptors of your
/// own may go anywhere.
public enum DefaultOrder {
    /// The standard interceptors' names, in the order they belong.
    public static let names: [String] = [
        "tracing", "metrics", "logging", "har", "validation", "cookies", "cache", "merging", "retry", "redirects", "compression",
        "signing", "dns-bypass",
    ]

    /// The standard interceptors in `interceptors` that are out of the default order, each as
    /// a sentence (`"retry should come before signing"`); empty when the order is the default.
    /// Interceptors with other names are ignored.
    public static func misplaced(in interceptors: [any Interceptor]) -> [String] {
        let ranked = interceptors.compactMap { interceptor in
            names.firstIndex(of: interceptor.name).map { (name: interceptor.name, rank: $0) }
        }
        var problems: [String] = []
        var seen = Set<String>()
        for (index, entry) in ranked.enumerated() {
            if !seen.insert(entry.name).inserted { problems.append("\(entry.name) is registered more than once") }
            if let earlier = ranked[..<index].first(where: { $0.rank > entry.rank }) {
                problems.append("\(entry.name) should come before \(earlier.name)")
            }
        }
        return problems
    }
}
