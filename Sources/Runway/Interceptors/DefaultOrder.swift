/// The order Runway's standard interceptors belong in, first (outermost) to last.
///
/// Requests pass them top to bottom and then the dispatcher; responses come back bottom to top.
///
/// | # | Interceptor   | Why here |
/// |---|---------------|----------|
/// | 1 | `metrics`     | Outermost: counts and times every call — cache hits, validation failures and retries included — as the caller experienced it. |
/// | 2 | `logging`     | One entry per call with its final outcome; before the cache, so **cache hits are logged** (`[memory-cache hit]`). Observes only. |
/// | 3 | `cache`       | A hit returns before anything costs: no validation, no signing, no network. Its key is built from the logical parameters, before signing adds a timestamp and a nonce that would make every key unique. |
/// | 4 | `validation`  | Parameter rules run before anything is signed or sent; response rules run on the way back **before the cache stores the response**, so a response that breaks them is never cached. (A cache hit was validated when it was stored.) |
/// | 5 | `retry`       | Wraps signing, so **every attempt is re-signed** with a fresh timestamp and nonce (a verifier rejects a replayed nonce), and re-routed by the DNS bypass to the fastest address still alive. Inside the cache and validation: a retried success is cached once; bad parameters are never retried. |
/// | 6 | `signing`     | Signs the request as the application built it (uncompressed body, canonical parameters). |
/// | 7 | `dns-bypass`  | Chooses the address per attempt. Its failover between addresses happens only when no connection was made — nothing was sent — so it needs no new signature. |
/// | 8 | `compression` | The last change to the request: gzips the body already signed (the server verifies after decoding) and asks for compressed responses. |
/// |   | dispatcher    | The only I/O. |
///
/// ```swift
/// let pipeline = Pipeline(interceptors: [
///     metrics, try .logging(logger), cache, validation,
///     try .retry(maxAttempts: 3), signing, .dnsBypass(bypass), try .compression(),
/// ], dispatcher: CurlDispatcher())
/// assert(DefaultOrder.misplaced(in: pipeline.interceptors).isEmpty)
/// ```
/// The names are the standard interceptors' ``Interceptor/name`` values; interceptors of your
/// own may go anywhere.
public enum DefaultOrder {
    /// The standard interceptors' names, in the order they belong.
    public static let names: [String] = [
        "metrics", "logging", "cache", "validation", "retry", "signing", "dns-bypass", "compression",
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
