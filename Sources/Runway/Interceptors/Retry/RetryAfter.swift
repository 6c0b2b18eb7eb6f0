import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Parses a `Retry-After` header value (RFC 9110 §10.2.3): delay seconds or an HTTP-date.
/// (`package`: the action log's uploader honours it too.)
package enum RetryAfter {
    /// The delay the value asks for, measured from `now`; `nil` when the value is neither form.
    /// A date in the past is a zero delay.
    package static func delay(from value: String, now: Date = Date()) -> Duration? {
        let trimmed = value.trimmingBlanks()
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Very long digit strings overflow Int; treat them as "very long".
            return .seconds(Int64(trimmed) ?? Int64.max / 1_000_000_000)
        }
        guard let date = HTTPDate.parse(trimmed, now: now) else { return nil }
        let interval = date.timeIntervalSince(now)
        return interval > 0 ? .seconds(interval) : .zero
    }
}
