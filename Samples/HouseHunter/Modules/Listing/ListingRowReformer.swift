import HouseHunterScreen
import ListingInterface
import Runway

/// The list row's keys, typed and named after the reformer.
enum ListingRowKey {
    static let id = ReformedKey<Int>("ListingRow.id")
    static let kind = ReformedKey<String>("ListingRow.kind")
    static let title = ReformedKey<String>("ListingRow.title")
    static let price = ReformedKey<String>("ListingRow.price")
    static let area = ReformedKey<Int>("ListingRow.area")
    static let district = ReformedKey<String>("ListingRow.district")
}

/// Turns any of the three teams' lists into the same rows: one reformer for
/// second-hand, rental and new-home listings, whose keys all differ.
///
/// | row | second-hand | rental | new-home |
/// | --- | --- | --- | --- |
/// | id | `house_id` (number) | `id` (string) | `projectId` |
/// | title | `title` | `name` | `projectName` |
/// | price | `total_price` | `monthly_rent` | `avgPricePerSqm` |
/// | area | `area_sqm` | `size` | `minArea` |
/// | district | `district` | `area` | `region` |
struct ListingRowReformer: Reformer {
    struct Unreadable: Error, CustomStringConvertible {
        let description: String
    }

    func reform(_ data: JSON, from manager: any APIManager) throws -> [ReformedRecord] {
        guard let source = (manager as? any ListingSourced)?.source else {
            throw Unreadable(description: "\(type(of: manager)) is not a listing API")
        }
        guard let items = source.items(in: data) else {
            throw Unreadable(description: "no \(source.itemsPath.joined(separator: ".")) in the \(source.kind.label) list")
        }
        return try items.enumerated().map { index, item in try row(item, kind: source.kind, index: index) }
    }

    private func row(_ item: JSON, kind: ListingKind, index: Int) throws -> ReformedRecord {
        let keys: (id: String, title: String, price: String, area: String, district: String) =
            switch kind {
            case .sale: ("house_id", "title", "total_price", "area_sqm", "district")
            case .rent: ("id", "name", "monthly_rent", "size", "area")
            case .new: ("projectId", "projectName", "avgPricePerSqm", "minArea", "region")
            }
        // The rental team sends ids as strings, the others as numbers.
        guard let id = item[keys.id]?.int ?? item[keys.id]?.string.flatMap({ Int($0) }) else {
            throw Unreadable(description: "\(kind.label) item \(index) has no numeric \(keys.id)")
        }
        guard let price = item[keys.price]?.int else {
            throw Unreadable(description: "\(kind.label) item \(index) has no \(keys.price)")
        }
        var row = ReformedRecord()
        row[ListingRowKey.id] = id
        row[ListingRowKey.kind] = kind.rawValue
        row[ListingRowKey.title] = item[keys.title]?.string ?? "(untitled)"
        row[ListingRowKey.price] = Self.priceText(price, kind: kind)
        row[ListingRowKey.area] = item[keys.area]?.int
        row[ListingRowKey.district] = item[keys.district]?.string ?? ""
        return row
    }

    /// `CNY 3.2M`, `CNY 5,200/mo`, `CNY 65,000/m2`.
    static func priceText(_ price: Int, kind: ListingKind) -> String {
        switch kind {
        case .sale:
            let tenths = (price + 50_000) / 100_000
            return "CNY \(tenths / 10).\(tenths % 10)M"
        case .rent: return Money.cny(price) + "/mo"
        case .new: return Money.cny(price) + "/m2"
        }
    }
}
