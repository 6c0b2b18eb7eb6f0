import Foundation

/// Keeps a service's access token and refreshes it **once** when concurrent calls find it
/// expired, then lets every one of them replay with the new token.
///
/// Give it to a ``Service`` as ``Service/authenticator``; the registry puts it in that service's
/// chain before the app's retry, compression, signing and DNS bypass, so a replay is signed anew. A call sends the current token; when the service's
/// ``Service/error(for:json:)`` maps the response to `.needsLogin`, the call asks for a refresh:
/// - if no refresh has happened since the call read its token, the first such call starts
///   one (`refresh` runs in its own task, so cancelling that call does not cancel it) and the
///   others wait for it;
/// - if a refresh already finished since then, the call replays at once with the newer token;
/// - a failed refresh fails every call that waited for it, and every call that read the token
///   before it, with `.needsLogin` (``RunwayError/underlying`` is the refresh's error);
/// - calls that start while a refresh runs wait for it before sending.
/// A call replays once; a second expiry is returned as is (the manager then fails with
/// `.needsLogin`).
/// ```swift
/// let authenticator = TokenAuthenticator(token: storedToken) { expired in
///     try await authClient.refresh(expired)   // returns the new token
/// }
/// ```
public final class TokenAuthenticator: Sendable {
    /// Obtains a new token; receives the token found expired.
    public typealias Refresh = @Sendable (_ expired: String?) async throws -> String

    /// The header the token travels in.
    public let headerName: String
    /// Text put before the token in the header value (`"Bearer "` by default).
    public let prefix: String
    private let refresh: Refresh
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false thread-sanitizer report on Linux.
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var state: State

    private struct State {
        var token: String?
        /// Increases when a refresh ends, successfully or not.
        var generation = 0
        var refreshing = false
        /// The error of the refresh that produced `generation`, if it failed.
        var failure: RunwayError?
        var waiters: [CheckedContinuation<Result<Snapshot, RunwayError>, Never>] = []
        var refreshCount = 0
    }

    /// A token and the generation it belongs to.
    struct Snapshot: Sendable {
        let token: String?
        let generation: Int
    }

    /// Creates an authenticator.
    /// - Parameters:
    ///   - token: The token to start with (`nil` sends no header until a refresh).
    ///   - headerName: The header carrying the token.
    ///   - prefix: Put before the token in the header value.
    ///   - refresh: Obtains a new token.
    public init(token: String?, headerName: String = "Authorization", prefix: String = "Bearer ", refresh: @escaping Refresh) {
        self.headerName = headerName
        self.prefix = prefix
        self.refresh = refresh
        self.state = State(token: token)
    }

    /// The current token.
    public var token: String? { lock.withLock { state.token } }

    /// How many refreshes have been started.
    public var refreshCount: Int { lock.withLock { state.refreshCount } }

    /// Replaces the token (after a login, say).
    public func setToken(_ token: String?) {
        lock.withLock {
            state.token = token
            state.generation += 1
            state.failure = nil
        }
    }

    /// The token to send now, waiting for a running refresh first (whose failure is thrown).
    func current() async throws(RunwayError) -> Snapshot {
        try await withCheckedContinuation { (continuation: CheckedContinuation<Result<Snapshot, RunwayError>, Never>) in
            let ready: Snapshot? = lock.withLock {
                if state.refreshing {
                    state.waiters.append(continuation)
                    return nil
                }
                return Snapshot(token: state.token, generation: state.generation)
            }
            if let ready { continuation.resume(returning: .success(ready)) }
        }.get()
    }

    /// A token newer than the one of generation `used`, refreshing if nobody has yet.
    func refreshed(after used: Int) async throws(RunwayError) -> Snapshot {
        enum Decision { case wait, ready(Result<Snapshot, RunwayError>), start(String?) }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Snapshot, RunwayError>, Never>) in
            let decision: Decision = lock.withLock {
                if state.refreshing {
                    state.waiters.append(continuation)
                    return .wait
                }
                if state.generation > used {
                    if let failure = state.failure { return .ready(.failure(failure)) }
                    return .ready(.success(Snapshot(token: state.token, generation: state.generation)))
                }
                state.refreshing = true
                state.refreshCount += 1
                state.waiters.append(continuation)
                return .start(state.token)
            }
            switch decision {
            case .wait: break
            case .ready(let result): continuation.resume(returning: result)
            case .start(let expired): startRefresh(expired: expired)
            }
        }
        return try result.get()
    }

    private func startRefresh(expired: String?) {
        let refresh = self.refresh
        Task {
            let outcome: Result<String, RunwayError>
            do {
                outcome = .success(try await refresh(expired))
            } catch {
                outcome = .failure(
                    RunwayError(.needsLogin, "token refresh failed: \(error)", stage: .interceptor("token-refresh"), underlying: error))
            }
            finish(outcome)
        }
    }

    private func finish(_ outcome: Result<String, RunwayError>) {
        let (waiters, result) = lock.withLock { () -> ([CheckedContinuation<Result<Snapshot, RunwayError>, Never>], Result<Snapshot, RunwayError>) in
            state.refreshing = false
            state.generation += 1
            switch outcome {
            case .success(let token):
                state.token = token
                state.failure = nil
            case .failure(let error):
                state.failure = error
            }
            let waiters = state.waiters
            state.waiters = []
            let snapshot = Snapshot(token: state.token, generation: state.generation)
            return (waiters, outcome.map { _ in snapshot })
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// `request` carrying `token` in ``headerName``.
    func authorize(_ request: Request, with token: String?) -> Request {
        guard let token else { return request }
        var request = request
        request.headers[headerName] = prefix + token
        return request
    }
}
