import Runway

/// One team's list filtered by price: a newer filter cancels the one in flight
/// (``LoadPolicy/cancelPrevious``), so only what the user asked for last lands.
final class ListingFilterAPIManager: APIManager, ListingSourced {
    let engine = ManagerEngine()
    let source: ListingSource

    init(source: ListingSource) { self.source = source }

    var loadPolicy: LoadPolicy { .cancelPrevious }

    func validate(params: [String: JSON]) throws(RunwayError) {
        try validateCity(params)
        guard let limit = params[source.maxPriceParameter]?.int, limit > 0 else {
            throw .paramsInvalid(field: "maxPrice", "the price limit must be a positive number")
        }
    }

    func validate(response: APIResponse) throws(RunwayError) { try validateList(response) }
}
