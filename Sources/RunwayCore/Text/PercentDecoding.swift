extension Substring {
    /// The text with its `%XX` escapes decoded, or `nil` when an escape is malformed or the
    /// bytes are not UTF-8: what Foundation's `removingPercentEncoding` returns. `+` stays `+`
    /// unless `plusIsSpace` (a form's names and values).
    package func percentDecoded(plusIsSpace: Bool = false) -> String? {
        var exact = true
        let decoded = RequestParameters.percentDecode(self, plusIsSpace: plusIsSpace, exact: &exact)
        return exact ? decoded : nil
    }
}

extension String {
    /// The text with its `%XX` escapes decoded, or `nil` when one is malformed or the bytes are
    /// not UTF-8: see `Substring.percentDecoded(plusIsSpace:)`.
    package func percentDecoded(plusIsSpace: Bool = false) -> String? {
        self[...].percentDecoded(plusIsSpace: plusIsSpace)
    }
}
