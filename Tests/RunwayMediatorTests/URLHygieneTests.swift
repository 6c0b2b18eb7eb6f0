import Testing

@testable import RunwayMediator

@Suite("URL hygiene")
struct URLHygieneTests {
    @Test func splitsBeforeDecodingSoEncodedSlashStaysInTheValue() throws {
        let url = try MediatorURL("app://files/a%2Fb/c")
        #expect(url.pathSegments == ["a/b", "c"])
        var builder = Mediator.Builder(implicitRoutes: false)
        try builder.register(targetNamed: "files") { actions in
            actions.action("one", access: .remote, routes: ["app://files/<name>"]) { _, _ in 1 }
            actions.action("two", access: .remote, routes: ["app://files/<dir>/<name>"]) { _, _ in 2 }
        }
        let mediator = try builder.build()
        let match = try #require(try mediator.resolve("app://files/a%2Fb"))
        #expect(match.action == "one")
        #expect(try match.parameters.string("name") == "a/b")
        #expect(try mediator.resolve("app://files/a/b")?.action == "two")
    }

    @Test func percentDecodingOfUnicodeAndReserved() throws {
        let url = try MediatorURL("app://search/caf%C3%A9%20au%20lait/%3F%23?q=%26%3D")
        #expect(url.pathSegments == ["café au lait", "?#"])
        #expect(try url.query.string("q") == "&=")
    }

    @Test func plusInQueryIsConfigurable() throws {
        let spaced = try MediatorURL("app://s/x+y?q=a+b%2Bc")
        #expect(spaced.pathSegments == ["x+y"])
        #expect(try spaced.query.string("q") == "a b+c")
        let literal = try MediatorURL("app://s/x?q=a+b", options: MediatorURLOptions(plusInQuery: .literal))
        #expect(try literal.query.string("q") == "a+b")
    }

    @Test func repeatedQueryKeysBecomeAnArray() throws {
        let url = try MediatorURL("app://s?tag=a&tag=b&tag=c&one=1&flag")
        #expect(url.query.strings("tag") == ["a", "b", "c"])
        #expect(try url.query.string("tag") == "a")
        #expect(try url.query.int("one") == 1)
        #expect(try url.query.string("flag") == "")
    }

    @Test func schemeSeparatorInsideValues() throws {
        let url = try MediatorURL("app://web/open?url=https://example.com/a?b=c%26d&x=1#frag://x")
        #expect(url.host == "web")
        #expect(url.pathSegments == ["open"])
        #expect(try url.query.string("url") == "https://example.com/a?b=c&d")
        #expect(try url.query.string("x") == "1")
        #expect(url.fragment == "frag://x")

        var builder = Mediator.Builder(implicitRoutes: false)
        try builder.register(targetNamed: "proxy") { actions in
            actions.action("go", access: .remote, routes: ["app://proxy/<path:target>"]) { _, _ in 1 }
        }
        let mediator = try builder.build()
        let match = try #require(try mediator.resolve("app://proxy/https://example.com/x"))
        #expect(try match.parameters.string("target") == "https://example.com/x")
    }

    /// As Routing.md says: the rest of the path decoded, one trailing `/` left out, empty segments kept.
    @Test func aCatchAllIsTheRestOfThePathWithoutOneTrailingSlash() throws {
        var builder = Mediator.Builder(implicitRoutes: false)
        try builder.register(targetNamed: "files") { actions in
            actions.action("open", access: .remote, routes: ["app://files/<path:rest>"]) { _, _ in 1 }
        }
        let mediator = try builder.build()
        let cases = [
            "app://files/a/b/": "a/b", "app://files/a/": "a", "app://files/a//b/": "a//b", "app://files/a%2Fb/c": "a/b/c",
            "app://files//cdn.example.com/a": "/cdn.example.com/a", "app://files///cdn.example.com/a": "//cdn.example.com/a",
            "app://files/%2F%2Fcdn.example.com/a": "//cdn.example.com/a",
        ]
        for (url, rest) in cases.sorted(by: { $0.key < $1.key }) {
            #expect(try mediator.resolve(url)?.parameters.string("rest") == rest, "\(url)")
        }
    }

