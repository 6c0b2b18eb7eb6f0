import HouseHunterScreen
import ListingInterface
import RunwayMediator

/// The listing module's target: lists from the three teams' APIs, paging and a price filter.
///
/// - `app://listing/list?kind=rent&city=sh`: the first page (`kind` is `sale`, `rent`, `new`
///   or `all`, which loads the three lists at once and reports progress);
/// - `app://listing/more?kind=rent&city=sh`: the next page of that list;
/// - `app://listing/filter?kind=rent&city=sh&maxPrice=6000`: the list up to a price; a newer
///   filter cancels one still in flight, whose screen is ``Screen/Kind/cancelled``.
///
/// Kept by the mediator (``TargetCaching/keep``), so its managers (and their page numbers)
/// live as long as the app.
public struct ListingTarget: MediatorTarget {
    /// The target's name: the host of its URLs.
    public static let name = "listing"
    /// Kept: the managers (and their page numbers) live as long as the app.
    public static var caching: TargetCaching { .keep }

    let state = ListingState()

    /// Creates the target (the mediator does, per call or once when kept).
    public init() {}

    /// Declares the module's actions and their routes.
    public static func declareActions(_ actions: inout MediatorActions<ListingTarget>) {
        actions.action("list", access: .remote) { target, call in
            let city = try call.parameters.string("city")
            return try await target.list(kinds: try Self.kinds(call.parameters, allowAll: true), city: city, mediator: call.mediator)
        }
        actions.action("more", access: .remote) { target, call in
            let kind = try Self.kinds(call.parameters, allowAll: false)[0]
            return try await target.more(kind, city: try call.parameters.string("city"), mediator: call.mediator)
        }
        actions.action("filter", access: .remote) { target, call in
            let kind = try Self.kinds(call.parameters, allowAll: false)[0]
            return try await target.filter(
                kind, city: try call.parameters.string("city"), maxPrice: try call.parameters.int("maxPrice"), mediator: call.mediator)
        }
    }

    /// The kinds named by the `kind` parameter (`rent` when absent).
    static func kinds(_ parameters: MediatorParameters, allowAll: Bool) throws -> [ListingKind] {
        let text = parameters.contains("kind") ? try parameters.string("kind") : "rent"
        if allowAll, text == "all" { return ListingKind.allCases }
        guard let kind = ListingKind(rawValue: text) else {
            let allowed = ListingKind.allCases.map(\.rawValue) + (allowAll ? ["all"] : [])
            throw MediatorError(.parameterInvalid, "kind must be one of \(allowed.joined(separator: ", ")), not '\(text)'", field: "kind")
        }
        return [kind]
    }
}
