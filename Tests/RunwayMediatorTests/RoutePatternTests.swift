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

    @Test func aLiteralHoldingAnEncodedSlashHasAShapeOfItsOwn() throws {
        let one = try RoutePattern("app://x/a%2F%3Db")  // one segment, `a/=b`
        let two = try RoutePattern("app://x/a/b")
        #expect(one.shape != two.shape)
        #expect(one.shape == "app://=x/=a%2F=b")
        #expect(try RoutePattern("app://x/a%25b").shape != RoutePattern("app://x/a%252Fb").shape)
        var builder = Mediator.Builder(implicitRoutes: false)
        try builder.register(targetNamed: "x") { actions in
            actions.action("one", access: .remote, routes: ["app://x/a%2F%3Db"]) { _, _ in 1 }
            actions.action("two", access: .remote, routes: ["app://x/a/b"]) { _, _ in 2 }
        }
        let mediator = try builder.build()
        #expect(try mediator.resolve("app://x/a%2F%3Db")?.action == "one")
        #expect(try mediator.resolve("app://x/a/b")?.action == "two")
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
