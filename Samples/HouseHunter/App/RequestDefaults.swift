import Runway

/// The first interceptor: the app's user agent, and the `--timeout` as an upper bound on every
/// request's timeouts (managers keep their own when shorter).
struct RequestDefaults: Interceptor {
    let timeout: Duration

    var name: String { "request-defaults" }

    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        var request = request
        request.headers["User-Agent"] = "HouseHunter/1.0"
        request.options.timeout = min(request.options.timeout ?? timeout, timeout)
        request.options.connectTimeout = min(request.options.connectTimeout, timeout)
        return try await next(request, context)
    }
}

/// A pipeline used as a dispatcher: the DNS bypass's IP-list fetch and latency pings go out
/// through it, so they are signed like every other request (the server checks them all).
struct SignedDispatcher: Dispatcher {
    let pipeline: Pipeline

    var name: String { "signed \(pipeline.dispatcher.name)" }

    func dispatch(_ request: Request, context: RequestContext) async throws -> Response {
        try await pipeline.send(request, context: context)
    }
}
