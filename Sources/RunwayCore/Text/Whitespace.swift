extension Substring {
    /// The text without leading and trailing blanks: what Foundation's
    /// `trimmingCharacters(in: .whitespaces)` returns, without Foundation.
    ///
    /// A blank is exactly a member of `CharacterSet.whitespaces`: tab (U+0009), a space
    /// separator (general category Zs: U+0020, U+00A0, U+1680, U+2000–U+200A, U+202F, U+205F,
    /// U+3000), and the zero-width space U+200B, which Foundation counts too. Line breaks are not
    /// blanks. Like Foundation, it works on Unicode scalars, so a
    /// combining mark after a trailing space stays.
    package func trimmingBlanks() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.isBlank }) else { return "" }
        // A non-blank scalar exists, so the backward search finds one too.
        let last = scalars.lastIndex(where: { !$0.isBlank }) ?? first
        return String(scalars[first...last])
    }
}

extension String {
    /// The text without leading and trailing blanks (tab and the space separators): see
    /// `Substring.trimmingBlanks()`.
    package func trimmingBlanks() -> String {
        self[...].trimmingBlanks()
    }

    /// The text without the spaces and tabs around it: what HTTP strips around a field value
    /// (RFC 9110 §5.5), nothing else (a no-break space stays).
    package func trimmingSpacesAndTabs() -> String {
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard isBlank(utf8.first ?? 0) || isBlank(utf8.last ?? 0) else { return self }
        let trimmed = utf8.drop(while: isBlank).reversed().drop(while: isBlank).reversed()
        return String(decoding: Array(trimmed), as: UTF8.self)
    }
}

extension Unicode.Scalar {
    /// Tab, a space separator (Zs) or the zero-width space: a member of Foundation's
    /// `CharacterSet.whitespaces`.
    package var isBlank: Bool {
        switch value {
        case 0x09, 0x20, 0x200B: true
        case 0..<0x80: false
        default: properties.generalCategory == .spaceSeparator
        }
    }
}
