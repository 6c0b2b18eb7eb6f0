import RunwayMediator
import Testing

// The code of the README's "Route by URL" and "Add a business module" sections, kept
// compiling and passing here.

// MARK: README: a business module's target

/// What the listing screen is, for this example.
struct ListingScreen: Sendable, Equatable {
    let id: Int
    let source: String
}

public struct ReadmeListingTarget: MediatorTarget {
    public static let name = "readme-listing"
    public init() {}
    public static func declareActions(_ actions: inout MediatorActions<ReadmeListingTarget>) {
        // Remote: deep links may open it. Typed placeholder: `id` arrives as an Int.
        actions.action("detail", access: .remote, routes: ["app://readme-listing/<int:id>"]) { _, call in
            ListingScreen(id: try call.parameters.int("id"), source: (try? call.parameters.string("ref")) ?? "app")
        }
        // Local-only (the default): no URL from outside can reach it.
        actions.action("clearCache") { _, _ in true }
    }
}

@Suite("README examples")
struct ReadmeExamplesTests {
    @Test func routeByURL() async throws {
        var builder = Mediator.Builder(defaultScheme: "app")
        try builder.register(ReadmeListingTarget.self)
        builder.add(.analytics { event in print("opened \(event.target)/\(event.action) in \(event.duration)") })
        let mediator = try builder.build()

        // Resolve only (no call): target, action, typed parameters.
        if let match = try mediator.resolve("app://readme-listing/42?ref=push") {
            #expect(match.action == "detail")
            #expect(try match.parameters.int("id") == 42)
        }
        // Open a deep link (remote by default).
        let screen = try await mediator.perform(url: "app://readme-listing/42?ref=push", as: ListingScreen.self)
        #expect(screen == ListingScreen(id: 42, source: "push"))
        // Local-only actions refuse remote calls, but code inside the app may call them.
        #expect(!mediator.canOpen(url: "app://readme-listing/clearCache"))
        let cleared = try await mediator.perform(target: "readme-listing", action: "clearCache", as: Bool.self)
        #expect(cleared)
        // Reverse routing.
        #expect(try mediator.url(target: "readme-listing", action: "detail", parameters: ["id": 7]) == "app://readme-listing/7")
    }
}
