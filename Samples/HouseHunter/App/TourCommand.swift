import ArgumentParser
import Foundation
import HouseHunterScreen
import ListingInterface
import RunwayMediator

/// `house-hunter tour`: the README's first command. A scripted walk through the app, printing
/// what happens at each step.
struct TourCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tour",
        abstract: "A scripted tour: list, page, filter, detail, a screen behind the login gate, the action log.")

    @OptionGroup var options: AppOptions

    func run() async throws {
        let actions = UserActions()
        let mediator = try AppMediator.make(actions: actions)
        // The embedded server's tokens live two seconds, so the tour can show a refresh.
        let lifetime = options.server == nil ? min(options.tokenLifetimeDuration, .seconds(2)) : options.tokenLifetimeDuration
        let app = try await Startup.run {
            try await HouseHunterApp.start(options: options, mediator: mediator, actions: actions, tokenLifetime: lifetime)
        }
        let tour = Tour(app: app, tokenLifetime: lifetime)
        let succeeded = await tour.run()
        try await app.shutdown()
        if !succeeded { throw ExitCode.failure }
    }
}

/// The tour's steps. Each opens URLs through the mediator, exactly as a user or a deep link
/// would, and checks the screens are the expected kind.
struct Tour {
    let app: HouseHunterApp
    let tokenLifetime: Duration
    static let steps = 7
    private let problems = ProblemCount()

    init(app: HouseHunterApp, tokenLifetime: Duration) {
        self.app = app
        self.tokenLifetime = tokenLifetime
    }

    /// Runs every step; `false` when a screen was not what the step expected.
    func run() async -> Bool {
        let serverText = app.server == nil ? "the server at \(app.serverURL.absoluteString)" : "the embedded sample server"
        Console.out("HouseHunter tour: every step opens URLs through the mediator, against \(serverText).")
        startUp()
        await lists()
        await paging()
        await filter()
        await detail()
        await loginGate()
        await actionLog()
        let count = problems.count
        Console.out()
        Console.out(
            count == 0 ? "Tour finished: \(Self.steps) steps." : "Tour finished with \(count) unexpected screen\(count == 1 ? "" : "s").")
        return count == 0
    }

    private func step(_ number: Int, _ title: String) {
        Console.out("\n[\(number)/\(Self.steps)] \(title)\n")
    }

    /// Opens `url`, prints the screen, and counts a problem when it is not `expected`.
    @discardableResult
    private func open(_ url: String, expecting expected: Screen.Kind = .content) async -> Screen {
        let screen = await app.open(url, progress: Console.progress)
        Console.show(url, screen)
        if screen.kind != expected {
            Console.out("  UNEXPECTED: a \(screen.kind) screen where the tour expected \(expected)\n")
            problems.add()
        }
        return screen
    }

    private func startUp() {
        step(1, "Start-up: server, addresses, chain, services, modules")
        var lines: [Field] = []
        if let server = app.server {
            let addresses = zip(server.configuration.addresses, server.endpoints).map { "\($1) (\(Milliseconds($0.delay)))" }
            lines.append(Field("server", "embedded, listening on " + addresses.joined(separator: ", ")))
        } else {
            lines.append(Field("server", app.serverURL.absoluteString))
        }
        if let host = SampleSetup.hostNames.first {
            let order = app.network.bypass.endpoints(for: host).map(\.description)
            lines.append(Field("addresses", "IP list fetched and probed, fastest first: " + order.joined(separator: ", ")))
        }
        lines.append(Field("hosts", SampleSetup.hostNames.joined(separator: ", ") + " (no DNS: the bypass connects to the addresses)"))
        lines.append(Field("chain", app.network.chainDescription))
        lines.append(Field("services", app.network.registry.serviceIDs.map(\.rawValue).sorted().joined(separator: ", ")))
        let targets = app.mediator.targetNames.filter { $0 != AppMediator.shellTarget }
        lines.append(
            Field(
                "modules", targets.joined(separator: ", ") + " (registered by the build-tool plugin; \(app.mediator.routes.count) routes)"))
        lines.append(Field("action log", "RunwayActionLog: an SQLite outbox, uploaded 30 at a time to POST actions/batch (step 7)"))
        Console.out(Screen(title: "Start-up", blocks: [.fields(lines)]).rendered())
    }

