import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension JSON {
    /// The deepest nesting the parser accepts; deeper input is an error, not a stack overflow.
    public static let maximumDepth = 512

    /// Parses UTF-8 JSON text (RFC 8259; surrounding whitespace and a leading byte order mark
    /// allowed). An object that repeats
    /// a key keeps the first value, as `JSONDecoder` does.
    /// - Throws: `RunwayError` `.responseInvalid` naming the byte offset of the first problem.
    public init(parsing data: Data) throws(RunwayError) {
        var parser = JSONParser(bytes: [UInt8](data))
        self = try parser.parseDocument()
    }

    /// The members an object repeats at the top of `data` (a name written twice, however its
    /// characters are escaped); empty when there are none or `data` is not JSON. Validation
    /// refuses a ruled one: the parser checks the first value, a server may read the last.
    static func repeatedMembers(in data: Data) -> Set<String> {
        var parser = JSONParser(bytes: [UInt8](data))
        guard (try? parser.parseDocument()) != nil else { return [] }
        return parser.repeatedMembers
    }

    /// Parses JSON text given as a string.
    public init(parsing text: String) throws(RunwayError) {
        var parser = JSONParser(bytes: Array(text.utf8))
        self = try parser.parseDocument()
    }

    /// Parses JSON text whose numbers must keep their value: an integer beyond `Int64`, or a
    /// number with more digits than a `Double` holds, is an error instead of the nearest `Double`
    /// (for text an encoder made from the caller's values, which are sent on).
    init(parsingExactly data: Data) throws(RunwayError) {
        var parser = JSONParser(bytes: [UInt8](data))
        parser.exactNumbers = true
        self = try parser.parseDocument()
    }
}

/// A recursive-descent JSON parser over the body's bytes (bounds-checked indices into an
/// array): one pass, no intermediate `Any` values.
private struct JSONParser {
    let bytes: [UInt8]
    var index = 0
    var depth = 0
    /// Whether a number the `JSON` cases cannot hold exactly is an error (see `init(parsingExactly:)`).
    var exactNumbers = false
    /// The keys the top-level object repeats.
    var repeatedMembers: Set<String> = []

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func parseDocument() throws(RunwayError) -> JSON {
        // A UTF-8 byte order mark, which RFC 8259 §8.1 lets a parser ignore (`JSONDecoder` does).
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected data after the JSON value") }
        return value
    }

