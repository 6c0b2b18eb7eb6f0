import Foundation
import Testing

@testable import RunwayMediator

@Suite("Reverse routing")
struct ReverseRoutingTests {
    func mediator() throws -> Mediator {
        var builder = Mediator.Builder()
        try builder.register(targetNamed: "listing") { actions in
            actions.action("detail", access: .remote, routes: ["app://listing/<int:id>", "app://l/<int:id>"]) { _, _ in 1 }
            actions.action("file", access: .remote, routes: ["app://listing/files/<name>/<path:rest>"]) { _, _ in 2 }
            actions.action("plain", access: .remote) { _, _ in 3 }
            actions.action("wild", access: .remote, routes: ["app://listing/w/*"]) { _, _ in 4 }
        }
        return try builder.build()
    }

    @Test func buildsFromTheFirstPatternAndRoundTrips() throws {
        let mediator = try mediator()
        let url = try mediator.url(target: "listing", action: "detail", parameters: ["id": 42, "ref": "a b&c", "tag": ["x", "y"]])
        #expect(url == "app://listing/42?ref=a%20b%26c&tag=x&tag=y")
        let match = try #require(try mediator.resolve(url))
        #expect(match.action == "detail")
        #expect(try match.parameters.int("id") == 42)
        #expect(try match.parameters.string("ref") == "a b&c")
        #expect(match.parameters.strings("tag") == ["x", "y"])
    }

    @Test func encodesSlashesInPlaceholdersButNotInCatchAll() throws {
        let mediator = try mediator()
        let url = try mediator.url(target: "listing", action: "file", parameters: ["name": "a/b", "rest": "c d/e"])
        #expect(url == "app://listing/files/a%2Fb/c%20d/e")
        let match = try #require(try mediator.resolve(url))
        #expect(try match.parameters.string("name") == "a/b")
        #expect(try match.parameters.string("rest") == "c d/e")
    }

