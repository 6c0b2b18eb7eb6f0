import ListingInterface
import Runway
import Testing

@testable import Listing

@Suite("Listing reformer")
struct ListingRowReformerTests {
    func rows(_ kind: ListingKind, _ json: JSON) throws -> [ReformedRecord] {
        try ListingRowReformer().reform(json, from: ListingPagesAPIManager(source: .of(kind)))
    }

    @Test func oneReformerNormalisesTheThreeTeamsKeys() throws {
        let sale = try rows(
            .sale,
            [
                "code": 0,
                "data": ["houses": [["house_id": 42, "title": "3-room", "total_price": 3_250_000, "area_sqm": 89, "district": "Xuhui"]]],
            ])
        let rent = try rows(.rent, ["items": [["id": "42", "name": "3-room", "monthly_rent": 5200, "size": 89, "area": "Xuhui"]]])
        let new = try rows(
            .new,
            [
                "status": "ok",
                "result": [
                    "projects": [["projectId": 42, "projectName": "3-room", "avgPricePerSqm": 65000, "minArea": 89, "region": "Xuhui"]]
                ],
            ])
        for (list, kind, price) in [(sale, "sale", "CNY 3.3M"), (rent, "rent", "CNY 5,200/mo"), (new, "new", "CNY 65,000/m2")] {
            let row = try #require(list.first)
            #expect(row[ListingRowKey.id] == 42)
            #expect(row[ListingRowKey.kind] == kind)
            #expect(row[ListingRowKey.title] == "3-room")
            #expect(row[ListingRowKey.price] == price)
            #expect(row[ListingRowKey.area] == 89)
            #expect(row[ListingRowKey.district] == "Xuhui")
        }
    }

    @Test func aListWithoutTheTeamsKeyOrAnItemWithoutIdIsUnreadable() {
        #expect(throws: ListingRowReformer.Unreadable.self) { try rows(.sale, ["data": ["items": []]]) }
        #expect(throws: ListingRowReformer.Unreadable.self) { try rows(.rent, ["items": [["name": "no id", "monthly_rent": 1]]]) }
        #expect(throws: ListingRowReformer.Unreadable.self) { try rows(.new, ["result": ["projects": [["projectId": 1]]]]) }
    }

    @Test func pricesAreWrittenPerKind() {
        #expect(ListingRowReformer.priceText(2_000_000, kind: .sale) == "CNY 2.0M")
        #expect(ListingRowReformer.priceText(7_960_000, kind: .sale) == "CNY 8.0M")
        #expect(ListingRowReformer.priceText(12750, kind: .rent) == "CNY 12,750/mo")
    }
}
