#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An HTTP-date (RFC 9110 §5.6.7) read by its grammar, in any locale and without Foundation's
/// `DateFormatter` (which needs ICU):
///
///     IMF-fixdate   Sun, 06 Nov 1994 08:49:37 GMT
///     rfc850-date   Sunday, 06-Nov-94 08:49:37 GMT   (obsolete)
///     asctime-date  Sun Nov  6 08:49:37 1994         (obsolete)
///
/// Strict where the grammar is: day and month names as spelled there (case-sensitive), two
/// digits for day, hour, minute and second, four for the year (two in the RFC 850 form), `GMT`
/// and no other zone, a day that exists in its month, hour 00–23, minute 00–59, second 00–60
/// (a leap second counts as the next minute's first). Lenient in two ways, as the parser this
/// one replaced was: runs of spaces count as one (the asctime form pads a one-digit day with a
/// second space), and the day name is checked for spelling but not against the date, as most
/// HTTP implementations do. An RFC 850 two-digit year is the latest year with those digits that
/// is at most 50 years after `now`'s (RFC 9110: a date that seems more than 50 years in the
/// future is in the past).
package enum HTTPDate {
    /// The date `text` spells, or `nil` when it is not an HTTP-date.
    package static func parse(_ text: String, now: Date = Date()) -> Date? {
        let fields = Array(text.utf8).split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        switch fields.count {
        case 6:  // IMF-fixdate: day-name "," day month year time "GMT"
            guard fields[0].last == UInt8(ascii: ","), isName(fields[0].dropLast(), in: shortDays), fields[1].count == 2,
                let day = number(fields[1]), let month = month(fields[2]),
                fields[3].count == 4, let year = number(fields[3]), let time = time(fields[4]), isGMT(fields[5])
            else { return nil }
            return date(year: year, month: month, day: day, time: time)
        case 4:  // rfc850-date: day-name-l "," day "-" month "-" 2DIGIT time "GMT"
            guard fields[0].last == UInt8(ascii: ","), isName(fields[0].dropLast(), in: longDays) else { return nil }
            let parts = fields[1].split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].count == 2, let day = number(parts[0]), let month = month(parts[1]),
                parts[2].count == 2, let twoDigits = number(parts[2]), let time = time(fields[2]), isGMT(fields[3])
            else { return nil }
            return date(year: fullYear(twoDigits, now: now), month: month, day: day, time: time)
        case 5:  // asctime-date: day-name month day time year
            guard isName(fields[0], in: shortDays), let month = month(fields[1]),
                (1...2).contains(fields[2].count), let day = number(fields[2]), let time = time(fields[3]),
                fields[4].count == 4, let year = number(fields[4])
            else { return nil }
            return date(year: year, month: month, day: day, time: time)
        default:
            return nil
        }
    }

    private static let shortDays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { Array($0.utf8) }
    private static let longDays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"].map {
        Array($0.utf8)
    }
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].map {
        Array($0.utf8)
    }

    private static func isName(_ field: ArraySlice<UInt8>, in names: [[UInt8]]) -> Bool {
        names.contains { $0.elementsEqual(field) }
    }

    /// 1–12 for a month name as the grammar spells it.
    private static func month(_ field: ArraySlice<UInt8>) -> Int? {
        months.firstIndex { $0.elementsEqual(field) }.map { $0 + 1 }
    }

    /// `hh:mm:ss`, two digits each, in range.
    private static func time(_ field: ArraySlice<UInt8>) -> (hour: Int, minute: Int, second: Int)? {
        let parts = field.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ $0.count == 2 }), let hour = number(parts[0]), let minute = number(parts[1]),
            let second = number(parts[2]), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        return (hour, minute, second)
    }

    private static func isGMT(_ field: ArraySlice<UInt8>) -> Bool {
        field.elementsEqual("GMT".utf8)
    }

    /// The value of a run of ASCII digits (at most four, so no overflow); `nil` for anything else.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count <= 4 else { return nil }
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// The latest year ending in `twoDigits` that is at most 50 years after `now`'s year.
    package static func fullYear(_ twoDigits: Int, now: Date) -> Int {
        let limit = civil(days: Int((now.timeIntervalSince1970 / 86_400).rounded(.down))).year + 50
        return limit - ((limit - twoDigits) % 100 + 100) % 100
    }

    private static func date(year: Int, month: Int, day: Int, time: (hour: Int, minute: Int, second: Int)) -> Date? {
        guard day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        let days = days(year: year, month: month, day: day)
        let seconds = days * 86_400 + time.hour * 3_600 + time.minute * 60 + time.second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's
    /// `days_from_civil`).
    package static func days(year: Int, month: Int, day: Int) -> Int {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01 (H. Hinnant's `civil_from_days`).
    package static func civil(days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
