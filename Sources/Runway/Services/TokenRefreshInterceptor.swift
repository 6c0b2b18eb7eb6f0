/// Sends a service's calls with its ``TokenAuthenticator``'s token and replays a call once after
/// a refresh when the service maps the response to `.needsLogin`.
///
/// Installed by ``ServiceRegistry/Builder/build()`` first in the service's chain, so the
/// service's own interceptors (and the dispatcher) run again for the replay.
struct TokenRefreshInterceptor: Interceptor {
    let service: any Service
    let authenticator: TokenAuthenticator

    var name: String { "TokenRefresh" }

    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        let sent = try await authenticator.current()
        let response = try await next(authenticator.authorize(request, with: sent.token), context)
        guard isExpired(response) else { return response }
        let fresh = try await authenticator.refreshed(after: sent.generation)
        var replayContext = context
        replayContext.attempt += 1
        return try await next(authenticator.authorize(request, with: fresh.token), replayContext)
    }

    private func isExpired(_ response: Response) -> Bool {
        let json = response.body.isEmpty ? nil : try? JSON(parsing: response.body)
        return service.error(for: response, json: json)?.code == .needsLogin
    }
}
