import RunwayCore
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Keeps a service's access token and refreshes it **once** when concurrent calls find it
/// expired, then lets every one of them replay with the new token.
///
/// Give it to a ``Service`` as ``Service/authenticator``; the registry puts it in that service's
/// chain before the app's retry, compression, signing and DNS bypass, so a replay is signed anew.
/// A call sends the current token; when the service's
/// ``Service/error(for:json:)`` maps the response to `.needsLogin`, the call asks for a refresh:
/// - if no refresh has happened since the call read its token, the first such call starts
///   one (`refresh` runs in its own task, so cancelling that call does not cancel it) and the
///   others wait for it;
/// - if a refresh already finished since then, the call replays at once with the newer token;
/// - a failed refresh fails every call that waited for it, and every call that read the token
///   before it, with `.needsLogin` (`RunwayError.underlying` is the refresh's error);
/// - calls that start while a refresh runs wait for it before sending.
/// A call replays once; a second expiry is returned as is (the manager then fails with
/// `.needsLogin`). A POST or PATCH replays only when its expiry came as a `401` (the server did
/// not act on it) or it carries an `Idempotency-Key` header: one whose expiry the service reads
/// from another status (a business code in a 200's body) may have been acted on, so it fails with
/// `.needsLogin` once the token is refreshed, and is never sent twice without consent.
///
/// A call that started under an ``identity`` is never sent with the token of another: when
/// ``setToken(_:identity:)`` names someone else while it waits (another user signs in), it fails
/// with `.needsLogin` instead, so that user's response neither answers the call nor is cached
/// under the first user's ``credentialScope``. A call waiting for a refresh ends at once with
/// `.cancelled` when it is cancelled (its task, or its manager's `cancelAll()`); the refresh goes
/// on for the others. It waits at most its request's `RequestOptions.timeout` (a refresh whose
/// server never answers), then ends with `.timeout`; the refresh goes on for the others too.
///
/// The refresh may call the same service (a refresh API on it, through a manager): calls made
/// from inside `refresh` never wait for the refresh they are part of, and one that is refused
/// as expired fails with `.needsLogin` instead of asking for another refresh.
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
    private let state: Locked<State>

    private struct State {
        var token: String?
        var identity: String?
        /// Increases when a refresh ends, successfully or not.
        var generation = 0
        var refreshing = false
        /// Which refresh is the running one: one that `setToken` abandoned (its outcome belongs
        /// to the session the app has just replaced) finds another number when it ends, and its
        /// outcome is dropped.
        var refreshNumber = 0
        /// The error of the refresh that produced `generation`, if it failed.
        var failure: RunwayError?
        var waiters: [(id: UInt64, continuation: Waiter)] = []
        var lastWaiterID: UInt64 = 0
        /// Waiters cancelled or timed out before they were registered, with their error.
        var endedEarly: [UInt64: RunwayError] = [:]
        var refreshCount = 0
        var endedRefreshCount = 0
    }

    private typealias Waiter = CheckedContinuation<Result<Snapshot, RunwayError>, Never>

    /// The authenticator whose `refresh` the current task runs in (calls it makes must not wait
    /// for it).
    @TaskLocal private static var refreshingFor: ObjectIdentifier?

    private var isInsideOwnRefresh: Bool { Self.refreshingFor == ObjectIdentifier(self) }

    /// A token, who it belongs to, and the generation it belongs to.
    struct Snapshot: Sendable {
        let token: String?
        let identity: String?
        let generation: Int
    }

    /// Creates an authenticator.
    /// - Parameters:
    ///   - token: The token to start with (`nil` sends no header until a refresh).
    ///   - headerName: The header carrying the token.
    ///   - prefix: Put before the token in the header value.
    ///   - refresh: Obtains a new token.
    ///   - identity: Who the token belongs to (a user ID), for caches; see ``credentialScope``.
    public init(
        token: String?, identity: String? = nil, headerName: String = "Authorization", prefix: String = "Bearer ",
        refresh: @escaping Refresh
    ) {
        self.headerName = headerName
        self.prefix = prefix
        self.refresh = refresh
        self.state = Locked(State(token: token, identity: identity))
    }

    /// The current token.
    public var token: String? { state.withLock { $0.token } }

    /// What a response cache keeps this service's entries apart by (`RequestContext.credentialScope`):
    /// the ``identity`` when one is given, else the token itself — so one user's cached
    /// responses never answer another's calls. Without an identity, entries cached before a
    /// refresh are not found after it (they expire); give the user's ID to keep them.
    public var credentialScope: String? {
        state.withLock { $0.identity ?? $0.token }
    }

    /// Who the token belongs to, if the app said.
    public var identity: String? { state.withLock { $0.identity } }

    /// ``credentialScope`` and ``identity``, read together.
    var scopeAndIdentity: (scope: String?, identity: String?) {
        state.withLock { ($0.identity ?? $0.token, $0.identity) }
    }

    /// How many refreshes have been started.
    public var refreshCount: Int { state.withLock { $0.refreshCount } }

    /// How many refreshes have ended, those `setToken` abandoned included.
    var endedRefreshCount: Int { state.withLock { $0.endedRefreshCount } }

    /// Replaces the token (after a login or a logout), and who it belongs to.
    ///
    /// A refresh running meanwhile was for the token replaced, and is abandoned: the calls
    /// waiting for it replay at once with the token set here (none after a logout, so they end
    /// with `.needsLogin` when the server refuses them), those that started under another
    /// identity end with `.needsLogin` instead, and calls made from now on do not wait for it.
    /// Its token (or its failure), whenever it comes, is dropped. So `setToken` also rescues
    /// calls from a refresh that never ends.
    public func setToken(_ token: String?, identity: String? = nil) {
        let (waiters, snapshot) = state.withLock { state -> ([(id: UInt64, continuation: Waiter)], Snapshot) in
            state.token = token
            state.identity = identity
            state.generation += 1
            state.failure = nil
            let snapshot = Snapshot(token: token, identity: identity, generation: state.generation)
            guard state.refreshing else { return ([], snapshot) }
            state.refreshing = false
            let waiters = state.waiters
            state.waiters = []
            return (waiters, snapshot)
        }
        for waiter in waiters { waiter.continuation.resume(returning: .success(snapshot)) }
    }

    /// The token to send now, waiting for a running refresh first (whose failure is thrown), at
    /// most `timeout` (`nil`: for as long as it takes). A call made by the refresh itself does
    /// not wait.
    func current(timeout: Duration?) async throws(RunwayError) -> Snapshot {
        if isInsideOwnRefresh {
            return state.withLock { Snapshot(token: $0.token, identity: $0.identity, generation: $0.generation) }
        }
        return try await waitCancellably(timeout: timeout, sent: false) { id, continuation in
            state.withLock { state in
                if state.refreshing {
                    state.waiters.append((id, continuation))
                    return nil
                }
                return .success(Snapshot(token: state.token, identity: state.identity, generation: state.generation))
            }
        }.get()
    }

    /// A token newer than the one of generation `used`, refreshing if nobody has yet; waits for
    /// the refresh at most `timeout`.
    func refreshed(after used: Int, timeout: Duration?) async throws(RunwayError) -> Snapshot {
        if isInsideOwnRefresh {
            throw RunwayError(
                .needsLogin, "a call made by the token refresh was refused as expired", stage: .interceptor("token-refresh"))
        }
        var expired: String??
        var number = 0
        let result = await waitCancellably(timeout: timeout, sent: true) { id, continuation in
            state.withLock { state -> Result<Snapshot, RunwayError>? in
                if state.refreshing {
                    state.waiters.append((id, continuation))
                    return nil
                }
                if state.generation > used {
                    if let failure = state.failure { return .failure(failure) }
                    return .success(Snapshot(token: state.token, identity: state.identity, generation: state.generation))
                }
                state.refreshing = true
                state.refreshNumber += 1
                state.refreshCount += 1
                state.waiters.append((id, continuation))
                expired = .some(state.token)
                number = state.refreshNumber
                return nil
            }
        } started: {
            if let expired { startRefresh(expired: expired, number: number) }
        }
        return try result.get()
    }

    /// Waits for `register` to return an outcome or, having registered the continuation, for
    /// a refresh to end; ends with `.cancelled` as soon as the call is cancelled, and with
    /// `.timeout` once `timeout` has passed (`sent`: whether the call's request went out before).
    private func waitCancellably(
        timeout: Duration?, sent: Bool, register: (UInt64, Waiter) -> Result<Snapshot, RunwayError>?,
        started: () -> Void = {}
    ) async -> Result<Snapshot, RunwayError> {
        let id = state.withLock { state in
            state.lastWaiterID &+= 1
            return state.lastWaiterID
        }
        // The request's total timeout bounds its wait for a refresh too: a refresh that never
        // ends (its server never answers) must not hold the call past it.
        var timer: Task<Void, Never>?
        defer {
            timer?.cancel()
            _ = state.withLock { $0.endedEarly.removeValue(forKey: id) }
        }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Waiter) in
                if let ended = state.withLock({ $0.endedEarly.removeValue(forKey: id) }) {
                    continuation.resume(returning: .failure(ended))
                    return
                }
                if let ready = register(id, continuation) {
                    continuation.resume(returning: ready)
                } else {
                    timer = timeout.map { endWait(of: id, after: $0, sent: sent) }
                    started()
                }
            }
        } onCancel: { [self] in
            end(waiter: id, with: Self.cancelled)
        }
        // A call that waited before its request went out ends unsent, whatever ended the wait
        // (a failed refresh's error is shared by every waiter).
        guard !sent, case .failure(var failure) = outcome else { return outcome }
        failure.neverSent = true
        return .failure(failure)
    }

    /// Ends the wait of waiter `id` with `.timeout` after `timeout`, unless cancelled first.
    private func endWait(of id: UInt64, after timeout: Duration, sent: Bool) -> Task<Void, Never> {
        Task { [weak self] in
            guard (try? await Task.sleep(for: min(timeout, .longestSleep))) != nil else { return }
            self?.end(
                waiter: id,
                with: RunwayError(
                    .timeout, "the token refresh did not end within the call's timeout of \(timeout)",
                    stage: .interceptor("token-refresh"), neverSent: !sent))
        }
    }

    /// Ends the wait of waiter `id` with `error`: at once if it waits, else as soon as it is
    /// about to (a wait already over ignores it).
    private func end(waiter id: UInt64, with error: RunwayError) {
        let waiting: Waiter? = state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                if state.endedEarly[id] == nil { state.endedEarly[id] = error }
                return nil
            }
            return state.waiters.remove(at: index).continuation
        }
        waiting?.resume(returning: .failure(error))
    }

    private static let cancelled = RunwayError(
        .cancelled, "cancelled while waiting for the token refresh", stage: .interceptor("token-refresh"), underlying: CancellationError())

    /// Runs refresh `number` in a task of its own.
    private func startRefresh(expired: String?, number: Int) {
        let refresh = self.refresh
        let me = ObjectIdentifier(self)
        Task {
            let outcome: Result<String, RunwayError>
            do {
                outcome = .success(try await Self.$refreshingFor.withValue(me) { try await refresh(expired) })
            } catch {
                outcome = .failure(
                    RunwayError(.needsLogin, "token refresh failed: \(error)", stage: .interceptor("token-refresh"), underlying: error))
            }
            finish(outcome, number: number)
        }
    }

    /// Ends refresh `number` with `outcome`, unless `setToken` abandoned it (its outcome is then
    /// dropped: the app's own token, set meanwhile, stays).
    private func finish(_ outcome: Result<String, RunwayError>, number: Int) {
        let ended = state.withLock { state -> ([(id: UInt64, continuation: Waiter)], Result<Snapshot, RunwayError>)? in
            state.endedRefreshCount += 1
            guard state.refreshing, state.refreshNumber == number else { return nil }
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
            state.endedEarly = [:]
            let snapshot = Snapshot(token: state.token, identity: state.identity, generation: state.generation)
            return (waiters, outcome.map { _ in snapshot })
        }
        guard let (waiters, result) = ended else { return }
        for waiter in waiters { waiter.continuation.resume(returning: result) }
    }

    /// `request` carrying `token` in ``headerName``.
    func authorize(_ request: Request, with token: String?) -> Request {
        guard let token else { return request }
        var request = request
        request.headers[headerName] = prefix + token
        return request
    }
}
