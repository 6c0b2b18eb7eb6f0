import Foundation
import Runway
import Testing

/// The replacements for the Foundation string API that FoundationEssentials lacks, checked
/// against Foundation itself (which the tests may import).
@Suite("Text without Foundation")
struct TextWithoutFoundationTests {
    /// Every space separator (Zs) and the zero-width space; the other Unicode white space, and a
    /// few look-alikes.
    static let spaces: [Unicode.Scalar] = [
        "\t", " ", "\u{A0}", "\u{1680}", "\u{2000}", "\u{2001}", "\u{2002}", "\u{2003}", "\u{2004}", "\u{2005}", "\u{2006}",
        "\u{2007}", "\u{2008}", "\u{2009}", "\u{200A}", "\u{202F}", "\u{205F}", "\u{3000}", "\u{200B}",
    ]
    static let notBlank: [Unicode.Scalar] = [
        "\n", "\r", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}", "\u{200C}", "\u{FEFF}", "\u{180E}", "a", "\u{301}", "\u{0}",
    ]

    @Test("containsIgnoringCase finds a lower-case fragment in any ASCII case, as lowercased().contains does")
    func containsIgnoringCase() {
        let texts = ["X-Api-Key", "x-goog-api-key", "KEYS", "Ke", "", "Accept", "x-Kéy", "tokenizer", "Set-Cookie", "ÄPI-KEY"]
        for text in texts {
            for fragment in ["key", "api-key", "token", "k", "cookie", "y"] {
                #expect(
                    text.containsIgnoringCase(lowercased: fragment) == text.lowercased().contains(fragment),
                    "\(text) \(fragment)")
            }
        }
    }

    @Test("trimmingBlanks removes what trimmingCharacters(in: .whitespaces) removes, and only that")
    func trimmingMatchesFoundation() {
        var texts = [
            "", " ", "a", " a ", "\t a b \t", "  \r\n  x  \r\n  ", "é", " e\u{301} ", " \u{301}", "a \u{301}", "🇫🇷 ", "\u{A0}\u{A0}",
        ]
        for scalar in Self.spaces + Self.notBlank {
            let s = String(scalar)
            texts += [s, s + "x" + s, "x" + s, s + "x", s + s + "mid" + s + "dle" + s + s]
        }
        for text in texts {
            #expect(text.trimmingBlanks() == text.trimmingCharacters(in: .whitespaces), "\(text.debugDescription)")
            #expect(text[...].trimmingBlanks() == text.trimmingCharacters(in: .whitespaces), "\(text.debugDescription)")
        }
        for scalar in Self.spaces { #expect(scalar.isBlank, "\(scalar.escaped(asASCII: true))") }
        for scalar in Self.notBlank { #expect(!scalar.isBlank, "\(scalar.escaped(asASCII: true))") }
    }

    @Test("every scalar of the first two planes is a blank exactly when CharacterSet.whitespaces holds it")
    func blankIsWhitespaces() {
        let whitespaces = CharacterSet.whitespaces
        for value in UInt32(0)..<0x2_0000 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            if scalar.isBlank != whitespaces.contains(scalar) {
                Issue.record("U+\(String(value, radix: 16)): isBlank \(scalar.isBlank)")
            }
        }
    }

    @Test("percentDecoded returns what removingPercentEncoding returns, nil included")
    func percentDecodingMatchesFoundation() {
        let texts = [
            "", "abc", "a%20b", "%41%42", "%e2%82%ac", "%E2%82%AC", "%", "%4", "%4g", "%%41", "a+b", "%2B", "%C3", "%C3%28", "%FF",
            "caf%C3%A9", "%F0%9F%98%80", "100%", "%ZZ", "é%20",
        ]
        for text in texts {
            #expect(text.percentDecoded() == text.removingPercentEncoding, "\(text)")
        }
        #expect("a+b%2B".percentDecoded(plusIsSpace: true) == "a b+")
        #expect("a+b%2".percentDecoded(plusIsSpace: true) == nil)
    }

    @Test("a foreign error's text: a POSIX error or a file error of Foundation's in the C library's words")
    func errorText() {
        #expect(RunwayError.text(describing: POSIXError(.ENOENT)) == "No such file or directory")
        #expect(RunwayError.text(describing: RunwayError(.fileIO, "disk full")) == "disk full")
        do {
            _ = try FileManager.default.attributesOfItem(atPath: "/nonexistent/runway")
            Issue.record("no error")
        } catch {
            #expect(RunwayError.text(describing: error) == "No such file or directory")
        }
        struct Custom: Error, CustomStringConvertible { var description: String { "custom words" } }
        #expect(RunwayError.text(describing: Custom()) == "custom words")
    }
}
