import RunwayMediator

/// The account module's interface: its names and typed helpers. Other modules (and the app's
/// login gate) import this small target, never `Account` itself.
public enum AccountRoutes {
    /// The target's name: the host of `app://account/...`.
    public static let target = "account"
    /// The login screen. From a local call with `user` and `password` it logs in and resumes the
    /// redirected call; a URL (a remote call) never carries a password — it only shows the form.
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

    /// Logs `user` in, then opens `redirectURL` (what the login gate stopped) if there is one,
    /// and returns what the account module answers (HouseHunter: a screen).
    ///
    /// A local call: the password never travels in a URL, so it is never in a deep link, a route
    /// log or the action log.
    public func accountLogIn<Result: Sendable>(
        user: String, password: String, redirectURL: String? = nil, as type: Result.Type
    ) async throws -> Result {
        var parameters: MediatorParameters = ["user": user, "password": password]
        if let redirectURL { parameters["redirectURL"] = redirectURL }
        return try await perform(target: AccountRoutes.target, action: AccountRoutes.login, parameters: parameters, as: Result.self)
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
