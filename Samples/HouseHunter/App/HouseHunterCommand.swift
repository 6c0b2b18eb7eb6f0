import ArgumentParser

/// `house-hunter`: Runway's sample app, in a terminal.
@main
struct HouseHunterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "house-hunter",
        abstract: "HouseHunter, Runway's sample app: second-hand, rental and new-home listings from three APIs, in a terminal.",
        discussion: """
            Every screen is reached by URL through the mediator. Without --server, the app starts its \
            sample API server embedded, on 127.0.0.1, 127.0.0.2 and 127.0.0.3 with different delays.

              house-hunter 'app://listing/list?kind=rent&city=sh'
              house-hunter 'app://detail/show?id=42'
              house-hunter tour
              house-hunter interactive
            """,
        subcommands: [
            OpenCommand.self, TourCommand.self, InteractiveCommand.self, ServeCommand.self, RoutesCommand.self, PlatformCommand.self,
        ],
        defaultSubcommand: OpenCommand.self)
}

/// `house-hunter [open] URL...`: opens each URL in turn and prints its screen.
struct OpenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open", abstract: "Open URLs one after another and print their screens (the default).")

    @OptionGroup var options: AppOptions

    @Option(help: "USER:PASSWORD to type into a login screen when one appears (the sample user is demo:househunter).")
    var login: String?

    @Argument(help: "URLs such as 'app://listing/list?kind=rent&city=sh'.")
    var urls: [String] = []

    func validate() throws {
        if urls.isEmpty { throw ValidationError("give a URL to open, e.g. 'app://listing/list?kind=rent&city=sh'") }
        if let login, credentials(login) == nil { throw ValidationError("--login takes USER:PASSWORD") }
    }

    private func credentials(_ text: String) -> (user: String, password: String)? {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex, text.index(after: colon) != text.endIndex else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    func run() async throws {
        let actions = UserActions()
        let mediator = try AppMediator.make(actions: actions)
        for url in urls { try Console.checkURL(url, with: mediator) }
        let app = try await Startup.run { try await HouseHunterApp.start(options: options, mediator: mediator, actions: actions) }
        var failed = false
        for url in urls {
            var screen = await app.open(url, progress: Console.progress)
            Console.show(url, screen)
            if screen.kind == .login, let login, let (user, password) = credentials(login) {
                screen = await app.logIn(user: user, password: password, resumeURL: screen.resumeURL, progress: Console.progress)
                Console.show("login \(user) \(String(repeating: "*", count: password.count))", screen)
            }
            failed = failed || screen.kind.isFailure
        }
        try await app.shutdown()
        if failed { throw ExitCode.failure }
    }
}

/// `house-hunter routes`: the route table, from the mediator the app builds.
struct RoutesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "routes", abstract: "List every route the app's mediator knows.")

    func run() async throws {
        let mediator = try AppMediator.make(actions: UserActions())
        for route in mediator.routes { Console.out(route.description) }
    }
}

/// Start-up failures as one line and status 1.
enum Startup {
    static func run<T>(_ start: () async throws -> T) async throws -> T {
        do {
            return try await start()
        } catch {
            Console.error("house-hunter: could not start: \(error)")
            throw ExitCode.failure
        }
    }
}
