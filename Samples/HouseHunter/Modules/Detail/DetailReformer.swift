import HouseHunterScreen
import Runway

/// What the detail screen shows of a listing.
struct ListingDetail: Sendable, Equatable {
    let id: Int
    let kind: String
    let city: String
    let title: String
    let fields: [Field]
    let description: String
}

/// Turns the detail API's answer into what the detail screen shows.
struct DetailReformer: Reformer {
    struct Unreadable: Error, CustomStringConvertible {
        let description: String
    }

    func reform(_ data: JSON, from manager: any APIManager) throws -> ListingDetail {
        guard let listing = data["listing"], let id = listing["id"]?.int, let price = listing["price"]?.int else {
            throw Unreadable(description: "the detail has no listing.id or listing.price")
        }
        let unit = listing["priceUnit"]?.string ?? "total"
        let priceText =
            switch unit {
            case "month": Money.cny(price) + " a month"
            case "m2": Money.cny(price) + " per m2"
            default: Money.cny(price)
            }
        let kind = listing["kind"]?.string ?? ""
        let fields = [
            Field("Kind", ["sale": "second-hand", "rent": "rental", "new": "new-home"][kind] ?? kind),
            Field("City", listing["cityName"]?.string ?? ""),
            Field("District", listing["district"]?.string ?? ""),
            Field("Address", listing["address"]?.string ?? ""),
            Field("Price", priceText),
            Field("Area", listing["area"]?.int.map { "\($0) m2" } ?? ""),
            Field("Rooms", listing["rooms"]?.int.map(String.init) ?? ""),
        ]
        return ListingDetail(
            id: id, kind: kind, city: listing["city"]?.string ?? "", title: listing["title"]?.string ?? "Listing \(id)",
            fields: fields, description: listing["description"]?.string ?? "")
    }
}
