import RunwayCore

/// The progress stream of a call that may send more than one request: retry, a redirect
/// followed in the chain, the replay after a token refresh. Each request reports to the stream in
/// turn, but only the call's end ends it: a dispatcher ends a request's stream when its transfer
/// ends, which would drop the reports of every request after the first.
enum CallProgress {
    /// Runs `send` with `request` reporting to its progress stream without ending it, and ends
    /// the stream when the call does: when `send` returns (or, for a streamed body, when the
    /// body ends) or throws.
    static func spanning(_ request: Request, _ send: (Request) async throws -> Response) async throws -> Response {
        guard let progress = request.progress else { return try await send(request) }
        var request = request
        request.progress = progress.forwardingReports
        do {
            var response = try await send(request)
            progress.finish(after: &response)
            return response
        } catch {
            progress.finish()
            throw error
        }
    }
}
