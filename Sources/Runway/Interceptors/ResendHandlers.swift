import RunwayCore

/// What interceptors early in the chain do with a response that one further in does not hand
/// back but answers by sending the request again (retry after a `503`, the token refresh after a
/// `401`): keep what it set and bring the request up to date for the next attempt. The cookie
/// interceptor adds one, so a cookie such a response sets is kept and goes with the next attempt.
enum ResendHandlers: ContextKey {
    typealias Value = [@Sendable (Request, Response) -> Request]

    /// `request` as the handlers in `context` make it for the attempt after `response`.
    static func request(_ request: Request, resentAfter response: Response, in context: RequestContext) -> Request {
        guard let handlers = context[Self.self] else { return request }
        var request = request
        for handler in handlers { request = handler(request, response) }
        return request
    }

    /// `context` with `handler` added after the handlers already in it.
    static func adding(_ handler: @escaping @Sendable (Request, Response) -> Request, to context: RequestContext) -> RequestContext {
        var context = context
        context[Self.self] = (context[Self.self] ?? []) + [handler]
        return context
    }
}
