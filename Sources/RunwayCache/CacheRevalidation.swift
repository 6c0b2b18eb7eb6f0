#if Cache  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

extension ResponseOrigin {
    /// A cached body the server confirmed current: the cache asked with the entry's validators
    /// (`If-None-Match`, `If-Modified-Since`) and got `304 Not Modified`.
    public static let revalidated = ResponseOrigin("revalidated")
}

/// Conditional requests for stale entries (RFC 9110 §13, RFC 9111 §4.3): a stale entry that
/// carries an `ETag` or a `Last-Modified` is asked about instead of fetched again, and a
/// `304 Not Modified` answers with the stored body.
enum CacheRevalidation {
    /// `request` with the validators of `entry` added, or `nil` when it is not to be made
    /// conditional: not a `GET` or `HEAD` (a precondition on another method means something
    /// else), a request that is conditional already (its caller's own: its `304` is the
    /// caller's), or an entry with no validator.
    static func conditional(_ request: Request, for entry: CacheEntry) -> Request? {
        guard request.method == .get || request.method == .head else { return nil }
        let preconditions = ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range"]
        guard !request.headers.contains(where: { field in preconditions.contains { field.name.caseInsensitiveEquals($0) } })
        else { return nil }
        let tag = entry.headers["ETag"]?.trimmingBlanks()
        let modified = entry.headers["Last-Modified"]?.trimmingBlanks()
        guard tag?.isEmpty == false || modified?.isEmpty == false else { return nil }
        var conditional = request
        if let tag, !tag.isEmpty { conditional.headers.add(name: "If-None-Match", value: tag) }
        if let modified, !modified.isEmpty { conditional.headers.add(name: "If-Modified-Since", value: modified) }
        return conditional
    }

    /// Whether a `304` to the validators of `entry` is about the stored representation: not when
    /// it names another `ETag` (weak comparison, RFC 9110 §8.8.3.2), as a server that went by
    /// `If-Modified-Since` alone may send for a resource changed within the same second. Such a
    /// `304` must not update the entry (RFC 9111 §4.3.4): its body is not the current one.
    static func confirms(_ entry: CacheEntry, by notModified: Response) -> Bool {
        guard let sent = notModified.headers["ETag"].map(opaqueTag), let stored = entry.headers["ETag"].map(opaqueTag) else {
            return true
        }
        return sent == stored
    }

    /// An entity tag without its weakness mark: `W/"x"` and `"x"` match weakly.
    private static func opaqueTag(_ tag: String) -> String {
        let tag = tag.trimmingBlanks()
        return tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
    }

    /// Fields of a `304` that do not replace the stored ones: they describe that message, not
    /// the stored representation (RFC 9111 §3.2), or its connection.
    private static let notUpdated = [
        "Content-Length", "Content-Encoding", "Transfer-Encoding", "Content-Range", "Content-Type", "Connection", "Keep-Alive",
        "Trailer", "Upgrade", "Proxy-Connection",
    ]

    /// The stored response as a `304` to its validators confirms it: the stored status and body,
    /// the stored header fields updated with those the `304` sends (RFC 9111 §4.3.4), and the
    /// `304`'s transfer metrics.
    static func confirmed(_ entry: CacheEntry, by notModified: Response) -> Response {
        var headers = entry.headers
        var replaced: [String] = []
        for field in notModified.headers where !notUpdated.contains(where: { field.name.caseInsensitiveEquals($0) }) {
            if !replaced.contains(where: { field.name.caseInsensitiveEquals($0) }) {
                headers.removeAll(named: field.name)
                replaced.append(field.name)
            }
            headers.add(name: field.name, value: field.value)
        }
        return Response(
            status: entry.status, headers: headers, body: entry.body, metrics: notModified.metrics, origin: .revalidated)
    }
}

#endif
