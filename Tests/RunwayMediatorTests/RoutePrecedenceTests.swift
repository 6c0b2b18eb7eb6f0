import Testing

@testable import RunwayMediator

/// Which action a set of patterns resolves each URL to, registered in a given order.
private func resolutions(patterns: [String], urls: [String], order: [Int]) throws -> [String] {
    var builder = Mediator.Builder(implicitRoutes: false)
    try builder.register(targetNamed: "routes") { actions in
        for index in order {
            actions.action("r\(index)", access: .remote, routes: [patterns[index]]) { _, _ in index }
        }
    }
    let mediator = try builder.build()
    return try urls.map { url in
        guard let match = try mediator.resolve(url) else { return "none" }
        return match.action + " " + match.parameters.pairs.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    }
}

@Suite("Route precedence")
struct RoutePrecedenceTests {
    let patterns = [
        "app://user/<int:id>",
        "app://user/<name>",
        "app://user/me",
        "app://user/<path:rest>",
        "app://user/<uuid:token>",
        "app://user/<double:score>",
        "app://user/<int:id>/posts",
        "app://user/*/posts",
        "app://user/me/<int:page>",
        "app://search/<path:rest>",
        "app://search/recent",
    ]

    @Test func literalBeatsTypedBeatsUntypedBeatsCatchAll() throws {
        let urls = [
            "app://user/me", "app://user/42", "app://user/bob", "app://user/a/b/c", "app://user/4.5",
            "app://user/6F9619FF-8B86-D011-B42D-00CF4FC964FF", "app://search/recent", "app://search/recent/x",
        ]
        let result = try resolutions(patterns: patterns, urls: urls, order: Array(patterns.indices))
        #expect(result[0] == "r2 ")
        #expect(result[1] == "r0 id=42")
        #expect(result[2] == "r1 name=bob")
        #expect(result[3] == "r3 rest=a/b/c")
        #expect(result[4] == "r5 score=4.5")
        #expect(result[5].hasPrefix("r4 token="))
        #expect(result[6] == "r10 ")
        #expect(result[7] == "r9 rest=recent/x")
    }

    @Test func backtracksWhenTheSpecificBranchDeadEnds() throws {
        let urls = ["app://user/me/posts", "app://user/42/posts", "app://user/bob/posts", "app://user/me/3", "app://user/me/x"]
        let result = try resolutions(patterns: patterns, urls: urls, order: Array(patterns.indices))
        // "me" is a literal branch with no "posts" child: back up to <int>, which rejects "me", then "*".
        #expect(result[0] == "r7 ")
        #expect(result[1] == "r6 id=42")
        #expect(result[2] == "r7 ")
        #expect(result[3] == "r8 page=3")
        // "me/x": literal "me" has only <int:page>; back up to the catch-all.
        #expect(result[4] == "r3 rest=me/x")
    }

    /// RoutingKit (vapor/vapor#3213): with `/bar/baz` and `/:a/foo`, `/bar/foo` is a 404 because
    /// the router commits to the literal `bar` branch and never backtracks.
    @Test func vapor3213ShapeResolvesByBacktracking() throws {
        let result = try resolutions(
            patterns: ["app://h/bar/baz", "app://h/<a>/foo"], urls: ["app://h/bar/foo", "app://h/bar/baz", "app://h/x/foo"],
            order: [0, 1])
        #expect(result == ["r1 a=bar", "r0 ", "r1 a=x"])
    }

    /// URLNavigator sorts candidates by a key that can tie, so the winner flips between runs.
    /// Here every permutation of registration order must resolve every URL the same way.
    @Test func resolutionNeverDependsOnRegistrationOrder() throws {
        let urls = [
            "app://user/me", "app://user/42", "app://user/bob", "app://user/a/b", "app://user/me/posts", "app://user/7/posts",
            "app://user/me/9", "app://user/1.5", "app://search/recent", "app://search/q/z", "app://user/-3",
            "app://user/6F9619FF-8B86-D011-B42D-00CF4FC964FF/posts",
        ]
        let reference = try resolutions(patterns: patterns, urls: urls, order: Array(patterns.indices))
        var generator = SplitMix64(seed: 3213)
        for _ in 0..<50 {
            let order = Array(patterns.indices).shuffled(using: &generator)
            #expect(try resolutions(patterns: patterns, urls: urls, order: order) == reference, "order \(order)")
        }
    }

    @Test func typedConvertersAtOnePositionTryInFixedOrder() throws {
        // "12" is an int and a double; int wins whatever the order.
        let patterns = ["app://n/<double:d>", "app://n/<int:i>"]
        #expect(try resolutions(patterns: patterns, urls: ["app://n/12", "app://n/1.5"], order: [0, 1]) == ["r1 i=12", "r0 d=1.5"])
        #expect(try resolutions(patterns: patterns, urls: ["app://n/12", "app://n/1.5"], order: [1, 0]) == ["r1 i=12", "r0 d=1.5"])
    }

    @Test func customConverterRanksAfterBuiltIns() throws {
        var builder = Mediator.Builder(implicitRoutes: false)
        try builder.register(
            converter: RouteConverter(name: "slug") { text in
                text.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 } ? text : nil
            })
        try builder.register(targetNamed: "post") { actions in
            actions.action("bySlug", access: .remote, routes: ["app://post/<slug:slug>"]) { _, _ in "slug" }
            actions.action("byID", access: .remote, routes: ["app://post/<int:id>"]) { _, _ in "id" }
            actions.action("any", access: .remote, routes: ["app://post/<other>"]) { _, _ in "any" }
        }
        let mediator = try builder.build()
        #expect(try mediator.resolve("app://post/42")?.action == "byID")
        #expect(try mediator.resolve("app://post/hello-world")?.action == "bySlug")
        #expect(try mediator.resolve("app://post/Hello")?.action == "any")
    }

    @Test func schemesAreNamespaces() throws {
        var builder = Mediator.Builder(implicitRoutes: false)
        try builder.register(targetNamed: "home") { actions in
            actions.action("app", access: .remote, routes: ["app://home/<id>"]) { _, _ in 1 }
            actions.action("partner", access: .remote, routes: ["partner://home/<id>"]) { _, _ in 2 }
        }
        let mediator = try builder.build()
        #expect(try mediator.resolve("app://home/1")?.action == "app")
        #expect(try mediator.resolve("PARTNER://home/1")?.action == "partner")
        #expect(try mediator.resolve("other://home/1") == nil)
    }

    @Test func catchAllNeedsAtLeastOneSegment() throws {
        let result = try resolutions(
            patterns: ["app://files/<path:rest>"], urls: ["app://files", "app://files/", "app://files/a"], order: [0])
        #expect(result == ["none", "none", "r0 rest=a"])
    }

    @Test func hostMayBeAPlaceholder() throws {
        let result = try resolutions(
            patterns: ["app://<module>/home", "app://shop/home"], urls: ["app://shop/home", "app://cart/home"], order: [0, 1])
        #expect(result == ["r1 ", "r0 module=cart"])
    }
}

/// A small seeded generator so that shuffles are reproducible.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
