import RunwayCore

/// Sends a service's calls with its ``TokenAuthenticator``'s token and replays a call once after
/// a refresh when the service maps the response to `.needsLogin`.
///
/// Installed by ``ServiceRegistry/Builder/build()`` in the service's chain just before the app's
/// first per-attempt interceptor (`PerAttemptInterceptor`: retry, compression, signing, DNS
/// bypass), so the replay is compressed, signed with a fresh nonce and routed again, and the
/// service's own interceptors (and the dispatcher) run again too.
struct TokenRefreshInterceptor: Interceptor {
    let service: any Service
    let authenticator: TokenAuthenticator

    var name: String { "token-refresh" }

    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        let sent = try await authenticator.current(context: context)
        let response = try await next(authenticator.authorize(request, with: sent.token), context)
        guard isExpired(response) else { return response }
        let fresh = try await authenticator.refreshed(after: sent.generation, context: context)
        var replayContext = context
        replayContext.attempt += 1
        return try await next(authenticator.authorize(request, with: fresh.token), replayContext)
    }

    private func isExpired(_ response: Response) -> Bool {
        let json = response.body.isEmpty ? nil : try? JSON(parsing: response.body)
        return service.error(for: response, json: json)?.code == .needsLogin
    }
}

/// Puts the service's ``TokenAuthenticator/credentialScope`` in the context, first in the
/// service's chain, so the app's cache (which runs before the token is added) keeps one user's
/// responses from another's.
struct CredentialScopeInterceptor: Interceptor {
    let authenticator: TokenAuthenticator

    var name: String { "credential-scope" }

    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        var context = context
        context.credentialScope = authenticator.credentialScope
        return try await next(request, context)
    }
}
