#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Redaction {
    /// The bytes of a body above which a log or an archive that keeps `limit` bytes of it has its
    /// JSON redacted as it is read (``redactingJSONPrefix(_:limit:)``) rather than parsed whole:
    /// parsing 20 MB of JSON for the 4 KB an entry keeps took seconds on the call's path.
    package static let wholeBodyLimit = 64 * 1024

    /// The start of JSON text with hidden values replaced, read only as far as it takes to write
    /// `limit` bytes: the text as it was sent (its spacing, the order of its members), each
    /// value of a hidden member replaced by the placeholder, whatever the value (a string, a
    /// number, an object). JSON lines are values one after another.
    ///
    /// Nothing unread is shown: a member's value is written only once its name has been read
    /// whole, and a hidden value is skipped to its end before the placeholder is written. A value
    /// that turns out not to be JSON is taken back whole and replaced by the size of the rest.
    /// - Returns: `.prefix` with what was written and the body's size, `.text` when the whole
    ///   body fitted, `.binary` for a control character or bytes that are not UTF-8 in what was read.
    package func redactingJSONPrefix(_ body: Data, limit: Int) -> BodyText {
        var redactor = JSONPrefixRedactor(bytes: body, limit: max(1, limit), hides: hidesParameter)
        return redactor.run()
    }
}

/// A recursive-descent reader over JSON bytes (bounds-checked offsets into the body) that writes
/// what it reads, hidden values replaced, and stops once it has written its limit.
private struct JSONPrefixRedactor {
    let bytes: Data
    let limit: Int
    let hides: (String) -> Bool
    var offset = 0
    var depth = 0
    var output: [UInt8] = []

    /// The placeholder as a JSON string, as the whole-body redaction writes it.
    static let placeholder = Array(JSON.string(Redaction.placeholder).serialized().utf8)

    private enum Stop: Error {
        /// `limit` bytes are written.
        case full
        /// Not JSON.
        case malformed
        /// A control character: not text (`BodyText.binary`).
        case control
    }

    init(bytes: Data, limit: Int, hides: @escaping (String) -> Bool) {
        self.bytes = bytes
        self.limit = limit
        self.hides = hides
        output.reserveCapacity(limit)
    }

    mutating func run() -> Redaction.BodyText {
        // A UTF-8 byte order mark, which the whole-body parser skips too.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { offset = 3 }
        do {
            while true {
                try whitespace(emit: true)
                guard offset < bytes.count else { return text(complete: true) }
                let start = (output: output.count, offset: offset)
                do {
                    try value(emit: true)
                } catch .malformed {
                    output.removeSubrange(start.output...)
                    output += Array("<\(bytes.count - start.offset) bytes, not JSON>".utf8)
                    return text(complete: false)
                }
            }
        } catch .full {
            return text(complete: false)
        } catch .control {
            return .binary
        } catch {
            // `.malformed` is caught around each value.
            return .binary
        }
    }

    /// What was written, as text. A character the limit cut in two is left out (a UTF-8
    /// sequence has at most 4 bytes); bytes that are not UTF-8 anywhere else make it `.binary`.
    private func text(complete: Bool) -> Redaction.BodyText {
        for cut in 0...(complete ? 0 : 3) where cut <= output.count {
            if let text = String(validating: output.dropLast(cut), as: UTF8.self) {
                return complete ? .text(text) : .prefix(text, bodySize: bytes.count)
            }
        }
        return .binary
    }

    private func byte(at offset: Int) -> UInt8? {
        offset < bytes.count ? bytes[bytes.startIndex + offset] : nil
    }

    private mutating func put(_ byte: UInt8, emit: Bool) throws(Stop) {
        guard emit else { return }
        output.append(byte)
        if output.count >= limit { throw .full }
    }

    /// Reads `count` bytes from `start`, and writes them.
    private mutating func put(from start: Int, count: Int, emit: Bool) throws(Stop) {
        offset = start + count
        try put(from: start, emit: emit)
    }

    /// Writes the bytes from `start` to the current offset.
    private mutating func put(from start: Int, emit: Bool) throws(Stop) {
        guard emit else { return }
        for index in start..<offset {
            output.append(bytes[bytes.startIndex + index])
            if output.count >= limit { throw .full }
        }
    }

