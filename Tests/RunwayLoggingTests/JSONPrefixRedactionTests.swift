import Foundation
import Runway
import Testing

/// A large body that a log or a HAR entry keeps a few bytes of is read only as far as those
/// bytes need, rather than whole: JSON is redacted as it is read (`Redaction.redactingJSONPrefix`),
/// other text from its start.
@Suite("Redaction of a large body's start")
struct JSONPrefixRedactionTests {
    let redaction = Redaction.standard

    /// A document with secrets, marked `SECRET`, as every kind of value of a hidden member, at
    /// every depth, behind escaped names and between multi-byte characters.
    static let document = #"""
        {"token": "SECRET-a", "user": {"name": "Zoë 名前", "pin": 1234, "auth": {"k": "SECRET-b", "n": [1, 2]}},
         "items": [{"id": 1, "password": ["SECRET-c", {"x": "SECRET-d"}]}, {"id": 2, "pass\u0077ord": "SECRET-e"}],
         "apikey": null, "note": "a \"quoted\" token: not a name", "session\u0049d": "SECRET-f", "ok": true, "n": -1.5e3}
        {"otp": "SECRET-g", "after": "line two"}
        """#

    @Test("no limit shows a hidden value, and a cut never splits a character")
    func neverShowsAHiddenValue() throws {
        let body = Data(Self.document.utf8)
        var previous = ""
        for limit in 1...(body.count + 8) {
            let shown: String
            switch redaction.redactingJSONPrefix(body, limit: limit) {
            case .prefix(let text, let size):
                #expect(size == body.count)
                #expect(text.utf8.count <= limit)
                shown = text
            case .text(let text):
                shown = text
            case let other:
                Issue.record("limit \(limit): \(other)")
                continue
            }
            #expect(!shown.contains("SECRET"), "limit \(limit): \(shown)")
            #expect(!shown.contains("1234"), "limit \(limit): \(shown)")
            // Each limit shows what the one before did, and more.
            #expect(shown.hasPrefix(previous), "limit \(limit)")
            previous = shown
        }
        #expect(previous.contains(#""name": "Zoë 名前""#) && previous.contains(#""after": "line two""#))
    }

    @Test("read whole, it hides what parsing the whole body hides, in the body's own spacing and order")
    func hidesWhatTheWholeBodyRedactionHides() throws {
        let lines = Self.document.split(separator: "\n").map(String.init)
        let first = lines.dropLast().joined(separator: "\n")
        let body = Data(first.utf8)
        guard case .text(let text) = redaction.redactingJSONPrefix(body, limit: 1 << 20) else {
            Issue.record("not read whole")
            return
        }
        #expect(text.hasPrefix(#"{"token": "<redacted>", "user": {"name": "Zoë 名前", "pin": "<redacted>", "auth": "<redacted>"}"#))
        let whole = try #require(redaction.applyToJSON(body))
        #expect(try JSON(parsing: text) == JSON(parsing: whole))
    }

    @Test("a value that is not JSON is replaced by the size of the rest; what came before stays")
    func notJSON() {
        let lines = #"{"a": 1}"# + "\n" + #"{"password": "x"}"# + "\n"
        let cases: [(String, String)] = [
            (lines + #"{"b": tru}"#, lines + "<10 bytes, not JSON>"),
            (lines + #"{"password": "unterminated"#, lines + "<26 bytes, not JSON>"),
            (lines + #"{"b": 01}"#, lines + "<9 bytes, not JSON>"),
            (#"{"a": "\q"}"#, "<11 bytes, not JSON>"),
            (#"["\ud800"]"#, "<10 bytes, not JSON>"),
            (String(repeating: "[", count: 600), "<600 bytes, not JSON>"),
        ]
        for (input, shown) in cases {
            let expected = shown.replacingOccurrences(of: #"{"password": "x"}"#, with: #"{"password": "<redacted>"}"#)
            #expect(redaction.redactingJSONPrefix(Data(input.utf8), limit: 4096) == .prefix(expected, bodySize: input.utf8.count))
        }
    }

    @Test("control characters and bytes that are not UTF-8 are binary, as in the whole-body redaction")
    func binary() {
        #expect(redaction.redactingJSONPrefix(Data([0x1F, 0x8B, 0x08, 0x00]), limit: 100) == .binary)
        #expect(redaction.redactingJSONPrefix(Data(#"{"a": "x"#.utf8 + [0x01] + #""}"#.utf8), limit: 100) == .binary)
        #expect(redaction.redactingJSONPrefix(Data(#"{"a": "x"#.utf8 + [0xFF, 0xFE] + #"y"}"#.utf8), limit: 100) == .binary)
    }

    @Test("bodies over the whole-body limit take this path when the caller keeps a part; smaller ones are parsed whole")
    func choice() throws {
        let items = (0..<5_000).map { #"{"id": \#($0), "token": "SECRET-\#($0)"}"# }.joined(separator: ", ")
        let large = Data(#"{"items": [\#(items)]}"#.utf8)
        #expect(large.count > Redaction.wholeBodyLimit)
        guard case .prefix(let text, let size) = redaction.apply(toBody: large, contentType: "application/json", keeping: 300) else {
            Issue.record("not cut")
            return
        }
        #expect(size == large.count && text.utf8.count <= 300 && !text.contains("SECRET"))
        #expect(text.hasPrefix(#"{"items": [{"id": 0, "token": "<redacted>"}, {"id": 1, "token": "<redacted>"}"#))
        // Without a type, by its first byte; a caller that keeps all of it gets the whole-body redaction.
        if case .prefix = redaction.apply(toBody: large, contentType: nil, keeping: 300) {} else { Issue.record("no type") }
        if case .text(let whole) = redaction.apply(toBody: large, contentType: "application/json") {
            #expect(!whole.contains("SECRET") && whole.utf8.count > large.count / 2)
        } else {
            Issue.record("not whole")
        }
        // A small body keeps the whole-body redaction: keys sorted.
        let small = Data(#"{"b": 1, "token": "t", "a": 2}"#.utf8)
        #expect(
            redaction.apply(toBody: small, contentType: "application/json", keeping: 10) == .text(#"{"a":2,"b":1,"token":"<redacted>"}"#))
        // Large but multipart: never shown.
        #expect(redaction.apply(toBody: large, contentType: "multipart/form-data; boundary=x", keeping: 300) == .multipart)
    }

    @Test("other large text is read from its start: XML and forms redacted, a cut character left out")
    func otherText() {
        let xml = Data(("<doc><token>SECRET</token>" + String(repeating: "<item>i</item>", count: 10_000) + "</doc>").utf8)
        let form = Data(("a=1&password=SECRET&" + String(repeating: "x=1&", count: 20_000) + "z=2").utf8)
        let plain = String(repeating: "名", count: 30_000)
        for (body, type, shown) in [
            (xml, "application/xml", "<doc><token><redacted></token><item>i</item>"),
            (xml, nil, "<doc><token><redacted></token><item>i</item>"),
            (form, "application/x-www-form-urlencoded", "a=1&password=<redacted>&x=1&"),
            (form, nil, "a=1&password=<redacted>&x=1&"),
        ] as [(Data, String?, String)] {
            guard case .prefix(let text, let size) = redaction.apply(toBody: body, contentType: type, keeping: 200) else {
                Issue.record("\(shown): not cut")
                continue
            }
            #expect(text.hasPrefix(shown) && text.utf8.count <= 200 && size == body.count, "\(text)")
            #expect(!text.contains("SECRET"))
        }
        // 2 × 101 + 4 = 206 bytes would end 2 bytes into a character: 204 are read, 99 kept.
        #expect(
            redaction.apply(toBody: Data(plain.utf8), contentType: "text/plain", keeping: 101)
                == .prefix(String(plain.prefix(utf8Bytes: 101)), bodySize: plain.utf8.count))
        // A control character beyond what is read goes unseen; read whole, the body is binary.
        let control = Data((String(repeating: "text ", count: 20_000) + "\u{1}").utf8)
        #expect(
            redaction.apply(toBody: control, contentType: "text/plain", keeping: 100)
                == .prefix(String(repeating: "text ", count: 20), bodySize: control.count))
        #expect(redaction.apply(toBody: control, contentType: "text/plain") == .binary)
    }
}
