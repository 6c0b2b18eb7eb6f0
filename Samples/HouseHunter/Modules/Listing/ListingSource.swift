import ListingInterface
import Runway

/// One team's list API: where it lives and what it calls its parameters and its list.
struct ListingSource: Sendable {
    let kind: ListingKind
    let serviceID: ServiceID
    let apiName: String
    let cityParameter: String
    let pageParameter: String
    let pageSizeParameter: String
    let maxPriceParameter: String
    /// The path to the list in a response.
    let itemsPath: [String]

    /// The list in `response`, or `nil` when the response does not have one.
    func items(in response: JSON) -> [JSON]? {
        var node: JSON? = response
        for key in itemsPath { node = node?[key] }
        return node?.array
    }

    static func of(_ kind: ListingKind) -> ListingSource {
        switch kind {
        case .sale:
            ListingSource(
                kind: .sale, serviceID: .secondHand, apiName: "houses", cityParameter: "city", pageParameter: "page",
                pageSizeParameter: "page_size", maxPriceParameter: "max_price", itemsPath: ["data", "houses"])
        case .rent:
            ListingSource(
                kind: .rent, serviceID: .rental, apiName: "rentals", cityParameter: "city", pageParameter: "page",
                pageSizeParameter: "pageSize", maxPriceParameter: "maxRent", itemsPath: ["items"])
        case .new:
            ListingSource(
                kind: .new, serviceID: .newHome, apiName: "projects/search", cityParameter: "cityCode", pageParameter: "p",
                pageSizeParameter: "size", maxPriceParameter: "maxPrice", itemsPath: ["result", "projects"])
        }
    }
}

/// A manager that calls one team's list API.
protocol ListingSourced: APIManager {
    var source: ListingSource { get }
}

extension ListingSourced {
    /// The team's API name.
    var apiName: String { source.apiName }
    /// The team's service.
    var serviceID: ServiceID { source.serviceID }

    /// Checks the city before anything is sent.
    func validateCity(_ params: [String: JSON]) throws(RunwayError) {
        guard let city = params[source.cityParameter]?.string, !city.isEmpty else {
            throw .paramsInvalid(field: "city", "choose a city (sh, bj or gz)")
        }
    }

    /// Checks the response has the team's list where the team puts it.
    func validateList(_ response: APIResponse) throws(RunwayError) {
        guard source.items(in: response.json) != nil else {
            throw .responseInvalid(
                "the \(source.kind.label) API answered without \(source.itemsPath.joined(separator: "."))", response: response)
        }
    }
}
