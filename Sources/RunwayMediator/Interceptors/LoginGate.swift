/// Redirects calls to actions tagged ``requiresLogin`` to a login action while nobody is logged in.
///
/// The login action gets the original call's target, action and URL as parameters
/// `redirectTarget`, `redirectAction` and `redirectURL` (when there was one), so it can resume
/// the call after a successful login. The redirected call keeps its origin: a remote call can only
/// be redirected to a remote-callable login action.
public struct LoginGate: RouteInterceptor {
    /// The tag that marks an action as needing a login.
    public static let requiresLogin = "requiresLogin"

    let isLoggedIn: @Sendable () async -> Bool
    let loginTarget: String
    let loginAction: String

    /// Creates a gate that sends calls to `loginTarget`/`loginAction` while `isLoggedIn()` is false.
    public init(loginTarget: String, loginAction: String, isLoggedIn: @escaping @Sendable () async -> Bool) {
        self.isLoggedIn = isLoggedIn
        self.loginTarget = loginTarget.lowercased()
        self.loginAction = loginAction
    }

    public var name: String { "LoginGate" }

    public func intercept(_ call: MediatorCall, next: Mediator.Next) async throws -> any Sendable {
        guard call.tags.contains(Self.requiresLogin), await !isLoggedIn() else { return try await next(call) }
        var parameters: MediatorParameters = ["redirectTarget": call.target, "redirectAction": call.action]
        if let url = call.url { parameters["redirectURL"] = url }
        var redirected = call
        redirected.target = loginTarget
        redirected.action = loginAction
        redirected.parameters = parameters
        redirected.pattern = nil
        redirected.tags = []
        return try await next(redirected)
    }
}

extension RouteInterceptor where Self == LoginGate {
    /// A ``LoginGate`` that redirects calls tagged ``LoginGate/requiresLogin`` to a login action.
    public static func loginGate(
        loginTarget: String, loginAction: String, isLoggedIn: @escaping @Sendable () async -> Bool
    ) -> LoginGate {
        LoginGate(loginTarget: loginTarget, loginAction: loginAction, isLoggedIn: isLoggedIn)
    }
}