    /// `.` and `..` as a segment are what URL normalizers (Foundation's `standardized`, a
    /// browser's, the system's handling of an opened link) remove, with the segment before: a
    /// built URL writes them `%2E`, which resolves to the same values.
    @Test func dotSegmentsAreWrittenSoThatNoNormalizerRemovesThem() throws {
        let mediator = try mediator()
        for value in [".", ".."] {
            let url = try mediator.url(target: "listing", action: "file", parameters: ["name": value, "rest": "\(value)/x/\(value)"])
            #expect(URL(string: url)?.standardized.absoluteString == url, "\(url)")
            let match = try #require(try mediator.resolve(url))
            #expect(try match.parameters.string("name") == value)
            #expect(try match.parameters.string("rest") == "\(value)/x/\(value)")
        }
        #expect(
            try mediator.url(target: "listing", action: "file", parameters: ["name": "a.b", "rest": "..."]) == "app://listing/files/a.b/..."
        )
    }

    /// The host comes back lowercased (Routing.md): a host value with capitals cannot round-trip.
    @Test func aHostValueWithCapitalsIsRefused() throws {
        var builder = Mediator.Builder()
        try builder.register(targetNamed: "r") { actions in
            actions.action("site", access: .remote, routes: ["app://<site>/page"]) { _, _ in 1 }
        }
        let mediator = try builder.build()
        #expect { try mediator.url(target: "r", action: "site", parameters: ["site": "ABC"]) } throws: {
            ($0 as? MediatorError)?.code == .cannotBuildURL && ($0 as? MediatorError)?.field == "site"
        }
        let url = try mediator.url(target: "r", action: "site", parameters: ["site": "abc"])
        #expect(try mediator.resolve(url)?.parameters.string("site") == "abc")
    }

    @Test func implicitRouteWhenNoPattern() throws {
        let url = try mediator().url(target: "listing", action: "plain", parameters: ["q": "1"])
        #expect(url == "app://listing/plain?q=1")
    }

    /// `<hex:v>`: a `UInt64` written in hexadecimal, with or without a format to write one back.
    func hexMediator(formats: Bool) throws -> Mediator {
        var builder = Mediator.Builder()
        let parse: @Sendable (String) -> (any Sendable)? = { UInt64($0, radix: 16) }
        try builder.register(
            converter: formats
                ? RouteConverter(name: "hex", convert: parse) { ($0 as? UInt64).map { String($0, radix: 16) } }
                : RouteConverter(name: "hex", convert: parse))
        try builder.register(targetNamed: "color") { actions in
            actions.action("show", access: .remote, routes: ["app://color/<hex:v>"]) { _, _ in 1 }
        }
        return try builder.build()
    }

    @Test func aCustomConvertersValueIsWrittenByItsFormatAndRoundTrips() throws {
        let mediator = try hexMediator(formats: true)
        let url = try mediator.url(target: "color", action: "show", parameters: ["v": UInt64(255)])
        #expect(url == "app://color/ff")
        #expect(try mediator.resolve(url)?.parameters.value("v", as: UInt64.self) == 255)
        // The segment's text is taken as it is.
        #expect(try mediator.url(target: "color", action: "show", parameters: ["v": "ff"]) == "app://color/ff")
        // A value the format cannot write.
        #expect { try mediator.url(target: "color", action: "show", parameters: ["v": 255]) } throws: {
            ($0 as? MediatorError)?.code == .cannotBuildURL && ($0 as? MediatorError)?.field == "v"
        }
    }

    @Test func aCustomConverterWithoutAFormatTakesOnlyTheSegmentsText() throws {
        let mediator = try hexMediator(formats: false)
        #expect(try mediator.url(target: "color", action: "show", parameters: ["v": "ff"]) == "app://color/ff")
        // 255 written in decimal would open 0x255: refused, not built.
        for value: any Sendable in [255, UInt64(255)] {
            #expect { try mediator.url(target: "color", action: "show", parameters: ["v": value]) } throws: {
                ($0 as? MediatorError)?.code == .cannotBuildURL && "\($0)".contains("has no format")
            }
        }
    }

    @Test func missingOrMistypedParametersAreTypedErrors() throws {
        let mediator = try mediator()
        #expect { try mediator.url(target: "listing", action: "detail") } throws: {
            ($0 as? MediatorError)?.code == .cannotBuildURL && ($0 as? MediatorError)?.field == "id"
        }
        #expect { try mediator.url(target: "listing", action: "detail", parameters: ["id": "abc"]) } throws: {
            ($0 as? MediatorError)?.code == .cannotBuildURL
        }
        #expect { try mediator.url(target: "listing", action: "wild") } throws: { ($0 as? MediatorError)?.code == .cannotBuildURL }
        #expect { try mediator.url(target: "listing", action: "nope") } throws: { ($0 as? MediatorError)?.code == .notFound }
        #expect { try mediator.url(target: "listing", action: "plain", parameters: ["obj": Data()]) } throws: {
            ($0 as? MediatorError)?.code == .cannotBuildURL
        }
        // A number the URL cannot carry is named as such, not as a type that is not text.
        #expect { try mediator.url(target: "listing", action: "plain", parameters: ["x": Double.infinity]) } throws: {
            ($0 as? MediatorError)?.code == .cannotBuildURL && "\($0)".contains("not finite")
        }
    }

    @Test func aURLThatAnotherRouteTakesFirstIsNeverBuilt() throws {
        var builder = Mediator.Builder()
        try builder.register(targetNamed: "shop") { actions in
            actions.action("byId", access: .remote, routes: ["app://shop/<int:id>"]) { _, _ in "byId" }
            actions.action("bySlug", access: .remote, routes: ["app://shop/<slug>"]) { _, _ in "bySlug" }
            actions.action("cart", access: .remote) { _, _ in "cart" }
            actions.action("admin") { _, _ in "admin" }
        }
        let mediator = try builder.build()
        // Each of these slugs would open another action: byId, cart, the local-only admin.
        for slug in ["42", "-7", "cart", "admin"] {
            let error = #expect(throws: MediatorError.self) {
                try mediator.url(target: "shop", action: "bySlug", parameters: ["slug": slug])
            }
            #expect(error?.code == .cannotBuildURL)
        }
        // A slug no other route takes round-trips, from inside the app and from outside.
        let url = try mediator.url(target: "shop", action: "bySlug", parameters: ["slug": "red-shoes"])
        #expect(url == "app://shop/red-shoes")
        #expect(try mediator.resolve(url, origin: .remote)?.action == "bySlug")
        #expect(try mediator.resolve(url, origin: .local)?.action == "bySlug")
        #expect(try mediator.url(target: "shop", action: "byId", parameters: ["id": 42]) == "app://shop/42")
        #expect(try mediator.url(target: "shop", action: "admin") == "app://shop/admin")
    }

    @Test func aURLResolveWouldRefuseIsNeverBuilt() throws {
        let mediator = try mediator()
        // An empty query name: "?=v" is no query item to resolve.
        #expect { try mediator.url(target: "listing", action: "detail", parameters: ["id": 1, "": "v"]) } throws: {
            ($0 as? MediatorError)?.code == .cannotBuildURL && ($0 as? MediatorError)?.field == ""
        }
        // Longer than MediatorURLOptions.maxLength (8,192 bytes by default); just under it builds and resolves.
        let long = String(repeating: "a", count: 9_000)
        #expect { try mediator.url(target: "listing", action: "plain", parameters: ["q": long]) } throws: {
            ($0 as? MediatorError)?.code == .cannotBuildURL
        }
        let fits = String(repeating: "a", count: 8_192 - "app://listing/plain?q=".utf8.count)
        let url = try mediator.url(target: "listing", action: "plain", parameters: ["q": fits])
        #expect(url.utf8.count == 8_192)
        #expect(try mediator.resolve(url)?.action == "plain")
    }
}