    private func lists() async {
        step(2, "Lists from the three teams' APIs at once, normalised by one reformer")
        await open(url(ListingRoutes.list, ["kind": "all", "city": "sh"]))
    }

    private func paging() async {
        step(3, "Paging: the manager keeps the page number")
        await open(url(ListingRoutes.more, ["kind": "rent", "city": "sh"]))
    }

    private func filter() async {
        step(4, "Filter: the user lowers the maximum rent three times in quick succession; a newer filter cancels the one in flight")
        let limits = [9000, 7000, 6000]
        var pending: [(url: String, task: Task<Screen, Never>)] = []
        let path = "/rent/v1/rentals"
        for limit in limits {
            let url = url(ListingRoutes.filter, ["kind": "rent", "city": "sh", "maxPrice": String(limit)])
            let before = app.server?.requestCount(path: path) ?? 0
            let app = self.app
            pending.append((url, Task { await app.open(url) }))
            // Wait until the server has the request, so the next filter finds it in flight.
            if let server = app.server {
                _ = await Poll.until(timeout: .seconds(10)) { server.requestCount(path: path) > before }
            } else {
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        var screens: [Screen] = []
        for (url, task) in pending {
            let screen = await task.value
            screens.append(screen)
            let outcome = screen.kind == .cancelled ? "cancelled, never shown" : "landed"
            Console.out("  \(url)  -> \(outcome)")
        }
        Console.out("")
        guard let last = screens.last, let url = pending.last?.url else { return }
        Console.show(url, last)
        if last.kind != .content {
            Console.out("  UNEXPECTED: the last filter did not land\n")
            problems.add()
        }
    }

    private func detail() async {
        step(5, "Detail, twice: from the network, then from the cache")
        let url = url("show", ["id": "42"], target: "detail")
        await open(url)
        await open(url)
    }

    private func loginGate() async {
        step(6, "A screen behind the login gate: favourites")
        let favourites = url("favourites", [:], target: "account")
        let gate = await open(favourites, expecting: .login)
        // The user types the sample credentials into the form: a local call, never a URL.
        let (user, password) = SampleSetup.sampleUser
        let screen = await app.logIn(user: user, password: password, resumeURL: gate.resumeURL, progress: Console.progress)
        Console.show(
            "login \(user) \(String(repeating: "*", count: password.count))   (typed into the form: a local call, never a URL)", screen)
        if screen.kind != .content {
            Console.out("  UNEXPECTED: a \(screen.kind) screen after logging in\n")
            problems.add()
        }
        let wait = tokenLifetime + .milliseconds(500)
        guard wait <= .seconds(10) else {
            Console.out("  (the server's tokens live \(Milliseconds(tokenLifetime)); not waiting for one to expire)")
            return
        }
        Console.out("  waiting \(Milliseconds(wait)) for the access token to expire; the next call refreshes it once and replays\n")
        try? await Task.sleep(for: wait)
        await open(favourites)
    }

    private func actionLog() async {
        step(7, "Action log: what the user did, flushed")
        for line in await app.actions.flush() { Console.out("  " + line) }
        guard let log = app.server?.actionLog else { return }
        let records = log.records
        let names = Dictionary(grouping: records, by: \.name).mapValues(\.count).sorted { $0.key < $1.key }
        Console.out(
            "  the server received: \(records.count) records in \(log.batchCount) batch\(log.batchCount == 1 ? "" : "es") ("
                + names.map { "\($0.value) \($0.key)" }.joined(separator: ", ") + "), de-duplicated by record id")
        if let last = records.last(where: { $0.name == "filter.changed" }) {
            let attributes = last.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            Console.out("  e.g. filter.changed: \(attributes)")
        }
    }

    private func url(_ action: String, _ parameters: MediatorParameters, target: String = ListingRoutes.target) -> String {
        (try? app.mediator.url(target: target, action: action, parameters: parameters)) ?? "app://\(target)/\(action)"
    }
}

/// Counts unexpected screens (the tour's steps run one after another).
final class ProblemCount: Sendable {
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var value = 0

    var count: Int { lock.withLock { value } }

    func add() { lock.withLock { value += 1 } }
}

/// Waits for a condition without a tight deadline.
enum Poll {
    /// Checks `condition` every 10 ms until it holds (`true`) or `timeout` passes (`false`).
    static func until(timeout: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }
}
