import Foundation
import Testing

@testable import Runway

/// The HTTP-date parser behind `Retry-After` (RFC 9110 §5.6.7), which replaced `DateFormatter`.
@Suite struct HTTPDateTests {
    /// 1994-11-06 08:49:37 UTC, RFC 9110's example.
    static let example = Date(timeIntervalSince1970: 784_111_777)
    static let now = Date(timeIntervalSince1970: 1_764_000_000)  // 2025-11-24

    @Test("the three forms of RFC 9110's example are the same instant")
    func threeForms() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: Self.now) == Self.example)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: Self.now) == Self.example)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994", now: Self.now) == Self.example)
        #expect(HTTPDate.parse("Sun Nov 06 08:49:37 1994", now: Self.now) == Self.example)
    }

    @Test("agrees with DateFormatter on IMF-fixdate for a date every 9,999,991 s from 1900 to 2100")
    func agreesWithDateFormatter() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var seconds = -2_208_988_800.0  // 1900-01-01
        while seconds < 4_102_444_800 {  // 2100-01-01
            let date = Date(timeIntervalSince1970: seconds)
            let text = formatter.string(from: date)
            #expect(HTTPDate.parse(text, now: Self.now) == date, "\(text)")
            seconds += 9_999_991
        }
    }

    @Test("leap days exist only in leap years; day, hour, minute and second stay in range; 60 s is a leap second")
    func ranges() {
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 00:00:00 GMT", now: Self.now) != nil)
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 00:00:00 GMT", now: Self.now) != nil)
        #expect(HTTPDate.parse("Thu, 29 Feb 1900 00:00:00 GMT", now: Self.now) == nil)
        #expect(HTTPDate.parse("Sat, 29 Feb 2025 00:00:00 GMT", now: Self.now) == nil)
        #expect(HTTPDate.parse("Wed, 31 Apr 2025 00:00:00 GMT", now: Self.now) == nil)
        #expect(HTTPDate.parse("Wed, 00 Apr 2025 00:00:00 GMT", now: Self.now) == nil)
        #expect(HTTPDate.parse("Wed, 30 Apr 2025 24:00:00 GMT", now: Self.now) == nil)
        #expect(HTTPDate.parse("Wed, 30 Apr 2025 23:60:00 GMT", now: Self.now) == nil)
        #expect(HTTPDate.parse("Wed, 30 Apr 2025 23:59:61 GMT", now: Self.now) == nil)
        #expect(
            HTTPDate.parse("Wed, 31 Dec 2025 23:59:60 GMT", now: Self.now)
                == HTTPDate.parse("Thu, 01 Jan 2026 00:00:00 GMT", now: Self.now))
    }

    @Test(
        "what the grammar does not allow is no date",
        arguments: [
            "", "GMT", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 PST",
            "Sun, 06 Nov 1994 08:49:37 +0000", "sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 nov 1994 08:49:37 GMT",
            "Sun, 06 NOV 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov 1994 08:49 GMT", "Sun 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06 Nov 1994 08:49:37 GMT", "Sun, 06-Nov-94 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sunday, 6-Nov-94 08:49:37 GMT", "Sun Nov 6 08:49:37 94", "Sun Nov 6 08:49:37 1994 GMT", "Sun Nov 123 08:49:37 1994",
            "Sun, 06 Nov 1994 08:49:37 GMT extra", "Son, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nox 1994 08:49:37 GMT",
            "Sun, ０6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:3x GMT", "Sun, +6 Nov 1994 08:49:37 GMT",
        ])
    func rejects(_ text: String) {
        #expect(HTTPDate.parse(text, now: Self.now) == nil)
    }

    @Test("runs of spaces count as one, as before; the day name is not checked against the date")
    func lenience() {
        #expect(HTTPDate.parse("Sun,  06 Nov 1994   08:49:37 GMT", now: Self.now) == Self.example)
        #expect(HTTPDate.parse("Mon, 06 Nov 1994 08:49:37 GMT", now: Self.now) == Self.example)
    }

    @Test("an RFC 850 year is the latest with its two digits at most 50 years after now's")
    func twoDigitYears() {
        let in2025 = Self.now
        #expect(HTTPDate.fullYear(94, now: in2025) == 1994)
        #expect(HTTPDate.fullYear(75, now: in2025) == 2075)
        #expect(HTTPDate.fullYear(76, now: in2025) == 1976)
        #expect(HTTPDate.fullYear(25, now: in2025) == 2025)
        #expect(HTTPDate.fullYear(0, now: in2025) == 2000)
        let in2080 = Date(timeIntervalSince1970: 3_500_000_000)  // 2080-11-28
        #expect(HTTPDate.fullYear(30, now: in2080) == 2130)
        #expect(HTTPDate.fullYear(31, now: in2080) == 2031)
        #expect(HTTPDate.parse("Thursday, 01-Jan-76 00:00:00 GMT", now: Self.now) == Date(timeIntervalSince1970: 189_302_400))
        #expect(HTTPDate.parse("Wednesday, 01-Jan-70 00:00:00 GMT", now: Self.now) == Date(timeIntervalSince1970: 3_155_760_000))
    }

    @Test("days from 1970 and back agree for every day from 1600 to 2400")
    func civilCalendar() {
        var days = HTTPDate.days(year: 1600, month: 1, day: 1)
        let end = HTTPDate.days(year: 2400, month: 12, day: 31)
        #expect(HTTPDate.days(year: 1970, month: 1, day: 1) == 0)
        #expect(HTTPDate.days(year: 2000, month: 3, day: 1) == 11_017)
        while days <= end {
            let date = HTTPDate.civil(days: days)
            if HTTPDate.days(year: date.year, month: date.month, day: date.day) != days {
                Issue.record("day \(days) became \(date)")
            }
            days += 1
        }
    }
}
