import AccountInterface
import HouseHunterScreen
import ListingInterface
import Runway
import RunwayMediator

/// The detail module's target: one listing, `app://detail/show?id=42` or `app://detail/42`.
///
/// The answer is cached by the app for ``DetailCaching/ttl``: opening the same listing again
/// within it shows `memory-cache` as the origin and costs no request.
public struct DetailTarget: MediatorTarget {
    /// The target's name: the host of its URLs.
    public static let name = "detail"

    /// Creates the target (the mediator does, per call or once when kept).
    public init() {}

    /// Declares the module's actions and their routes.
    public static func declareActions(_ actions: inout MediatorActions<DetailTarget>) {
        actions.action("show", access: .remote, routes: ["app://detail/show", "app://detail/<int:id>"]) { target, call in
            try await target.show(id: try call.parameters.int("id"), mediator: call.mediator)
        }
    }

    func show(id: Int, mediator: Mediator?) async throws -> Screen {
        let manager = ListingDetailAPIManager()
        try await manager.load(params: ["id": .int(Int64(id))])
        let detail = try manager.fetchData(with: DetailReformer())
        var blocks: [Screen.Block] = [.fields(detail.fields), .text(detail.description)]
        if let response = manager.lastResponse { blocks.append(.network([ResponseFacts(source: "detail #\(id)", response: response)])) }
        var links: [Link] = []
        if let url = try? mediator?.listingListURL(kind: detail.kind, city: detail.city) {
            links.append(Link("more like this", url: url))
        }
        if let url = try? mediator?.accountFavouritesURL() { links.append(Link("my favourites", url: url)) }
        if !links.isEmpty { blocks.append(.links(links)) }
        return Screen(title: "#\(detail.id) \(detail.title)", blocks: blocks)
    }
}