    private func failure(_ message: String) -> RunwayError {
        RunwayError(.responseInvalid, "not JSON: \(message) at byte \(index)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(RunwayError) -> JSON {
        guard index < bytes.count else { throw failure("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw failure("unexpected character")
        }
    }

    private mutating func expect(_ word: String) throws(RunwayError) {
        let count = word.utf8.count
        guard index + count <= bytes.count else { throw failure("unexpected end") }
        guard bytes[index..<index + count].elementsEqual(word.utf8) else { throw failure("invalid literal") }
        index += count
    }

    private mutating func enter() throws(RunwayError) {
        depth += 1
        if depth > JSON.maximumDepth { throw failure("nesting deeper than \(JSON.maximumDepth)") }
    }

    private mutating func parseObject() throws(RunwayError) -> JSON {
        try enter()
        index += 1
        var members: [String: JSON] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a key") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            // A repeated key keeps its first value, as JSONDecoder does: a typed result and the
            // raw data (reformers, validators) then agree on one response.
            if members[key] == nil {
                members[key] = value
            } else if depth == 1 {
                repeatedMembers.insert(key)
            }
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                depth -= 1
                return .object(members)
            } else {
                throw failure("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray() throws(RunwayError) -> JSON {
        try enter()
        index += 1
        var elements: [JSON] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return .array(elements)
            } else {
                throw failure("expected ',' or ']'")
            }
        }
    }

    private mutating func parseString() throws(RunwayError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = bytes[start..<index]
                index += 1
                guard let text = String(validating: slice, as: UTF8.self) else { throw failure("invalid UTF-8") }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("control character in string") }
            index += 1
        }
        var scalars = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                guard let text = String(validating: scalars, as: UTF8.self) else { throw failure("invalid UTF-8") }
                return text
            }
            if byte < 0x20 { throw failure("control character in string") }
            if byte != UInt8(ascii: "\\") {
                scalars.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { throw failure("unexpected end") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append(0x22)
            case UInt8(ascii: "\\"): scalars.append(0x5C)
            case UInt8(ascii: "/"): scalars.append(0x2F)
            case UInt8(ascii: "b"): scalars.append(0x08)
            case UInt8(ascii: "f"): scalars.append(0x0C)
            case UInt8(ascii: "n"): scalars.append(0x0A)
            case UInt8(ascii: "r"): scalars.append(0x0D)
            case UInt8(ascii: "t"): scalars.append(0x09)
            case UInt8(ascii: "u"):
                var code = try parseHex4()
                if (0xD800..<0xDC00).contains(code) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                    else { throw failure("unpaired surrogate") }
                    index += 2
                    let low = try parseHex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw failure("unpaired surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(code) {
                    throw failure("unpaired surrogate")
                }
                guard let scalar = Unicode.Scalar(code) else { throw failure("invalid escape") }
                UTF8.encode(scalar) { scalars.append($0) }
            default:
                throw failure("invalid escape")
            }
        }
        throw failure("unterminated string")
    }

    private mutating func parseHex4() throws(RunwayError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("unexpected end") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(RunwayError) -> JSON {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let slice = bytes[start..<index]
        if isInteger, let value = Self.int64(slice) { return .int(value) }
        let text = String(decoding: slice, as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw failure("number out of range") }
        // An integer beyond `Int64` is refused even when a `Double` holds it exactly
        // (`10000000000000000000`): it would be sent as `1e+19`, which a server reading an
        // integer type refuses.
        if exactNumbers, isInteger || Self.significand(of: slice) != Self.significand(of: "\(value.magnitude)".utf8) {
            let what = isInteger ? "an integer beyond 64 bits" : "a number with more digits than a Double holds"
            throw RunwayError(.invalidRequest, "\(text) (at byte \(start)) is \(what): it would be sent as \(value)")
        }
        return .double(value)
    }

    /// The value of a number's text as its significant digits and a power of ten (`12.50e1` is
    /// `125` and `0`; zero is no digits): two spellings of one value give the same pair.
    private static func significand(of text: some Collection<UInt8>) -> (digits: [UInt8], exponent: Int) {
        var digits: [UInt8] = []
        var exponent = 0
        var exponentText: [UInt8] = []
        var part = 0  // 0: integer digits, 1: fraction digits, 2: exponent
        for byte in text {
            switch byte {
            case UInt8(ascii: "."): part = 1
            case UInt8(ascii: "e"), UInt8(ascii: "E"): part = 2
            case UInt8(ascii: "0")...UInt8(ascii: "9") where part < 2:
                if digits.isEmpty, byte == UInt8(ascii: "0") {
                    if part == 1 { exponent -= 1 }  // a leading zero of the fraction
                    continue
                }
                digits.append(byte)
                if part == 1 { exponent -= 1 }
            case _ where part == 2: exponentText.append(byte)
            default: break  // the sign
            }
        }
        // A parsed number is finite, so its exponent has few digits; more count as a mismatch.
        if !exponentText.isEmpty {
            guard exponentText.count <= 8, let value = Int(String(decoding: exponentText, as: UTF8.self)) else { return ([], .min) }
            exponent += value
        }
        while digits.last == UInt8(ascii: "0") {
            digits.removeLast()
            exponent += 1
        }
        return digits.isEmpty ? ([], 0) : (digits, exponent)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// The integer spelled by `digits` (optional leading `-`), or `nil` when it overflows.
    private static func int64(_ digits: ArraySlice<UInt8>) -> Int64? {
        var negative = false
        var position = digits.startIndex
        if digits[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        var value: Int64 = 0
        while position < digits.endIndex {
            let digit = Int64(digits[position] - UInt8(ascii: "0"))
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) =
                negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            value = next
            position += 1
        }
        return value
    }
}
