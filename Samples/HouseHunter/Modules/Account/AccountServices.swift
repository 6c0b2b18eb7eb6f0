import Runway

extension ServiceID {
    /// Login and token refresh: calls that carry no access token.
    public static let accountAuth: ServiceID = "account-auth"
    /// The user's own data: every call carries the access token, refreshed once when it expires.
    public static let account: ServiceID = "account"
}

/// The account API's error codes, as the server sends them in `{"code": ..., "message": ...}`.
enum AccountErrorCode {
    /// The access token has expired: refresh it and replay.
    static let tokenExpired = 1001
    /// Wrong user name or password.
    static let wrongPassword = 1002
    /// The refresh token is not valid: log in again.
    static let refreshRejected = 1003
    /// No valid access token at all.
    static let notLoggedIn = 1004
}

/// Login and token refresh. Kept apart from ``AccountService``: a refresh must not wait for
/// the refresh it is.
public struct AccountAuthService: Service {
    /// The service's identifier.
    public let id: ServiceID = .accountAuth
    /// The base URL in each environment.
    public let baseURLs = BaseURLs(
        develop: "http://api.dev.househunter.test/api/account", releaseCandidate: "http://api.rc.househunter.test/api/account",
        release: "http://api.househunter.test/api/account")

    /// Creates the service.
    public init() {}

    /// The team's error convention, mapped to `RunwayError`.
    public func error(for response: Response, json: JSON?) -> RunwayError? {
        if let code = json?["code"]?.int, code == AccountErrorCode.wrongPassword || code == AccountErrorCode.refreshRejected {
            return RunwayError(.needsLogin, json?["message"]?.string ?? "log in again", response: response)
        }
        return defaultError(for: response)
    }
}

/// The user's own data, with the session's access token; an expired token is refreshed once
/// for every call that found it expired, and those calls replay (``TokenAuthenticator``).
public struct AccountService: Service {
    /// The service's identifier.
    public let id: ServiceID = .account
    /// The base URL in each environment.
    public let baseURLs = AccountAuthService().baseURLs
    /// The session's authenticator: refreshes the access token once when it expires.
    public var authenticator: TokenAuthenticator? { AccountSession.shared.authenticator }

    /// Creates the service.
    public init() {}

    /// The team's error convention, mapped to `RunwayError`.
    public func error(for response: Response, json: JSON?) -> RunwayError? {
        if let code = json?["code"]?.int, code == AccountErrorCode.tokenExpired || code == AccountErrorCode.notLoggedIn {
            return RunwayError(.needsLogin, json?["message"]?.string ?? "log in again", response: response)
        }
        return defaultError(for: response)
    }
}

/// The module's namespace.
public enum Account {
    /// Every service the account module calls (login and refresh, and the authenticated
    /// account API), for the app to register at start-up.
    public static var services: [any Service] { [AccountAuthService(), AccountService()] }
}
