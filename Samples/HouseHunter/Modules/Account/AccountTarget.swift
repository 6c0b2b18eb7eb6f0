import AccountInterface
import DetailInterface
import HouseHunterScreen
import Runway
import RunwayMediator

/// The account module's target: login (which resumes the call the login gate redirected),
/// logout, the favourites screen behind the gate, and the login status for the gate.
///
/// - `app://account/favourites`: tagged ``LoginGate/requiresLogin``; the app's gate sends it to
///   `login` while nobody is logged in;
/// - `app://account/login`: the login screen. A local call with `user` and `password` (the
///   shell's form, ``Mediator/accountLogIn(user:password:redirectURL:as:)``) logs in, then opens
///   `redirectURL` (set by the gate) if there is one. A URL never logs anybody in: a password in
///   a link would end up in deep links, histories and logs, so a remote call only shows the form;
/// - `app://account/logout`;
/// - `status` (local-only): whether somebody is logged in.
public struct AccountTarget: MediatorTarget {
    /// The target's name: the host of its URLs.
    public static let name = "account"

    /// The sample server's user, shown on the login screen.
    static let sampleUser = (name: "demo", password: "househunter")

    /// Creates the target (the mediator does, per call or once when kept).
    public init() {}

    /// Declares the module's actions and their routes.
    public static func declareActions(_ actions: inout MediatorActions<AccountTarget>) {
        actions.action("login", access: .remote) { target, call in
            try await target.login(call)
        }
        actions.action("logout", access: .remote) { target, _ in
            await target.logout()
        }
        actions.action("favourites", access: .remote, tags: [LoginGate.requiresLogin]) { target, call in
            try await target.favourites(mediator: call.mediator)
        }
        actions.action("status") { _, _ in
            AccountSession.shared.isLoggedIn
        }
    }

    func login(_ call: MediatorCall) async throws -> Screen {
        let parameters = call.parameters
        let redirectURL = parameters.contains("redirectURL") ? try parameters.string("redirectURL") : nil
        guard parameters.contains("user") || parameters.contains("password") else {
            return loginForm(redirectURL: redirectURL, message: nil)
        }
        guard call.origin == .local else {
            return loginForm(
                redirectURL: redirectURL, message: "A link never logs anybody in: type the password into the app, not into a URL.")
        }
        let user = (try? parameters.string("user")) ?? ""
        let manager = LoginAPIManager()
        let json: JSON
        do {
            json = try await manager.load(params: ["user": .string(user), "password": .string((try? parameters.string("password")) ?? "")])
        } catch {
            guard error.code == .needsLogin || error.code == .paramsInvalid else { throw error }
            return loginForm(redirectURL: redirectURL, message: error.message)
        }
        guard let access = json["access_token"]?.string, let refresh = json["refresh_token"]?.string else {
            throw RunwayError(.responseInvalid, "the login answered without tokens")
        }
        AccountSession.shared.start(user: user, accessToken: access, refreshToken: refresh)
        let notice = Screen.Block.text("Logged in as \(user).")
        guard let mediator = call.mediator else { return Screen(title: "Logged in", blocks: [notice]) }
        var resumed: Screen
        if let redirectURL {
            resumed = try await mediator.perform(url: redirectURL, origin: call.origin, as: Screen.self)
        } else if let target = try? parameters.string("redirectTarget"), let action = try? parameters.string("redirectAction") {
            resumed = try await mediator.perform(target: target, action: action, origin: call.origin, as: Screen.self)
        } else {
            return Screen(title: "Logged in", blocks: [notice])
        }
        resumed.blocks.insert(notice, at: 0)
        return resumed
    }

    func logout() async -> Screen {
        var blocks: [Screen.Block] = [.text("Nobody is logged in now.")]
        if let refreshToken = AccountSession.shared.refreshToken {
            // The session ends here whether or not the server hears of it; if it does not, the
            // screen says so (its refresh token stays valid until it expires).
            do {
                try await LogoutAPIManager().load(params: ["refresh_token": .string(refreshToken)])
            } catch {
                blocks.append(.text("The server was not told (\(error.code): \(error.message)); its refresh token expires on its own."))
            }
        }
        AccountSession.shared.end()
        return Screen(title: "Logged out", blocks: blocks)
    }

    func favourites(mediator: Mediator?) async throws -> Screen {
        let manager = FavouritesAPIManager()
        let json: JSON
        do {
            json = try await manager.load()
        } catch {
            guard error.code == .needsLogin else { throw error }
            // The refresh token was rejected too: the session is over.
            AccountSession.shared.end()
            let url = try? mediator?.accountFavouritesURL()
            return loginForm(redirectURL: url, message: "Your session has ended (\(error.message)).")
        }
        let items = json["favourites"]?.array ?? []
        let rows = items.map { item -> [String] in
            [
                item["id"]?.int.map(String.init) ?? "?", item["kind"]?.string ?? "", item["title"]?.string ?? "",
                item["price"]?.int.map(Money.cny) ?? "", item["city"]?.string ?? "",
            ]
        }
        var blocks: [Screen.Block] = [
            .table(Table(columns: ["ID", "KIND", "TITLE", "PRICE", "CITY"], rows: rows)),
            .fields([
                Field("user", json["user"]?.string ?? AccountSession.shared.user ?? "?"),
                Field("token refreshes", String(AccountSession.shared.authenticator.refreshCount)),
            ]),
        ]
        if let response = manager.lastResponse { blocks.append(.network([ResponseFacts(source: "favourites", response: response)])) }
        var links: [Link] = []
        if let id = items.first?["id"]?.int, let url = try? mediator?.detailURL(id: id) {
            links.append(Link("details of #\(id)", url: url))
        }
        if let url = try? mediator?.url(target: AccountRoutes.target, action: AccountRoutes.logout) {
            links.append(Link("log out", url: url))
        }
        if !links.isEmpty { blocks.append(.links(links)) }
        return Screen(title: "Favourites", blocks: blocks)
    }

    func loginForm(redirectURL: String?, message: String?) -> Screen {
        var blocks: [Screen.Block] = []
        if let message { blocks.append(.text(message)) }
        blocks.append(.text(redirectURL.map { "Log in to open \($0)." } ?? "Log in."))
        blocks.append(.fields([Field("sample user", "\(Self.sampleUser.name) / \(Self.sampleUser.password)")]))
        return Screen(kind: .login, title: "Log in", blocks: blocks, resumeURL: redirectURL)
    }
}
