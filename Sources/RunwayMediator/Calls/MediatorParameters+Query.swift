extension MediatorParameters {
    /// Above this many values a key is found through a dictionary instead of a linear scan
    /// (calls carry a handful of values; a hostile URL may carry a hundred thousand).
    static let linearScanLimit = 16

    /// Appends the query items of a scanned URL after the values already here, in linear time.
    ///
    /// A new key becomes a `String`, a repeated one a `[String]` (values in URL order, grown in
    /// place); a key among the values already here (path captures) wins and the item is ignored.
    /// Throws `.malformedURL` for an item that cannot be decoded, leaving the items read so far.
    mutating func addQueryItems(
        of scan: URLScanner.Scan, in bytes: [UInt8], options: MediatorURLOptions
    ) throws {
        let protected = storage.count
        var positions: [String: Int]? = nil
        try URLScanner.forEachQueryItem(bytes, scan, options: options) { key, value in
            addQueryItem(key, value, protected: protected, positions: &positions)
        }
    }

    private mutating func addQueryItem(_ key: String, _ value: String, protected: Int, positions: inout [String: Int]?) {
        let found = positions == nil ? position(of: key) : positions?[key]
        if let found {
            if found >= protected { storage[found].value.appendQueryValue(value) }
            return
        }
        positions?[key] = storage.count
        storage.append((key, .string(value)))
        if positions == nil, storage.count > Self.linearScanLimit {
            // The first of equal keys wins, as in `position(of:)` (and no trap if one ever repeats).
            positions = Dictionary(storage.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }
}

extension MediatorParameters.Stored {
    /// Adds the value of a repeated query key: a string becomes a list, a list grows in place.
    mutating func appendQueryValue(_ value: String) {
        switch self {
        case .string(let first):
            self = .strings([first, value])
        case .strings(var list):
            self = .int(0)  // drop this reference so that `list` is unique and `append` does not copy
            list.append(value)
            self = .strings(list)
        case .int, .other:
            break
        }
    }
}
