import RunwayCore

/// Sends a service's calls with its ``TokenAuthenticator``'s token and replays a call once after
/// a refresh when the service maps the response to `.needsLogin`.
///
/// Installed by ``ServiceRegistry/Builder/build()`` in the service's chain just before the app's
/// first per-attempt interceptor (`PerAttemptInterceptor`: retry, redirects, compression, signing, DNS
/// bypass), so the replay is compressed, signed with a fresh nonce and routed again, and the
/// service's own interceptors (and the dispatcher) run again too.
struct TokenRefreshInterceptor: Interceptor {
    let service: any Service
    let authenticator: TokenAuthenticator

    var name: String { "token-refresh" }

    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        // The replay reports to the call's progress stream too, which ends with it.
        try await CallProgress.spanning(request) { request in try await authorizing(request, context: context, next: next) }
    }

    private func authorizing(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        let sent = try await authenticator.current(timeout: request.options.timeout)
        try checkIdentity(of: sent, context: context)
        let response = try await next(authenticator.authorize(request, with: sent.token), context)
        guard isExpired(response) else { return response }
        let fresh = try await authenticator.refreshed(after: sent.generation, timeout: request.options.timeout)
        try checkIdentity(of: fresh, context: context)
        guard Self.mayReplay(request, after: response) else {
            throw RunwayError(
                .needsLogin,
                "the token was refreshed, but this \(request.method) is not sent again on its own: its expiry came with status "
                    + "\(response.status), not 401, so the server may have acted on it (send it again, or give it an Idempotency-Key "
                    + "header)", stage: .interceptor(name), response: response)
        }
        var replayContext = context
        replayContext.attempt += 1
        // The cookie jar keeps what the 401 set, and the replay carries it, as after a retry.
        let replay = ResendHandlers.request(request, resentAfter: response, in: context)
        return try await next(authenticator.authorize(replay, with: fresh.token), replayContext)
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

    /// Whether a call whose token was found expired may go again with the new one: an idempotent
    /// method; or a `401`, by which the server says it did not act on the request; or an
    /// `Idempotency-Key` header, with which the server acts on it once. A POST or PATCH whose
    /// expiry a service reads from another status (a business code in a 200's body) may have
    /// been acted on, and is not sent twice without the caller's consent.
    static func mayReplay(_ request: Request, after response: Response) -> Bool {
        request.method.isIdempotent || response.status == 401 || request.headers["Idempotency-Key"] != nil
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
