import AccountInterface
import Foundation
import HouseHunterScreen
import HouseHunterServer
import RunwayMediator

/// A running HouseHunter: the mediator, the network, and the embedded server unless the app
/// talks to a running one.
final class HouseHunterApp: Sendable {
    let mediator: Mediator
    let network: AppNetwork
    /// The embedded server, `nil` with `--server`.
    let server: SampleServer?
    let actions: UserActions
    let serverURL: URL

    private init(mediator: Mediator, network: AppNetwork, server: SampleServer?, actions: UserActions, serverURL: URL) {
        self.mediator = mediator
        self.network = network
        self.server = server
        self.actions = actions
        self.serverURL = serverURL
    }

    /// Starts the embedded server (unless `options.server` names one), probes its addresses,
    /// builds the chain, bootstraps the services and starts the action logger. Once per process.
    static func start(
        options: AppOptions, mediator: Mediator, actions: UserActions, tokenLifetime: Duration? = nil
    ) async throws -> HouseHunterApp {
        var server: SampleServer?
        let address: ServerAddress
        if let text = options.server {
            address = try ServerAddress(text)
        } else {
            let embedded = try await SampleServer.start(
                .init(
                    secret: options.secret, hostNames: SampleSetup.hostNames,
                    tokenLifetime: tokenLifetime ?? options.tokenLifetimeDuration))
            server = embedded
            address = try ServerAddress(embedded.url.absoluteString)
        }
        do {
            let network = try await AppNetwork.start(server: address.url, endpoint: address.endpoint, options: options)
            try actions.start(
                file: UserActions.file(option: options.actionLog), registry: network.registry, timeout: options.requestTimeout)
            return HouseHunterApp(mediator: mediator, network: network, server: server, actions: actions, serverURL: address.url)
        } catch {
            await server?.shutdown()
            throw error
        }
    }

    /// Opens `url` through the mediator and returns the screen to show: the module's screen
    /// with the address of every request annotated, or an error or not-found screen. Never throws.
    func open(_ url: String, progress: ScreenProgress.Reporter? = nil) async -> Screen {
        await screen(for: url, progress: progress) { mediator in try await mediator.perform(url: url) }
    }

    /// Logs in with what the user typed into a login screen (a local call: the password never
    /// goes into a URL), then shows what the login gate had stopped, `resumeURL`. Never throws.
    func logIn(user: String, password: String, resumeURL: String?, progress: ScreenProgress.Reporter? = nil) async -> Screen {
        await screen(for: "login \(user)", progress: progress) { mediator in
            try await mediator.accountLogIn(user: user, password: password, redirectURL: resumeURL, as: (any Sendable).self)
        }
    }

    /// Runs one mediator call and turns what it answers into the screen to show.
    private func screen(
        for label: String, progress: ScreenProgress.Reporter?, _ call: @Sendable (Mediator) async throws -> any Sendable
    ) async -> Screen {
        do {
            let result = try await ScreenProgress.withReporter(progress ?? { _, _, _ in }) {
                try await call(mediator)
            }
            guard let screen = result as? Screen else {
                return Screen(kind: .error, title: "Error", blocks: [.text("\(label) answered \(type(of: result)), not a screen.")])
            }
            return screen.mappingResponseFacts { facts in
                var annotated = facts
                annotated.addressNote = network.note(for: facts.address)
                return annotated
            }
        } catch {
            return ErrorScreen.make(error, url: label)
        }
    }

    /// Stops the action logger (what it has not uploaded waits in its outbox for the next run),
    /// then the embedded server, then writes the calls to the `--har` file, if any.
    /// - Throws: `RunwayError` `.fileIO` when the HAR file cannot be written (all else stopped).
    func shutdown() async throws {
        await actions.shutdown()
        await server?.shutdown()
        try network.writeHAR()
    }
}
