import AccountInterface
import DetailInterface
import Foundation
import HouseHunterScreen
import ListingInterface
import RunwayMediator
import Testing

// This target never names ListingTarget, DetailTarget or AccountTarget:
// MediatorRegistrationPlugin found them in HouseHunter's business modules (Listing, Detail,
// Account) and generated `registerDiscoveredTargets()`. The modules never import each other;
// they reach each other through the interface targets and the mediator.

@Suite("Build-tool plugin")
struct DiscoveredTargetsTests {
    func mediator() throws -> Mediator {
        let reference = Reference()
        var builder = Mediator.Builder()
        try builder.registerDiscoveredTargets()
        builder.add(
            .loginGate(loginTarget: AccountRoutes.target, loginAction: AccountRoutes.login) {
                (try? await reference.mediator?.accountIsLoggedIn()) ?? false
            })
        let mediator = try builder.build()
        reference.mediator = mediator
        return mediator
    }

    @Test func generatedCodeRegistersEveryBusinessModule() throws {
        #expect(DiscoveredMediatorTargets.typeNames == ["Account.AccountTarget", "Detail.DetailTarget", "Listing.ListingTarget"])
        let mediator = try mediator()
        #expect(mediator.targetNames == ["account", "detail", "listing"])
        let sources = Set(mediator.routes.map(\.source))
        #expect(sources.contains { $0.hasPrefix("Detail/DetailTarget.swift:") })
        #expect(sources.contains { $0.hasPrefix("Listing/ListingTarget.swift:") })
    }

    @Test func theInterfacesNameActionsTheModulesDeclare() throws {
        let mediator = try mediator()
        let named = [
            (ListingRoutes.target, [ListingRoutes.list, ListingRoutes.more, ListingRoutes.filter]),
            (DetailRoutes.target, [DetailRoutes.show]),
            (AccountRoutes.target, [AccountRoutes.login, AccountRoutes.logout, AccountRoutes.favourites, AccountRoutes.status]),
        ]
        for (target, actions) in named {
            for action in actions { #expect(mediator.hasAction(target: target, action: action), "\(target)/\(action)") }
        }
    }

    @Test func routesResolveWithTypedParametersAndLocalActionsStayLocal() throws {
        let mediator = try mediator()
        let detail = try #require(try mediator.resolve("app://detail/42"))
        #expect(detail.target == "detail" && detail.action == "show")
        #expect(try detail.parameters.int("id") == 42)
        #expect(try mediator.resolve("app://listing/list?kind=rent&city=sh")?.action == "list")
        #expect(mediator.canOpen(url: "app://account/favourites"))
        #expect(!mediator.canOpen(url: "app://account/status"))
        #expect(try mediator.detailURL(id: 7) == "app://detail/show?id=7")
    }

    @Test func theLoginGateAsksTheAccountModuleThroughItsInterface() async throws {
        let mediator = try mediator()
        #expect(try await mediator.accountIsLoggedIn() == false)
        // Nobody is logged in: the gate sends the call to the account module's login screen,
        // which offers a link that logs in and comes back. No network is involved.
        let screen = try await mediator.perform(url: "app://account/favourites", as: Screen.self)
        #expect(screen.kind == .login)
        #expect(screen.rendered().contains("Log in to open app://account/favourites."))
    }

    @Test func registeringTwiceIsADuplicateNamingTheGeneratedSources() throws {
        var builder = Mediator.Builder()
        try builder.registerDiscoveredTargets()
        #expect { try builder.registerDiscoveredTargets() } throws: { error in
            let error = error as? MediatorError
            return error?.code == .duplicateTarget && error?.sources.allSatisfy { $0.hasPrefix("Account/") } == true
        }
    }
}

/// The mediator, for the login gate registered before it was built.
private final class Reference: Sendable {
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var value: Mediator?

    var mediator: Mediator? {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
