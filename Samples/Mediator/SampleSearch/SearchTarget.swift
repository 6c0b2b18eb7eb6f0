import RunwayMediator
import SampleListingRoutes

/// The search module's target: its results screen reaches the listing module through the
/// mediator and the `SampleListingRoutes` interface only.
public struct SearchTarget: MediatorTarget {
    public static let name = "search"

    public init() {}

    public static func declareActions(_ actions: inout MediatorActions<SearchTarget>) {
        actions.action("results", access: .remote, routes: ["app://search/<path:query>"]) { _, call in
            let query = try call.parameters.string("query")
            guard let mediator = call.mediator else { return [String]() }
            // The first result is listing 42, fetched from the listing module by name.
            let top = try await mediator.listingDetail(id: 42)
            return ["\(query): \(top.title)", try mediator.listingDetailURL(id: top.id)]
        }
    }
}
