import Foundation
import RunwayCore

/// Parses a `Retry-After` header value (RFC 9110 §10.2.3): delay seconds or an HTTP-date.
enum RetryAfter {
    /// The delay the value asks for, measured from `now`; `nil` when the value is neither form.
    /// A date in the past is a zero delay.
    static func delay(from value: String, now: Date = Date()) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Very long digit strings overflow Int; treat them as "very long".
            return .seconds(Int64(trimmed) ?? Int64.max / 1_000_000_000)
        }
        guard let date = parseHTTPDate(trimmed) else { return nil }
        let interval = date.timeIntervalSince(now)
        return interval > 0 ? .seconds(interval) : .zero
    }

    /// IMF-fixdate, with the obsolete RFC 850 and asctime forms that RFC 9110 says to accept.
    static func parseHTTPDate(_ text: String) -> Date? {
        // asctime pads the day with a space ("Nov  6"); one space between fields is enough.
        let text = text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    private static let formats = [
        "EEE, dd MMM yyyy HH:mm:ss zzz",  // Sun, 06 Nov 1994 08:49:37 GMT
        "EEEE, dd-MMM-yy HH:mm:ss zzz",  // Sunday, 06-Nov-94 08:49:37 GMT
        "EEE MMM d HH:mm:ss yyyy",  // Sun Nov  6 08:49:37 1994
    ]
}
