import HouseHunterScreen
import Testing

@Suite("Money")
struct MoneyTests {
    @Test func thousandsAreGrouped() {
        #expect(Money.grouped(1_234_567) == "1,234,567")
        #expect(Money.grouped(999) == "999")
        #expect(Money.grouped(1000) == "1,000")
        #expect(Money.grouped(0) == "0")
        #expect(Money.grouped(-45_000) == "-45,000")
        #expect(Money.cny(65000) == "CNY 65,000")
    }
}
