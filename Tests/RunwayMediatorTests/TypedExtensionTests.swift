import RunwayMediator
import Testing

// The CTMediator category pattern. In an app these live in three targets:
// `ListingRoutes` (interface, depends only on RunwayMediator), `Listing` (the business module,
// depends on ListingRoutes) and any caller (depends on ListingRoutes, never on Listing).
// See Samples/Mediator for the real multi-target version driven by the build-tool plugin.

// MARK: ListingRoutes (interface target)

/// What callers get back: a value type owned by the interface target.
struct ListingSummary: Sendable, Equatable {
    var id: Int
    var title: String
}

/// The names the listing module answers to.
enum ListingRoutes {
    static let target = "listing-typed"
    static let detail = "detail"
}

extension Mediator {
    /// Typed helper: callers write `mediator.listingDetail(id: 42)`.
    func listingDetail(id: Int) async throws -> ListingSummary {
        try await perform(target: ListingRoutes.target, action: ListingRoutes.detail, parameters: ["id": id], as: ListingSummary.self)
    }

    /// The deep link to a listing.
    func listingDetailURL(id: Int) throws -> String {
        try url(target: ListingRoutes.target, action: ListingRoutes.detail, parameters: ["id": id])
    }
}

// MARK: Listing (business module)

struct TypedListingTarget: MediatorTarget {
    static let name = ListingRoutes.target
    static func declareActions(_ actions: inout MediatorActions<TypedListingTarget>) {
        actions.action(ListingRoutes.detail, access: .remote, routes: ["app://listing-typed/<int:id>"]) { _, call in
            let id = try call.parameters.int("id")
            return ListingSummary(id: id, title: "Listing \(id)")
        }
    }
}

// MARK: Caller

@Suite("Typed extensions")
struct TypedExtensionTests {
    @Test func callerUsesTypedHelpersOnly() async throws {
        var builder = Mediator.Builder()
        try builder.register(TypedListingTarget.self)
        let mediator = try builder.build()
        #expect(try await mediator.listingDetail(id: 42) == ListingSummary(id: 42, title: "Listing 42"))
        let url = try mediator.listingDetailURL(id: 7)
        #expect(url == "app://listing-typed/7")
        #expect(try await mediator.perform(url: url, as: ListingSummary.self) == ListingSummary(id: 7, title: "Listing 7"))
    }

    @Test func missingModuleIsATypedNotFound() async throws {
        let mediator = try Mediator.Builder().build()
        await #expect { try await mediator.listingDetail(id: 1) } throws: { ($0 as? MediatorError)?.code == .notFound }
    }
}
