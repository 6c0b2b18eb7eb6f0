import RunwayMediator

/// The account module's interface: its names and typed helpers. Other modules (and the app's
/// login gate) import this small target, never `Account` itself.
public enum AccountRoutes {
    /// The target's name: the host of `app://account/...`.
    public static let target = "account"
    /// The login screen; with `user` and `password` it logs in and resumes the redirected call.
    public static let login = "login"
    /// Ends the session.
    public static let logout = "logout"
    /// The user's favourite listings; behind the login gate.
    public static let favourites = "favourites"
    /// Whether somebody is logged in (local-only).
    public static let status = "status"
}

extension Mediator {
    /// Whether somebody is logged in, asked of the account module.
    public func accountIsLoggedIn() async throws -> Bool {
        try await perform(target: AccountRoutes.target, action: AccountRoutes.status, as: Bool.self)
    }

    /// The deep link to the login screen.
    public func accountLoginURL() throws -> String {
        try url(target: AccountRoutes.target, action: AccountRoutes.login)
    }

    /// The deep link to the favourites screen.
    public func accountFavouritesURL() throws -> String {
        try url(target: AccountRoutes.target, action: AccountRoutes.favourites)
    }
}
