import Testing

@testable import RunwayMediator

/// Bounded random input over the URL reader, the pattern reader and the resolver: every input
/// ends in a value or a typed `MediatorError`, never a crash or another error type.
@Suite("Fuzz")
struct ParserFuzzTests {
    static let alphabet: [String] = [
        "a", "Z", "0", "9", "-", ".", "_", "~", ":", "/", "//", "://", "?", "#", "&", "=", "+", "%", "%2", "%2F", "%zz", "%C3",
        "%A9", "%00", "%FF", "@", "<", ">", "<int:", "<path:r>", "*", "**", " ", "\t", "\n", "é", "日本", "🚀", "\u{0}",
        "\u{7F}", "app", "listing", "42", "[", "]", "\\", "\"",
    ]

    static func randomInput(_ generator: inout SplitMix64) -> String {
        let length = Int(generator.next() % 24)
        var text = generator.next() % 3 == 0 ? "" : "app://"
        for _ in 0..<length { text += alphabet[Int(generator.next() % UInt64(alphabet.count))] }
        return text
    }

    @Test func urlReaderAndResolverNeverCrash() async throws {
        let mediator = try RemotePolicyPropertyTests.mediator()
        var generator = SplitMix64(seed: 0xF022)
        var outcomes = (ok: 0, typedErrors: 0)
        for _ in 0..<20_000 {
            let input = Self.randomInput(&generator)
            do {
                _ = try MediatorURL(input)
                _ = try mediator.resolve(input, origin: generator.next() % 2 == 0 ? .remote : .local)
                outcomes.ok += 1
            } catch is MediatorError {
                outcomes.typedErrors += 1
            } catch {
                Issue.record("untyped error \(error) for \(input.debugDescription)")
            }
            _ = mediator.canOpen(url: input)
        }
        // Both paths are exercised.
        #expect(outcomes.ok > 100 && outcomes.typedErrors > 100)
    }

    @Test func randomBytesAsURLsNeverCrash() throws {
        let mediator = try RemotePolicyPropertyTests.mediator()
        var generator = SplitMix64(seed: 99)
        for _ in 0..<5_000 {
            let bytes = (0..<Int(generator.next() % 40)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let input = "app://" + String(decoding: bytes, as: UTF8.self)
            do { _ = try mediator.resolve(input) } catch is MediatorError {} catch { Issue.record("untyped error \(error)") }
        }
    }

    @Test func patternReaderNeverCrashes() {
        var generator = SplitMix64(seed: 1234)
        for _ in 0..<10_000 {
            let input = Self.randomInput(&generator)
            do { _ = try RoutePattern(input) } catch is MediatorError {} catch { Issue.record("untyped error \(error)") }
        }
    }

    @Test func reverseRoutingRoundTripsRandomValues() throws {
        var builder = Mediator.Builder()
        try builder.register(targetNamed: "echo") { actions in
            actions.action("one", access: .remote, routes: ["app://echo/<value>/<path:rest>"]) { _, _ in 1 }
        }
        let mediator = try builder.build()
        var generator = SplitMix64(seed: 5)
        for _ in 0..<2_000 {
            let value = String(Self.randomInput(&generator).dropFirst(6))
            let rest = "r" + String(Self.randomInput(&generator).dropFirst(6))
            let query = Self.randomInput(&generator)
            guard !value.isEmpty else { continue }
            let url = try mediator.url(target: "echo", action: "one", parameters: ["value": value, "rest": rest, "q": query])
            let match = try #require(try mediator.resolve(url), "\(url)")
            #expect(try match.parameters.string("value") == value)
            #expect(try match.parameters.string("q") == query)
            // A catch-all keeps the '/' structure but empty segments are part of its raw value.
            #expect(try match.parameters.string("rest") == rest, "\(url)")
        }
    }
}

@Suite("Hostile input")
struct HostileInputTests {
    @Test func manyQueryItemsStayBoundedAndLoseNothing() throws {
        let mediator = try standardBuilder().build()
        let items = (0..<600).map { "k\($0 % 200)=\($0)" }.joined(separator: "&")
        let url = "app://listing/1?" + items
        #expect(url.utf8.count < MediatorURLOptions().maxLength)
        let (resolved, elapsed) = try threadCPUTime { try mediator.resolve(url) }
        let match = try #require(resolved)
        #expect(elapsed < .seconds(1), "resolve took \(elapsed) of processor time")
        #expect(match.parameters.count == 201)  // id + 200 distinct keys
        #expect(match.parameters.strings("k0") == ["0", "200", "400"])
    }

    @Test func overlongURLIsRejectedNotTruncated() throws {
        var builder = try standardBuilder()
        builder.urlOptions = MediatorURLOptions(maxLength: 64)
        let mediator = try builder.build()
        #expect(try mediator.resolve("app://listing/1") != nil)
        #expect { try mediator.resolve("app://listing/1?" + String(repeating: "a", count: 64)) } throws: {
            ($0 as? MediatorError)?.code == .malformedURL
        }
    }

    @Test func deepPathsDoNotRecurseBeyondTheTrie() throws {
        let mediator = try standardBuilder().build()
        let deep = "app://listing/" + Array(repeating: "a", count: 3_000).joined(separator: "/")
        #expect(try mediator.resolve(deep) == nil)
    }
}
