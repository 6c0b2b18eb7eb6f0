import RunwayMediator

/// The listing module's interface: names, value types and typed helpers. Callers import this
/// small target, never `SampleListing` itself (the CTMediator category pattern).
public enum ListingRoutes {
    /// The target's name.
    public static let target = "listing"
    /// The detail screen action.
    public static let detail = "detail"
}

/// What the listing detail action returns to callers.
public struct ListingSummary: Sendable, Equatable {
    /// The listing's id.
    public var id: Int
    /// Its title.
    public var title: String

    /// Creates a summary.
    public init(id: Int, title: String) {
        self.id = id
        self.title = title
    }
}

extension Mediator {
    /// The listing with `id`, from the listing module (whichever target registered under `listing`).
    public func listingDetail(id: Int) async throws -> ListingSummary {
        try await perform(target: ListingRoutes.target, action: ListingRoutes.detail, parameters: ["id": id], as: ListingSummary.self)
    }

    /// The deep link to the listing with `id`.
    public func listingDetailURL(id: Int) throws -> String {
        try url(target: ListingRoutes.target, action: ListingRoutes.detail, parameters: ["id": id])
    }
}
