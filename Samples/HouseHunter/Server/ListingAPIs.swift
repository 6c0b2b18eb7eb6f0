import Foundation
import Hummingbird
import Runway
import RunwayTestServer

/// The three listing teams' APIs and the shared detail API.
///
/// Each team names things its own way, as teams do:
///
/// | team | path | parameters | list key | id | price |
/// | --- | --- | --- | --- | --- | --- |
/// | second-hand | `/esf/v2/houses` | `city`, `page`, `page_size`, `max_price` | `data.houses` | `house_id` (number) | `total_price` |
/// | rental | `/rent/v1/rentals` | `city`, `page`, `pageSize`, `maxRent` | `items` | `id` (string) | `monthly_rent` |
/// | new-home | `/xf/projects/search` | `cityCode`, `p`, `size`, `maxPrice` | `result.projects` | `projectId` | `avgPricePerSqm` |
///
/// Errors differ too: second-hand answers 200 with a non-zero `code`, rental answers 400 with
/// `error`, new-home answers 200 with `status: "error"`. A request with a price limit (a filter)
/// takes ``SampleServer/Configuration/filterDelay`` longer: filtering is the expensive query.
enum ListingAPIs {
    static func add(to router: RouterGroup<TestRequestContext>, filterDelay: Duration) {
        router.get("/esf/v2/houses") { request, _ in
            let parsed = try await PageQuery(
                request, city: "city", page: "page", size: "page_size", maxPrice: "max_price", filterDelay: filterDelay)
            guard let query = parsed.valid else {
                return Reply.json(["code": 2001, "message": .string(parsed.problem)], for: request)
            }
            let page = query.page(of: Catalogue.listings(kind: "sale", city: query.city, maxPrice: query.maxPrice))
            let houses: [JSON] = page.items.map { listing in
                [
                    "house_id": .int(Int64(listing.id)), "title": .string(listing.title), "total_price": .int(Int64(listing.price)),
                    "area_sqm": .int(Int64(listing.area)), "district": .string(listing.district), "room_count": .int(Int64(listing.rooms)),
                ]
            }
            return Reply.json(
                ["code": 0, "data": ["houses": .array(houses), "page": .int(Int64(query.page)), "total": .int(Int64(page.total))]],
                for: request)
        }
        router.get("/rent/v1/rentals") { request, _ in
            let parsed = try await PageQuery(
                request, city: "city", page: "page", size: "pageSize", maxPrice: "maxRent", filterDelay: filterDelay)
            guard let query = parsed.valid else { return Reply.json(["error": .string(parsed.problem)], status: .badRequest, for: request) }
            let page = query.page(of: Catalogue.listings(kind: "rent", city: query.city, maxPrice: query.maxPrice))
            let items: [JSON] = page.items.map { listing in
                [
                    "id": .string(String(listing.id)), "name": .string(listing.title), "monthly_rent": .int(Int64(listing.price)),
                    "size": .int(Int64(listing.area)), "area": .string(listing.district), "bedrooms": .int(Int64(listing.rooms)),
                ]
            }
            return Reply.json(["items": .array(items), "hasMore": .bool(page.hasMore)], for: request)
        }
        router.get("/xf/projects/search") { request, _ in
            let parsed = try await PageQuery(
                request, city: "cityCode", page: "p", size: "size", maxPrice: "maxPrice", filterDelay: filterDelay)
            guard let query = parsed.valid else { return Reply.json(["status": "error", "reason": .string(parsed.problem)], for: request) }
            let page = query.page(of: Catalogue.listings(kind: "new", city: query.city, maxPrice: query.maxPrice))
            let projects: [JSON] = page.items.map { listing in
                [
                    "projectId": .int(Int64(listing.id)), "projectName": .string(listing.title),
                    "avgPricePerSqm": .int(Int64(listing.price)), "minArea": .int(Int64(listing.area)), "region": .string(listing.district),
                ]
            }
            return Reply.json(["status": "ok", "result": ["projects": .array(projects), "count": .int(Int64(page.total))]], for: request)
        }
        router.get("/api/listings/detail") { request, _ in
            guard let text = Reply.query(request, "id"), let id = Int(text) else {
                return Reply.error(.badRequest, code: 400, "id must be a number", for: request)
            }
            guard let listing = Catalogue.listing(id: id) else {
                return Reply.error(.notFound, code: 404, "no listing \(id)", for: request)
            }
            let unit = ["sale": "total", "rent": "month", "new": "m2"][listing.kind] ?? "total"
            return Reply.json(
                [
                    "listing": [
                        "id": .int(Int64(listing.id)), "kind": .string(listing.kind), "city": .string(listing.city),
                        "cityName": .string(listing.cityName), "title": .string(listing.title), "price": .int(Int64(listing.price)),
                        "priceUnit": .string(unit), "area": .int(Int64(listing.area)), "rooms": .int(Int64(listing.rooms)),
                        "district": .string(listing.district), "address": .string(listing.address),
                        "description": .string(listing.description),
                    ]
                ], for: request)
        }
    }
}

/// The paging and filter parameters of one list request, under the team's names.
struct PageQuery {
    var city = ""
    var page = 1
    var size = 10
    var maxPrice: Int?
    var problem = ""

    /// Reads and checks the parameters; waits `filterDelay` when a price limit is given.
    init(
        _ request: Request, city cityName: String, page pageName: String, size sizeName: String, maxPrice priceName: String,
        filterDelay: Duration
    ) async throws {
        city = Reply.query(request, cityName) ?? ""
        if !Catalogue.isCity(city) { problem = "\(cityName) must be sh, bj or gz" }
        if let text = Reply.query(request, pageName) {
            guard let value = Int(text), value >= 1 else {
                problem = "\(pageName) must be a positive number"
                return
            }
            page = value
        }
        if let text = Reply.query(request, sizeName) {
            guard let value = Int(text), (1...50).contains(value) else {
                problem = "\(sizeName) must be 1 to 50"
                return
            }
            size = value
        }
        if let text = Reply.query(request, priceName) {
            guard let value = Int(text), value > 0 else {
                problem = "\(priceName) must be a positive number"
                return
            }
            maxPrice = value
            try await Task.sleep(for: filterDelay)
        }
    }

    /// `self` when every parameter is valid.
    var valid: PageQuery? { problem.isEmpty ? self : nil }

    /// The requested page of `listings`.
    func page(of listings: [CatalogueListing]) -> (items: ArraySlice<CatalogueListing>, total: Int, hasMore: Bool) {
        let start = min((page - 1) * size, listings.count)
        let end = min(start + size, listings.count)
        return (listings[start..<end], listings.count, end < listings.count)
    }
}
