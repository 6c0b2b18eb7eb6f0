import RunwayMediator

/// The listing module's interface: its target and action names and typed helpers. Other
/// modules import this small target, never `Listing` itself.
public enum ListingRoutes {
    /// The target's name: the host of `app://listing/...`.
    public static let target = "listing"
    /// The first page of a list: `app://listing/list?kind=rent&city=sh`.
    public static let list = "list"
    /// The next page of the list last opened for a kind and city.
    public static let more = "more"
    /// A filtered list (cancel-previous: a newer filter cancels an older one in flight).
    public static let filter = "filter"
}

/// The kinds of listing; each comes from another team's API with its own key names.
public enum ListingKind: String, CaseIterable, Sendable {
    /// Second-hand homes for sale.
    case sale
    /// Homes to rent.
    case rent
    /// New-home projects.
    case new

    /// How a screen names the kind.
    public var label: String {
        switch self {
        case .sale: "second-hand"
        case .rent: "rental"
        case .new: "new-home"
        }
    }
}

extension Mediator {
    /// The deep link to the first page of `kind` listings in `city` (`kind` may be `"all"`).
    public func listingListURL(kind: String, city: String) throws -> String {
        try url(target: ListingRoutes.target, action: ListingRoutes.list, parameters: ["kind": kind, "city": city])
    }

    /// The deep link to the next page of the `kind` list in `city`.
    public func listingMoreURL(kind: String, city: String) throws -> String {
        try url(target: ListingRoutes.target, action: ListingRoutes.more, parameters: ["kind": kind, "city": city])
    }

    /// The deep link to `kind` listings in `city` up to `maxPrice`.
    public func listingFilterURL(kind: String, city: String, maxPrice: Int) throws -> String {
        try url(
            target: ListingRoutes.target, action: ListingRoutes.filter,
            parameters: ["kind": kind, "city": city, "maxPrice": String(maxPrice)])
    }
}
