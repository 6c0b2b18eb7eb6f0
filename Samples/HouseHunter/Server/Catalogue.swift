/// One home of the sample catalogue, in the server's own terms (each team's API renames the keys).
public struct CatalogueListing: Sendable, Equatable {
    /// Unique across kinds and cities.
    public let id: Int
    /// `sale`, `rent` or `new`.
    public let kind: String
    /// `sh`, `bj` or `gz`.
    public let city: String
    /// The city's name.
    public let cityName: String
    /// The district.
    public let district: String
    /// A title for lists.
    public let title: String
    /// In CNY: the total price (sale), the monthly rent (rent), the price per square metre (new).
    public let price: Int
    /// Floor area in square metres (the smallest unit's, for new homes).
    public let area: Int
    /// Number of rooms (bedrooms for rentals).
    public let rooms: Int
    /// Street address.
    public let address: String
    /// A paragraph for the detail screen.
    public let description: String
}

/// The sample homes: 12 per kind and city, generated the same way on every run.
public enum Catalogue {
    /// City codes, names and districts.
    static let cities: [(code: String, name: String, districts: [String])] = [
        ("sh", "Shanghai", ["Xuhui", "Jing'an", "Pudong", "Minhang"]),
        ("bj", "Beijing", ["Chaoyang", "Haidian", "Dongcheng", "Xicheng"]),
        ("gz", "Guangzhou", ["Tianhe", "Yuexiu", "Haizhu", "Panyu"]),
    ]
    static let kinds = ["sale", "rent", "new"]
    static let perList = 12
    static let streets = ["Riverside Road", "Garden Lane", "Station Street", "Lake View Road", "Old Town Alley", "Park Avenue"]
    static let projects = ["Skyline Residences", "Maple Court", "Harbour One", "Bamboo Gardens", "Cloud Terrace", "Jade Park"]

    /// Every listing, ordered by id.
    public static let all: [CatalogueListing] = build()

    /// The listing with `id`, if any.
    public static func listing(id: Int) -> CatalogueListing? {
        all.indices.contains(id - 1) ? all[id - 1] : nil
    }

    /// The listings of `kind` in `city` priced at most `maxPrice`, ordered by id.
    public static func listings(kind: String, city: String, maxPrice: Int? = nil) -> [CatalogueListing] {
        all.filter { $0.kind == kind && $0.city == city && $0.price <= (maxPrice ?? .max) }
    }

    /// Whether `code` is a known city.
    public static func isCity(_ code: String) -> Bool { cities.contains { $0.code == code } }

    private static func build() -> [CatalogueListing] {
        var result: [CatalogueListing] = []
        for city in cities {
            for kind in kinds {
                for index in 0..<perList {
                    let id = result.count + 1
                    let rooms = 1 + id % 4
                    let district = city.districts[index % city.districts.count]
                    let price: Int
                    let title: String
                    switch kind {
                    case "sale":
                        price = 2_000_000 + (id * 7919 % 60) * 100_000
                        title = "\(rooms)-room apartment in \(district)"
                    case "rent":
                        price = 3000 + (id * 131 % 40) * 250
                        title = "\(rooms)-bedroom flat in \(district)"
                    default:
                        price = 40_000 + (id * 97 % 50) * 1000
                        title = "\(projects[id % projects.count]), \(district)"
                    }
                    let area = 35 + rooms * 20 + id * 37 % 25
                    let street = streets[id % streets.count]
                    result.append(
                        CatalogueListing(
                            id: id, kind: kind, city: city.code, cityName: city.name, district: district, title: title,
                            price: price, area: area, rooms: rooms, address: "\(10 + id) \(street), \(district), \(city.name)",
                            description:
                                "A \(area) m2 home with \(rooms) rooms in \(district), \(city.name); \(street) is two minutes away."))
                }
            }
        }
        return result
    }
}
