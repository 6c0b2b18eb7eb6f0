import RunwayCore

/// What interceptors early in the chain do when one further in sends the request again: after a
/// response it does not hand back (retry after a `503`, a redirect, the token refresh after a
/// `401`), keep what that response set, and bring the request up to date for the next attempt;
/// after a failure retry sends again (no response), only the latter. The cookie interceptor adds
/// one, so a cookie such a response sets is kept and goes with the next attempt, and what the
/// next attempt's answer sets is kept from the URL it answers. The cache's background refresh
/// (module `RunwayCache`), whose response no caller gets back, hands it to them too.
package enum ResendHandlers: ContextKey {
    package typealias Value = [@Sendable (Request, Response?) -> Request]

    /// `request` as the handlers in `context` make it for the attempt after `response` (`nil`:
    /// after a failure).
    package static func request(_ request: Request, resentAfter response: Response?, in context: RequestContext) -> Request {
        guard let handlers = context[Self.self] else { return request }
        var request = request
        for handler in handlers { request = handler(request, response) }
        return request
    }

    /// Has the handlers in `context` keep what `response`, the answer to `request` that no
    /// caller of the chain gets back, sets; nothing is sent after it.
    package static func keep(_ response: Response, answering request: Request, in context: RequestContext) {
        _ = Self.request(request, resentAfter: response, in: context)
    }

    /// `context` with `handler` added after the handlers already in it.
    static func adding(_ handler: @escaping @Sendable (Request, Response?) -> Request, to context: RequestContext) -> RequestContext {
        var context = context
        context[Self.self] = (context[Self.self] ?? []) + [handler]
        return context
    }
}
