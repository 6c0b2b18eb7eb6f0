import HouseHunterScreen
import Runway
import Testing

@Suite("Screen text")
struct ScreenTextTests {
    @Test func tablesLineUpUnderTheirHeadings() {
        let screen = Screen(
            title: "Rentals",
            blocks: [
                .table(
                    Table(
                        columns: ["ID", "TITLE", "PRICE"],
                        rows: [["7", "Loft", "CNY 5,200/mo"], ["42", "A much longer title", "CNY 3,000/mo"]]))
            ])
        #expect(
            screen.rendered() == """
                == Rentals ==

                  ID  TITLE                PRICE
                  --  -------------------  ------------
                  7   Loft                 CNY 5,200/mo
                  42  A much longer title  CNY 3,000/mo

                """)
    }

    @Test func longCellsAreCutAndEmptyTablesSaySo() {
        let long = String(repeating: "x", count: 60)
        let text = Screen(title: "T", blocks: [.table(Table(columns: ["A"], rows: [[long]])), .table(Table(columns: ["B"], rows: []))])
            .rendered()
        #expect(text.contains(String(repeating: "x", count: 37) + "..."))
        #expect(!text.contains(String(repeating: "x", count: 38)))
        #expect(text.contains("(none)"))
    }

    @Test func networkFactsShowOriginAddressAndPhases() throws {
        let network = ResponseFacts(
            source: "rental", origin: "network", address: "127.0.0.2:4000", addressNote: "fastest of 3",
            nameLookup: .zero, connect: .microseconds(150), firstByte: .milliseconds(2), total: .microseconds(2_500))
        let cached = ResponseFacts(source: "detail", origin: "memory-cache")
        let lines = Screen(title: "T", blocks: [.network([network, cached])]).rendered()
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        try #require(lines.count >= 6)
        #expect(lines[2].hasPrefix("  REQUEST  ORIGIN        ADDRESS"))
        #expect(lines[4] == "  rental   network       127.0.0.2:4000 (fastest of 3)  0.00ms  0.15ms   2.00ms      2.50ms")
        #expect(lines[5] == "  detail   memory-cache  -                              -       -        -           -")
        #expect(cached.isCacheHit && !network.isCacheHit)
    }

    @Test func factsComeFromTheResponseTheChainReturned() {
        var metrics = TransferMetrics(connect: .milliseconds(1), firstByte: .milliseconds(3), total: .milliseconds(4))
        metrics.remoteAddress = "127.0.0.3:9000"
        metrics.connectionReused = true
        let fromNetwork = ResponseFacts(source: "rent", response: Response(status: 200, metrics: metrics))
        #expect(fromNetwork.origin == "network" && fromNetwork.address == "127.0.0.3:9000" && fromNetwork.reused)
        let fromCache = ResponseFacts(source: "rent", response: Response(status: 200, metrics: metrics, origin: .memoryCache))
        #expect(fromCache.isCacheHit && fromCache.address.isEmpty)
    }

    @Test func fieldsAndLinksAlign() {
        let text = Screen(
            kind: .error, title: "Error",
            blocks: [
                .fields([Field("error", "RunwayError.timeout"), Field("HTTP status", "504")]),
                .links([Link("next", url: "app://a"), Link("details", url: "app://b")]),
            ]
        ).rendered()
        #expect(text.contains("  error:       RunwayError.timeout\n  HTTP status: 504\n"))
        #expect(text.contains("  -> next     app://a\n  -> details  app://b\n"))
    }

    @Test func annotatingFactsLeavesTheRestAlone() {
        let screen = Screen(title: "T", blocks: [.text("hello"), .network([ResponseFacts(source: "a", origin: "network", address: "x")])])
        let annotated = screen.mappingResponseFacts { facts in
            var copy = facts
            copy.addressNote = "fastest of 3"
            return copy
        }
        #expect(annotated.blocks[0] == .text("hello"))
        #expect(annotated.responseFacts.map(\.addressNote) == ["fastest of 3"])
    }
}