    @Test func emptySegmentsAndTrailingSlash() throws {
        #expect(try MediatorURL("app://user//42/").pathSegments == ["42"])
        #expect(try MediatorURL("app://user/42/").pathSegments == ["42"])
        #expect(throws: MediatorError.self) {
            try MediatorURL("app://user//42", options: MediatorURLOptions(emptySegments: .reject))
        }
        #expect(try MediatorURL("app://user/42/", options: MediatorURLOptions(emptySegments: .reject)).pathSegments == ["42"])
        let mediator = try standardBuilder().build()
        #expect(try mediator.resolve("app://listing/42/")?.action == "detail")
        #expect(try mediator.resolve("app://listing//42")?.action == "detail")
    }

    @Test func schemeAndHostAreCaseInsensitivePathIsNot() throws {
        let url = try MediatorURL("APP://LiStInG/Detail")
        #expect(url.scheme == "app" && url.host == "listing" && url.pathSegments == ["Detail"])
        let mediator = try standardBuilder().build()
        #expect(try mediator.resolve("App://LISTING/42")?.action == "detail")
        #expect(try mediator.resolve("app://listing/DETAIL") == nil)
        #expect(try mediator.resolve("app://listing/detail")?.action == "detail")
    }

    @Test("a host's letters beyond ASCII are read without case too: a placeholder in the host gets them lowercased")
    func aHostBeyondASCIIIsCaseInsensitive() async throws {
        #expect(try MediatorURL("app://ZÜRICH/h").host == "zürich")
        #expect(try MediatorURL("app://Z%C3%9CRICH/h").host == "zürich")
        var builder = Mediator.Builder(implicitRoutes: false)
        try builder.register(targetNamed: "city") { actions in
            actions.action("show", access: .remote, routes: ["app://<city>/show"]) { _, call in try call.parameters.string("city") }
        }
        let mediator = try builder.build()
        for url in ["app://ZÜRICH/show", "app://zürich/show", "app://Z%C3%9Crich/show"] {
            #expect(try await mediator.perform(url: url) as? String == "zürich", "\(url)")
        }
        // A link whose host would come back as another value is refused.
        #expect(throws: MediatorError.self) { try mediator.url(target: "city", action: "show", parameters: ["city": "ZÜRICH"]) }
        #expect(try mediator.url(target: "city", action: "show", parameters: ["city": "zürich"]).hasPrefix("app://z%C3%BCrich/"))
    }

    @Test func malformedInputIsTypedError() {
        let cases = [
            "", "app", "app:", "app:/", "app://", "app:x", "://x", "a p://x", "app://x/%", "app://x/%4", "app://x/%G0",
            "app://x?%zz=1", "app://x?=v", "app://x/\n", "app://x\u{7F}", "app://h:80/x", "app://u@h", "app://x/%FF",
            String(repeating: "a", count: 9000),
        ]
        for text in cases {
            #expect(throws: MediatorError.self, "\(text.debugDescription)") { try MediatorURL(text) }
            do { _ = try MediatorURL(text) } catch let error as MediatorError {
                #expect(error.code == .malformedURL)
                #expect(error.url == text, "\(text.debugDescription)")
            } catch { Issue.record("untyped error \(error)") }
        }
    }

    @Test func anErrorQuotesAHugeURLCutWhileItKeepsTheWholeURL() async throws {
        let mediator = try Mediator.Builder(implicitRoutes: false).build()
        let huge = "app://listing/detail?q=" + String(repeating: "é", count: 500_000)
        do {
            _ = try await mediator.perform(url: huge)
            Issue.record("a 1 MB URL was accepted")
        } catch let error as MediatorError {
            #expect(error.code == .malformedURL)
            #expect(error.url == huge)
            let text = error.description
            #expect(text.utf8.count < 1_000, "description of \(text.utf8.count) bytes")
            #expect(text.contains("[url app://listing/detail?q=éé"))
            #expect(text.contains("… (\(huge.utf8.count) bytes)]"))
        }
        let short = "app://nowhere/at/all"
        do {
            _ = try await mediator.perform(url: short)
            Issue.record("an unknown target was found")
        } catch let error as MediatorError {
            #expect(error.description.contains("[url \(short)]"))
        }
    }

    @Test func queryNeverTakesPartInMatchingAndPathWins() throws {
        let mediator = try standardBuilder().build()
        let match = try #require(try mediator.resolve("app://listing/42?id=99&id=100&other=x"))
        #expect(try match.parameters.int("id") == 42)
        #expect(try match.parameters.string("other") == "x")
    }
}
