import RunwayMediator
import SampleListingRoutes

/// The listing module's target. Found at build time by `MediatorRegistrationPlugin` because it
/// is a public top-level type conforming to `MediatorTarget`.
public struct ListingTarget: MediatorTarget {
    public static let name = "listing"

    public init() {}

    public static func declareActions(_ actions: inout MediatorActions<ListingTarget>) {
        actions.action("detail", access: .remote, routes: ["app://listing/<int:id>"]) { _, call in
            let id = try call.parameters.int("id")
            return ListingSummary(id: id, title: "Flat \(id)")
        }
        actions.action("reindex") { _, _ in
            "reindexed"
        }
    }
}
