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
        try checkIdentity(of: sent, context: context)
        let response = try await next(authenticator.authorize(request, with: sent.token), context)
        guard isExpired(response) else { return response }
        let fresh = try await authenticator.refreshed(after: sent.generation, context: context)
        try checkIdentity(of: fresh, context: context)
        var replayContext = context
        replayContext.attempt += 1
        return try await next(authenticator.authorize(request, with: fresh.token), replayContext)
    }

    /// Refuses to send a call that started under one identity with another's token (a user who
    /// signed in while the call waited): the response would be theirs, and the cache, which
    /// keyed the call before, would keep it under the first user's scope.
    private func checkIdentity(of snapshot: TokenAuthenticator.Snapshot, context: RequestContext) throws(RunwayError) {
        guard let started = context[CallIdentity.self], snapshot.identity != started else { return }
        throw RunwayError(
            .needsLogin, "the signed-in identity changed while the call waited for its token; not sent with another identity's token",
            stage: .interceptor(name))
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
        let (scope, identity) = authenticator.scopeAndIdentity
        context.credentialScope = scope
        if let identity { context[CallIdentity.self] = identity }
        return try await next(request, context)
    }
}

/// The ``TokenAuthenticator/identity`` a call started under, read with its credential scope:
/// ``TokenRefreshInterceptor`` never sends the call with another identity's token.
enum CallIdentity: ContextKey {
    typealias Value = String
}
