import RunwayMediator
import SampleListingRoutes
import Testing

// This target never names ListingTarget or SearchTarget: MediatorRegistrationPlugin found them
// in SampleListing and SampleSearch and generated `registerDiscoveredTargets()`.

@Suite("Build-tool plugin")
struct DiscoveredTargetsTests {
    func mediator() throws -> Mediator {
        var builder = Mediator.Builder()
        try builder.registerDiscoveredTargets()
        return try builder.build()
    }

    @Test func generatedCodeRegistersEveryBusinessModule() throws {
        #expect(DiscoveredMediatorTargets.typeNames == ["SampleListing.ListingTarget", "SampleSearch.SearchTarget"])
        let mediator = try mediator()
        #expect(mediator.targetNames == ["listing", "search"])
        let sources = Set(mediator.routes.map(\.source))
        #expect(sources.contains("SampleListing/ListingTarget.swift:12"))
    }

    @Test func modulesReachEachOtherThroughTheMediatorOnly() async throws {
        let mediator = try mediator()
        let results = try await mediator.perform(url: "app://search/two%20rooms/berlin", as: [String].self)
        #expect(results == ["two rooms/berlin: Flat 42", "app://listing/42"])
        #expect(try await mediator.listingDetail(id: 7) == ListingSummary(id: 7, title: "Flat 7"))
        #expect(!mediator.canOpen(url: "app://listing/reindex"))
    }

    @Test func registeringTwiceIsADuplicateNamingTheGeneratedSources() throws {
        var builder = Mediator.Builder()
        try builder.registerDiscoveredTargets()
        #expect { try builder.registerDiscoveredTargets() } throws: { error in
            let error = error as? MediatorError
            return error?.code == .duplicateTarget && error?.sources.allSatisfy { $0.hasPrefix("SampleListing/") } == true
        }
    }
}
