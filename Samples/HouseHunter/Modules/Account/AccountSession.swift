import Foundation
import Runway

/// Who is logged in: the user name, the refresh token, and the authenticator that holds the
/// access token and refreshes it.
///
/// One per process, like the app's session on a phone; the account service's authenticator
/// and the account target share it.
public final class AccountSession: Sendable {
    /// The app's session.
    public static let shared = AccountSession()

    /// Holds the access token and refreshes it with the refresh token.
    public let authenticator: TokenAuthenticator
    private let state: SessionState

    init() {
        let state = SessionState()
        self.state = state
        self.authenticator = TokenAuthenticator(token: nil) { _ in
            try await AccountSession.refresh(state)
        }
    }

    /// The user logged in, if any.
    public var user: String? { state.read { $0.user } }

    /// Whether somebody is logged in (has a refresh token).
    public var isLoggedIn: Bool { state.read { $0.refreshToken != nil } }

    /// The refresh token, if logged in.
    var refreshToken: String? { state.read { $0.refreshToken } }

    /// Starts a session.
    func start(user: String, accessToken: String, refreshToken: String) {
        state.write {
            $0.user = user
            $0.refreshToken = refreshToken
        }
        authenticator.setToken(accessToken)
    }

    /// Ends the session.
    func end() {
        state.write {
            $0.user = nil
            $0.refreshToken = nil
        }
        authenticator.setToken(nil)
    }

    /// A new access token from the refresh token; a rejected refresh token ends the session.
    private static func refresh(_ state: SessionState) async throws -> String {
        guard let refreshToken = state.read({ $0.refreshToken }) else {
            throw RunwayError(.needsLogin, "nobody is logged in")
        }
        let json: JSON
        do {
            json = try await RefreshTokenAPIManager().load(params: ["refresh_token": .string(refreshToken)])
        } catch {
            if error.code == .needsLogin {
                state.write {
                    $0.user = nil
                    $0.refreshToken = nil
                }
            }
            throw error
        }
        guard let token = json["access_token"]?.string else {
            throw RunwayError(.responseInvalid, "the refresh answered without access_token")
        }
        return token
    }
}

/// The session's fields under a lock.
final class SessionState: Sendable {
    struct Fields {
        var user: String?
        var refreshToken: String?
    }

    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var fields = Fields()

    func read<T>(_ body: (Fields) -> T) -> T { lock.withLock { body(fields) } }

    func write(_ body: (inout Fields) -> Void) { lock.withLock { body(&fields) } }
}
