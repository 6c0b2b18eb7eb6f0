import Foundation
import Testing

@testable import Runway

@Suite struct RetryAfterTests {
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    @Test func parsesDelaySeconds() {
        #expect(RetryAfter.delay(from: "120") == .seconds(120))
        #expect(RetryAfter.delay(from: " 0 ") == .zero)
        #expect(RetryAfter.delay(from: "99999999999999999999999")! > .seconds(1_000_000))
    }

    @Test func parsesTheThreeHTTPDateForms() {
        let now = Date(timeIntervalSince1970: 784_111_777 - 10)  // 10 s before Sun, 06 Nov 1994 08:49:37 GMT
        #expect(RetryAfter.delay(from: "Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .seconds(10))
        #expect(RetryAfter.delay(from: "Sunday, 06-Nov-94 08:49:37 GMT", now: now) == .seconds(10))
        #expect(RetryAfter.delay(from: "Sun Nov  6 08:49:37 1994", now: now) == .seconds(10))
    }

    @Test func pastDateIsNoDelayAndGarbageIsIgnored() {
        #expect(RetryAfter.delay(from: "Sun, 06 Nov 1994 08:49:37 GMT") == .zero)
        #expect(RetryAfter.delay(from: "soon") == nil)
        #expect(RetryAfter.delay(from: "-5") == nil)
        #expect(RetryAfter.delay(from: "") == nil)
    }
}
