#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Redaction {
    /// A body as text that can be shown, or why it cannot.
    package enum BodyText: Sendable, Equatable {
        /// UTF-8 text, hidden values replaced when it is JSON, XML or a form.
        case text(String)
        /// Not UTF-8, or holding control characters other than tab, CR and LF.
        case binary
        /// A `multipart/` body: its parts are not read, so it is never shown.
        case multipart
        /// The start of a large body, hidden values replaced, read only as far as the limit
        /// asked for needs; `bodySize` is the whole body's.
        case prefix(String, bodySize: Int)
    }

    /// `body` as text with hidden values replaced: JSON whatever the type says when it starts
    /// with `{` or `[` (JSON lines and broken JSON are read line by line, and a line that is not
    /// JSON is replaced by its size), XML when the type says so or it starts with `<`
    /// (``applyToXML(_:)``), a form when the type says so or it looks like one
    /// (`name=value&…` without spaces, tabs or line breaks but for one line break, LF or CR LF,
    /// at its end), else the text as it is.
    /// - Parameters:
    ///   - body: The bytes, as they are. A caller unsure whether they are still compressed may
    ///     ask: gzip bytes, and all but surely zlib and raw deflate ones, come back `.binary`.
    ///   - contentType: The body's `Content-Type`, if any.
    ///   - limit: How many bytes of the text the caller keeps, if it cuts it. A body over
    ///     ``wholeBodyLimit`` is then read only as far as that needs (`.prefix`): JSON as it is
    ///     redacted (``redactingJSONPrefix(_:limit:)``, in its own spacing and member order),
    ///     other text from its first `2 × limit` bytes, read as a whole body is (XML and form
    ///     redaction hide a cut element or value no less); a control character further on
    ///     then goes unseen.
    package func apply(toBody body: Data, contentType: String?, keeping limit: Int? = nil) -> BodyText {
        let type = contentType?.lowercased() ?? ""
        guard let limit, body.count > Self.wholeBodyLimit, !type.contains("multipart/") else { return apply(toWhole: body, type: type) }
        if type.contains("json") || [UInt8(ascii: "{"), UInt8(ascii: "[")].contains(Self.firstNonBlank(of: body)) {
            return redactingJSONPrefix(body, limit: limit)
        }
        switch apply(toWhole: Self.start(of: body, bytes: 2 * max(1, limit) + 4), type: type) {
        case .text(let text): return .prefix(String(text.prefix(utf8Bytes: limit)), bodySize: body.count)
        case let other: return other
        }
    }

    /// ``apply(toBody:contentType:keeping:)`` of a body read whole; `type` is lower-case.
    private func apply(toWhole body: Data, type: String) -> BodyText {
        guard let text = String(data: body, encoding: .utf8),
            !text.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\n" && $0 != "\r" && $0 != "\t" })
        else { return .binary }
        let start = text.first { !$0.isWhitespace }
        if type.contains("multipart/") {
            return .multipart
        } else if type.contains("json") || start == "{" || start == "[" {
            return .text(
                applyToJSON(body)
                    ?? text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                        line.allSatisfy(\.isWhitespace)
                            ? String(line) : applyToJSON(Data(line.utf8)) ?? "<\(line.utf8.count) bytes, not JSON>"
                    }.joined(separator: "\n"))
        } else if type.contains("xml") || start == "<" {
            return .text(applyToXML(text))
        }
        // A form may end in one line break (LF or CR LF), kept as it is.
        let (form, lineBreak) = Self.splittingLineBreak(off: text)
        if type.contains("x-www-form-urlencoded") || Self.looksLikeForm(form) {
            return .text(applyToForm(form) + lineBreak)
        }
        return .text(text)
    }

    /// The first `count` bytes of `body`, or fewer: never part of a character.
    private static func start(of body: Data, bytes count: Int) -> Data {
        var end = min(body.count, count)
        // The first byte left out continues a character: back to that character's first byte.
        var steps = 0
        while end > 0, end < body.count, steps < 3, body[body.startIndex + end] & 0xC0 == 0x80 {
            end -= 1
            steps += 1
        }
        return body.prefix(end)
    }

    /// The first byte that is not a space, tab or line break (after a UTF-8 byte order mark).
    private static func firstNonBlank(of body: Data) -> UInt8? {
        body.dropFirst(body.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0).first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
    }

    /// `name=value&…` with no spaces, tabs or line breaks: a form, whatever the type says.
    /// Scalars, not characters: in Swift CR LF is one `Character`, equal to neither CR nor LF.
    private static func looksLikeForm(_ text: String) -> Bool {
        text.contains("=") && !text.unicodeScalars.contains { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
    }

    /// The text without one line break (CR LF or LF) at its end, and that break ("" for none).
    private static func splittingLineBreak(off text: String) -> (String, String) {
        let bytes = text.utf8
        guard bytes.last == UInt8(ascii: "\n") else { return (text, "") }
        let size = bytes.dropLast().last == UInt8(ascii: "\r") ? 2 : 1
        return (String(decoding: bytes.dropLast(size), as: UTF8.self), String(decoding: bytes.suffix(size), as: UTF8.self))
    }
}
