import Testing

@testable import RunwayMediator

@Suite("Route patterns")
struct RoutePatternTests {
    @Test func parsesSegmentsAndNames() throws {
        let pattern = try RoutePattern("APP://Listing/<int:id>/photos/<name>/*/<path:rest>")
        #expect(pattern.scheme == "app")
        #expect(pattern.placeholderNames == ["id", "name", "rest"])
        #expect(pattern.shape == "app://=listing/<int>/=photos/<>/<>/<**>")
    }

    @Test func literalsArePercentDecoded() throws {
        #expect(try RoutePattern("app://s/caf%C3%A9").shape == "app://=s/=café")
    }

    @Test func rejectsMalformedPatterns() {
        let bad = [
            "listing/<int:id>", "app://", "app://<int:id", "app://x/<a:b:c>", "app://x/<1a>", "app://x/<id>/<id>",
            "app://x/<path:a>/b", "app://x//y", "app://x/a<b>", "app://x?q=1", "app://x/**/y", "9app://x", "app://x/%zz",
        ]
        for text in bad {
            #expect(throws: MediatorError.self, "\(text)") { try RoutePattern(text) }
        }
    }
}
