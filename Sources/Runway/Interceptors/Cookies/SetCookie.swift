import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One `Set-Cookie` field value, read after RFC 6265 §5.2 with the limits of its revision
/// (RFC 6265bis): what the server asks the jar to keep, before the jar checks it against the
/// URL it came from.
struct SetCookie: Equatable {
    var name: String
    var value: String
    /// The `Domain` attribute, lowercased and without its leading dot; `nil` when absent or empty.
    var domain: String?
    /// The `Path` attribute when it starts with `/`; `nil` otherwise (the URL's default path applies).
    var path: String?
    /// From `Max-Age` when present, else from `Expires`; `nil` for a session cookie.
    var expires: Date?
    var secure = false
    var httpOnly = false

    /// The most bytes a name and value may have together; a longer cookie is ignored.
    static let maximumNameAndValueBytes = 4096
    /// The most bytes of an attribute's value; a longer attribute is ignored.
    static let maximumAttributeValueBytes = 1024
    /// How far ahead an expiry may be (RFC 6265bis): a later one is brought back to it.
    static let maximumLifetime: TimeInterval = 400 * 86_400

    /// Reads `text`; `nil` when the server's cookie is to be ignored: no `=` in its first
    /// part, an empty name, a control character, or a name and value over 4,096 bytes.
    init?(_ text: String, now: Date) {
        // A control character (but tab) anywhere: the whole field is ignored (RFC 6265bis §5.6).
        guard !Self.hasControlCharacter(text) else { return nil }
        var parts = text.split(separator: ";", omittingEmptySubsequences: false)[...]
        guard let pair = parts.popFirst(), let equals = pair.firstIndex(of: "=") else { return nil }
        name = Self.trimmed(pair[..<equals])
        value = Self.trimmed(pair[pair.index(after: equals)...])
        guard !name.isEmpty, name.utf8.count + value.utf8.count <= Self.maximumNameAndValueBytes else { return nil }

        var maxAge: Date?
        var expiresAttribute: Date?
        for part in parts {
            let equals = part.firstIndex(of: "=")
            let attribute = Self.trimmed(part[..<(equals ?? part.endIndex)]).lowercased()
            let value = equals.map { Self.trimmed(part[part.index(after: $0)...]) } ?? ""
            guard value.utf8.count <= Self.maximumAttributeValueBytes else { continue }
            // The last of each attribute wins.
            switch attribute {
            case "expires":
                if let date = CookieDate.parse(value) { expiresAttribute = date }
            case "max-age":
                if let seconds = Self.maxAge(value) {
                    maxAge = seconds <= 0 ? Date.distantPast : now.addingTimeInterval(min(TimeInterval(seconds), Self.maximumLifetime))
                }
            case "domain":
                var domain = Substring(value)
                if domain.first == "." { domain = domain.dropFirst() }
                self.domain = domain.isEmpty ? nil : domain.lowercased()
            case "path":
                path = value.first == "/" ? value : nil
            case "secure":
                secure = true
            case "httponly":
                httpOnly = true
            default:
                break  // SameSite and the rest are a browser's business
            }
        }
        expires = maxAge ?? expiresAttribute.map { min($0, now.addingTimeInterval(Self.maximumLifetime)) }
    }

    /// A `Max-Age` value: an optional `-` then digits; `nil` for anything else (the attribute is
    /// then ignored). A number too large for `Int` is `Int.max`.
    private static func maxAge(_ text: String) -> Int? {
        var digits = Substring(text)
        let negative = digits.first == "-"
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        guard let number = Int(digits) else { return negative ? Int.min : Int.max }
        return negative ? -number : number
    }

    /// Whether `text` holds a control character other than tab, which no kept cookie has.
    static func hasControlCharacter(_ text: String) -> Bool {
        text.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }
    }

    /// `text` without leading and trailing spaces and tabs (RFC 6265's WSP).
    static func trimmed(_ text: Substring) -> String {
        let bytes = text.utf8
        let isWhitespace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = bytes.firstIndex(where: { !isWhitespace($0) }) else { return "" }
        let last = bytes.lastIndex(where: { !isWhitespace($0) }) ?? first
        return String(text[first...last])
    }
}

/// The date of an `Expires` attribute, read as RFC 6265 §5.1.1 says: leniently, since servers
/// write it many ways (`Wed, 21 Oct 2015 07:28:00 GMT`, `Wed, 21-Oct-15 07:28:00 GMT`, ...).
enum CookieDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"].map {
        Array($0.utf8)
    }

    /// The date, in UTC; `nil` when a part is missing or out of range, or before 1601.
    static func parse(_ text: String) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        for token in tokens(Array(text.utf8)) {
            if time == nil, let found = self.time(token) {
                time = found
            } else if day == nil, let found = leadingNumber(token, digits: 1...2) {
                day = found.value
            } else if month == nil, let found = self.month(token) {
                month = found
            } else if year == nil, let found = leadingNumber(token, digits: 2...4) {
                year = found.value
            }
        }
        guard let time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard year >= 1601, (1...31).contains(day), time.hour <= 23, time.minute <= 59, time.second <= 59 else { return nil }
        // A day the month does not have (30 February) is refused, not carried into the next month.
        let days = HTTPDate.days(year: year, month: month, day: day)
        guard HTTPDate.civil(days: days) == (year, month, day) else { return nil }
        let seconds = days * 86_400 + time.hour * 3_600 + time.minute * 60 + time.second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// The runs of bytes between delimiters (tab, and the punctuation RFC 6265 lists; not `:`).
    private static func tokens(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        func isDelimiter(_ byte: UInt8) -> Bool {
            byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte) || (0x5B...0x60).contains(byte)
                || (0x7B...0x7E).contains(byte)
        }
        return bytes.split(whereSeparator: isDelimiter)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// The number `token` starts with and its count of digits, when that count is in `allowed`
    /// (so no digit follows them).
    private static func leadingNumber(_ token: ArraySlice<UInt8>, digits allowed: ClosedRange<Int>) -> (value: Int, count: Int)? {
        let count = token.prefix(while: isDigit).count
        guard allowed.contains(count) else { return nil }
        return (token.prefix(count).reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }, count)
    }

    /// `hh:mm:ss` (one or two digits each), then anything not starting with a digit.
    private static func time(_ token: ArraySlice<UInt8>) -> (hour: Int, minute: Int, second: Int)? {
        var rest = token
        var fields: [Int] = []
        for index in 0..<3 {
            guard let number = leadingNumber(rest, digits: 1...2) else { return nil }
            fields.append(number.value)
            rest = rest.dropFirst(number.count)
            if index < 2 {
                guard rest.first == UInt8(ascii: ":") else { return nil }
                rest = rest.dropFirst()
            }
        }
        return (fields[0], fields[1], fields[2])
    }

    /// The month `token` starts with (its first three letters, in any case).
    private static func month(_ token: ArraySlice<UInt8>) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = token.prefix(3).map { $0 | 0x20 }
        return months.firstIndex { $0 == prefix }.map { $0 + 1 }
    }
}
