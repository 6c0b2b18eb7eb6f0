import Runway

/// Pages through one team's list for a city: the manager keeps the page number.
final class ListingPagesAPIManager: PagedAPIManager, ListingSourced {
    let engine = ManagerEngine()
    let source: ListingSource

    init(source: ListingSource) { self.source = source }

    var pageSize: Int { 5 }
    var pageParameter: String { source.pageParameter }
    var pageSizeParameter: String { source.pageSizeParameter }

    func items(in response: JSON) -> [JSON] { source.items(in: response) ?? [] }

    func validate(params: [String: JSON]) throws(RunwayError) { try validateCity(params) }

    func validate(response: APIResponse) throws(RunwayError) { try validateList(response) }
}
