import Testing

@testable import RunwayMediator

/// Collecting query items is linear: 100,000 items, distinct or all of one key, parse well
/// within a bound that a quadratic collector (a scan of the keys per item, a copy of the values
/// per repeat) exceeds many times over. The bound is on the thread's processor time, not the
/// wall clock: the whole suite runs in parallel, and a thread can wait for a core far longer
/// than it runs.
@Suite("Query items at scale")
struct MediatorParametersQueryTests {
    static let count = 100_000
    /// Generous (a debug build parses either URL in well under a second of processor time); the
    /// quadratic collector took 275 s for the distinct keys and 52 s for the repeats.
    static let bound: Duration = .seconds(20)
    static let options = MediatorURLOptions(maxLength: 4 << 20)

    static func mediator() throws -> Mediator {
        var builder = try standardBuilder()
        builder.urlOptions = options
        return try builder.build()
    }

    @Test func distinctKeysKeepTheirOrderAndValues() throws {
        let mediator = try Self.mediator()
        // `id` comes last and is a path capture: the path value wins over the query's.
        let url = "app://listing/1?" + (0..<Self.count).map { "k\($0)=\($0)" }.joined(separator: "&") + "&id=7"
        let (match, elapsed) = try threadCPUTime { try mediator.resolve(url) }
        #expect(elapsed < Self.bound, "resolve took \(elapsed)")
        let parameters = try #require(match).parameters
        #expect(parameters.count == Self.count + 1)
        #expect(parameters.keys == ["id"] + (0..<Self.count).map { "k\($0)" })
        #expect(try parameters.int("id") == 1)
        #expect(try parameters.int("k99999") == 99_999)
        #expect(parameters.strings("k0") == ["0"])
    }

    @Test func repeatsOfOneKeyKeepEveryValueInOrder() throws {
        let url = "app://s/x?" + (0..<Self.count).map { "tag=\($0)" }.joined(separator: "&")
        let (parsed, elapsed) = try threadCPUTime { try MediatorURL(url, options: Self.options) }
        #expect(elapsed < Self.bound, "MediatorURL took \(elapsed)")
        let query = parsed.query
        #expect(query.keys == ["tag"])
        #expect(query.strings("tag") == (0..<Self.count).map { String($0) })
        #expect(try query.string("tag") == "0")
        #expect { try query.int("tag") } throws: {
            ($0 as? MediatorError)?.message.contains("is given \(Self.count) times") == true
        }
    }

    @Test func repeatsOfAPathCaptureAreIgnoredAtScale() throws {
        let mediator = try Self.mediator()
        let url = "app://listing/42?" + (0..<Self.count).map { "id=\($0)&tag=\($0)" }.joined(separator: "&")
        let (match, elapsed) = try threadCPUTime { try mediator.resolve(url) }
        #expect(elapsed < Self.bound, "resolve took \(elapsed)")
        let parameters = try #require(match).parameters
        #expect(parameters.keys == ["id", "tag"])
        #expect(try parameters.int("id") == 42)
        #expect(parameters.strings("tag").count == Self.count)
        #expect(parameters.strings("tag").last == String(Self.count - 1))
    }

    @Test func aKeyHeldTwiceBeforeTheQueryNeitherTrapsNorChangesWhichOneIsRead() throws {
        // No resolver produces this today; the index is built without assuming it cannot happen.
        var parameters = MediatorParameters()
        parameters.appendUnchecked("k", .string("first"))
        parameters.appendUnchecked("k", .string("second"))
        let url = "app://s?" + (0..<(MediatorParameters.linearScanLimit + 4)).map { "q\($0)=\($0)&k=x" }.joined(separator: "&")
        let bytes = Array(url.utf8)
        let scan = try URLScanner.scan(bytes, options: MediatorURLOptions())
        try parameters.addQueryItems(of: scan, in: bytes, options: MediatorURLOptions())
        #expect(parameters.strings("k") == ["first"])
        #expect(parameters.count == 2 + MediatorParameters.linearScanLimit + 4)
    }

    @Test func manyKeysWithRepeatsKeepFirstAppearanceOrder() throws {
        // Enough distinct keys to go past any small-list shortcut, each repeated three times.
        let items = (0..<300).map { "k\($0 % 100)=\($0)" }.joined(separator: "&")
        let query = try MediatorURL("app://s?" + items + "&k5=last").query
        #expect(query.keys == (0..<100).map { "k\($0)" })
        #expect(query.strings("k5") == ["5", "105", "205", "last"])
        #expect(query.strings("k99") == ["99", "199", "299"])
    }
}
