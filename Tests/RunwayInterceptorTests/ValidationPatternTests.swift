import Foundation
import Runway
import Testing

/// `.pattern` constraints run on the standard library's `Regex` (they ran on
/// `NSRegularExpression`, which needs Foundation and ICU). The patterns people write match as
/// they did; the differences are the ones ``ParameterConstraint/pattern(_:)`` documents.
@Suite("Validation patterns")
struct ValidationPatternTests {
    /// Whether `value` passes `.pattern(pattern)`, through the public API.
    static func passes(_ pattern: String, _ value: String) throws -> Bool {
        let validation = try APIValidation(parameters: [ParameterRule("p", .pattern(pattern))])
        var components = URLComponents(string: "https://api.test/x")!
        components.queryItems = [URLQueryItem(name: "p", value: value)]
        let request = try Request(components.url!.absoluteString)
        do {
            try validation.validate(request)
            return true
        } catch {
            #expect(error.code == .paramsInvalid)
            #expect(error.message.contains("does not match \(pattern)"))
            return false
        }
    }

    /// What ICU said of a pattern and a value.
    static func icu(_ pattern: String, _ value: String) throws -> Bool {
        try NSRegularExpression(pattern: pattern).firstMatch(in: value, range: NSRange(value.startIndex..., in: value)) != nil
    }

    static let agreed: [(String, String)] = [
        (#"^1\d{10}$"#, "13800138000"), (#"^1\d{10}$"#, "1380013800"), (#"^1\d{10}$"#, "x13800138000"), (#"^\d+$"#, "١٢٣"),
        (#"\d{4}"#, "year 2025!"), (#"\d{4}"#, "no digits"), (#"^[A-Z]{2}-\d{3}$"#, "AB-123"), (#"^[A-Z]{2}-\d{3}$"#, "ab-123"),
        (#"(?i)^[A-Z]{2}-\d{3}$"#, "ab-123"), (#"^[A-Z0-9._%+-]+@[A-Z0-9.-]+\.[A-Z]{2,}$"#, "A.B@EXAMPLE.COM"),
        (#"^\w+$"#, "héllo_1"), (#"^\w+$"#, "日本語"), (#"^\w+$"#, "a b"), (#"\bcat\b"#, "a cat sat"), (#"\bcat\b"#, "concatenate"),
        (#"^.$"#, "é"), (#"^.$"#, "e\u{301}"), (#"^.$"#, "😀"), (#"^.$"#, "🇫🇷"), (#"^a.c$"#, "a\nc"), (#"(?s)^a.c$"#, "a\nc"),
        (#"^\p{L}+$"#, "Ωmega"), (#"^[[:alpha:]]+$"#, "abc1"), (#"^\s+$"#, " \t\u{A0}"), (#"(a)\1"#, "aa"), (#"(?<x>b)\k<x>"#, "abba"),
        (#"^(?:\d{3}-)?\d{4}$"#, "555-1234"), (#"^\Qa.b\E$"#, "a.b"), (#"^\Qa.b\E$"#, "axb"), (#"^\x{41}\u0042$"#, "AB"),
        (#"^(?x) \d+ # digits"#, "42"), (#"^a++b$"#, "aaab"), (#"^(?>a+)b$"#, "aab"), (#"abc\Z"#, "abc\n"), (#"abc\z"#, "abc\n"),
        (#"(?m)^b$"#, "a\nb\nc"), (#"^[^\d]+$"#, "abc"), (#"^\D+$"#, "ab٣"), (#"[\u4e00-\u9fff]"#, "中"),
    ]

    @Test("common patterns accept and refuse what NSRegularExpression did")
    func agreesWithICU() throws {
        for (pattern, value) in Self.agreed {
            #expect(try Self.passes(pattern, value) == Self.icu(pattern, value), "\(pattern) on \(value.debugDescription)")
        }
    }

    @Test("the documented differences: $ is the very end, case folding is simple")
    func documentedDifferences() throws {
        // ICU let `$` match before a final line break; `\Z` still does.
        #expect(try Self.icu(#"^\d+$"#, "123\n"))
        #expect(try !Self.passes(#"^\d+$"#, "123\n"))
        #expect(try Self.passes(#"^\d+\Z"#, "123\n"))
        // ICU folded ß to ss ignoring case; the standard library folds one scalar to one.
        #expect(try Self.icu(#"(?i)straße"#, "STRASSE"))
        #expect(try !Self.passes(#"(?i)straße"#, "STRASSE"))
        #expect(try Self.passes(#"(?i)straße"#, "STRAẞE"))
    }

    @Test(
        "a pattern the standard library cannot run is a .configuration error at registration",
        arguments: [#"(?<=a)b"#, #"(?<!a)b"#, #"a\Kb"#, #"(?w)\bx"#, "(unclosed", "[z-a]", "a{2,1}"])
    func refused(_ pattern: String) {
        #expect {
            _ = try APIValidation(parameters: [ParameterRule("p", .pattern(pattern))])
        } throws: { ($0 as? RunwayError)?.code == .configuration && ($0 as? RunwayError)?.message.contains(pattern) == true }
    }

    @Test("one compiled pattern serves many tasks at once")
    func concurrentMatches() async throws {
        let validation = try APIValidation(parameters: [ParameterRule("p", .pattern(#"^[a-z]+-\d+$"#))])
        let good = try Request("https://api.test/x?p=abc-123")
        let bad = try Request("https://api.test/x?p=abc-x")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<500 {
                        try validation.validate(good)
                        #expect(throws: RunwayError.self) { try validation.validate(bad) }
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
