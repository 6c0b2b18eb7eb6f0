import RunwayCore

/// The Public Suffix List (https://publicsuffix.org): the names under which anyone may register
/// a name of their own (`com`, `co.uk`, `github.io`). A cookie for such a name would go to every
/// site under it, so the ``CookieJar`` keeps none (RFC 6265 §5.3, step 5).
///
/// The list is built in (`Generated/PublicSuffixList.swift`, made by
/// `scripts/generate-public-suffixes.py`): both its sections, ICANN's and the private one, and
/// each internationalized rule also in its `xn--` form. Looking a name up is a binary search over
/// the sorted rules' bytes: nothing is allocated or built at start-up.
enum PublicSuffixes {
    /// Whether `domain` (lowercased, without a leading or trailing dot) is a public suffix under
    /// the list's algorithm: a rule names it (`co.uk`), or a wildcard rule its parent (`*.ck`
    /// for `foo.ck`), and no exception rule (`!www.ck`) names it or a domain it is under. A name
    /// of one label is one (the list's default rule `*`).
    static func isPublicSuffix(_ domain: String) -> Bool {
        // No rule has as many labels: not one (and a restored name of any length costs one pass).
        var dots = 0
        for byte in domain.utf8 where byte == UInt8(ascii: ".") {
            dots += 1
            if dots >= mostLabels { return false }
        }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count > 1 else { return true }
        // An exception rule prevails over every other match: the public suffix is then its parent,
        // shorter than `domain`.
        for start in labels.indices where contains("!" + labels[start...].joined(separator: ".")) {
            return false
        }
        return contains(domain) || contains("*." + labels.dropFirst().joined(separator: "."))
    }

    /// Whether `rule` is one of the list's lines.
    static func contains(_ rule: String) -> Bool {
        rule.withUTF8Bytes { key in
            rules.withUTF8Bytes { list in search(key, in: list) }
        }
    }

    /// Binary search for the line `key` in `list`: newline-separated lines sorted by their bytes,
    /// with a newline first and last. `low` and `high` are always where a line starts.
    private static func search(_ key: Span<UInt8>, in list: Span<UInt8>) -> Bool {
        let newline = UInt8(ascii: "\n")
        guard list.count > 1 else { return false }
        var low = 1
        var high = list.count
        while low < high {
            var start = (low + high) / 2
            while start > low, list[start - 1] != newline { start -= 1 }
            var end = start
            while end < list.count, list[end] != newline { end += 1 }
            switch compare(list, start..<end, key) {
            case 0: return true
            case ..<0: low = end + 1
            default: high = start
            }
        }
        return false
    }

    /// The order of `list[range]` and `key` by their bytes: negative, zero or positive.
    private static func compare(_ list: Span<UInt8>, _ range: Range<Int>, _ key: Span<UInt8>) -> Int {
        var index = 0
        while index < range.count, index < key.count {
            let (a, b) = (list[range.lowerBound + index], key[index])
            if a != b { return a < b ? -1 : 1 }
            index += 1
        }
        return range.count - key.count
    }
}