    private mutating func whitespace(emit: Bool) throws(Stop) {
        while let byte = byte(at: offset), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            offset += 1
            try put(byte, emit: emit)
        }
    }

    private mutating func value(emit: Bool) throws(Stop) {
        guard let first = byte(at: offset) else { throw .malformed }
        switch first {
        case UInt8(ascii: "{"), UInt8(ascii: "["): try container(emit: emit)
        case UInt8(ascii: "\""): _ = try string(emit: emit, decoding: false)
        case UInt8(ascii: "t"): try literal("true", emit: emit)
        case UInt8(ascii: "f"): try literal("false", emit: emit)
        case UInt8(ascii: "n"): try literal("null", emit: emit)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number(emit: emit)
        case ..<0x20: throw .control
        default: throw .malformed
        }
    }

    /// An object (`{`) or an array (`[`): its elements, separated by commas, up to its closing
    /// bracket.
    private mutating func container(emit: Bool) throws(Stop) {
        depth += 1
        if depth > JSON.maximumDepth { throw .malformed }
        let isObject = byte(at: offset) == UInt8(ascii: "{")
        let closing = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
        try put(from: offset, count: 1, emit: emit)
        try whitespace(emit: emit)
        var first = true
        while true {
            if first, byte(at: offset) == closing { break }
            first = false
            try whitespace(emit: emit)
            try isObject ? member(emit: emit) : value(emit: emit)
            try whitespace(emit: emit)
            if byte(at: offset) == closing { break }
            guard byte(at: offset) == UInt8(ascii: ",") else { throw .malformed }
            try put(from: offset, count: 1, emit: emit)
        }
        depth -= 1
        try put(from: offset, count: 1, emit: emit)
    }

    /// `"name": value`; the value of a hidden member is read to its end before anything is
    /// written in its place, so it is never shown.
    private mutating func member(emit: Bool) throws(Stop) {
        guard byte(at: offset) == UInt8(ascii: "\""), let name = try string(emit: emit, decoding: true) else { throw .malformed }
        try whitespace(emit: emit)
        guard byte(at: offset) == UInt8(ascii: ":") else { throw .malformed }
        try put(from: offset, count: 1, emit: emit)
        try whitespace(emit: emit)
        if hides(name) {
            try value(emit: false)
            for byte in Self.placeholder { try put(byte, emit: emit) }
        } else {
            try value(emit: emit)
        }
    }

    /// A string, written as it was sent; with `decoding`, also its text (escapes read), or `nil`
    /// when that is not UTF-8.
    private mutating func string(emit: Bool, decoding: Bool) throws(Stop) -> String? {
        offset += 1
        try put(UInt8(ascii: "\""), emit: emit)
        var decoded: [UInt8] = []
        while true {
            guard let byte = byte(at: offset) else { throw .malformed }
            if byte == UInt8(ascii: "\"") {
                offset += 1
                try put(byte, emit: emit)
                return decoding ? String(validating: decoded, as: UTF8.self) : nil
            }
            if byte < 0x20 { throw .control }
            guard byte == UInt8(ascii: "\\") else {
                offset += 1
                if decoding { decoded.append(byte) }
                try put(byte, emit: emit)
                continue
            }
            let start = offset
            let scalar = try escape()
            if decoding { UTF8.encode(scalar) { decoded.append($0) } }
            try put(from: start, emit: emit)
        }
    }

    /// The scalar of the escape at the offset (`\n`, `\u00e9`, a surrogate pair), read.
    private mutating func escape() throws(Stop) -> Unicode.Scalar {
        guard let letter = byte(at: offset + 1) else { throw .malformed }
        offset += 2
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return Unicode.Scalar(letter)
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            var code = try hex4()
            if (0xD800..<0xDC00).contains(code) {
                guard byte(at: offset) == UInt8(ascii: "\\"), byte(at: offset + 1) == UInt8(ascii: "u") else { throw .malformed }
                offset += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw .malformed }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(code) else { throw .malformed }  // a lone low surrogate
            return scalar
        default:
            throw .malformed
        }
    }

    private mutating func hex4() throws(Stop) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = byte(at: offset), let digit = RequestParameters.hexValue(byte) else { throw .malformed }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }

    private mutating func literal(_ word: String, emit: Bool) throws(Stop) {
        let start = offset
        for expected in word.utf8 {
            guard byte(at: offset) == expected else { throw .malformed }
            offset += 1
        }
        try put(from: start, emit: emit)
    }

    /// `-`? int (`.` digits)? ([eE] [+-]? digits)?, as RFC 8259 writes numbers (an int is `0` or
    /// does not start with one).
    private mutating func number(emit: Bool) throws(Stop) {
        let start = offset
        if byte(at: offset) == UInt8(ascii: "-") { offset += 1 }
        if byte(at: offset) == UInt8(ascii: "0") {
            offset += 1
        } else {
            guard digits() else { throw .malformed }
        }
        if byte(at: offset) == UInt8(ascii: ".") {
            offset += 1
            guard digits() else { throw .malformed }
        }
        if byte(at: offset) == UInt8(ascii: "e") || byte(at: offset) == UInt8(ascii: "E") {
            offset += 1
            if byte(at: offset) == UInt8(ascii: "+") || byte(at: offset) == UInt8(ascii: "-") { offset += 1 }
            guard digits() else { throw .malformed }
        }
        try put(from: start, emit: emit)
    }

    /// Reads digits; whether there was one.
    private mutating func digits() -> Bool {
        let start = offset
        while let byte = byte(at: offset), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { offset += 1 }
        return offset > start
    }
}
