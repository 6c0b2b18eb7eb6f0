#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The name/value parameters a request carries in its query string and, for an
/// `application/x-www-form-urlencoded` body, in its form fields.
///
/// Signing, cache keys and validation read parameters through this one type so that they all
/// agree on what "the parameters" are. Names and values are percent-decoded (`+` in a form or
/// query means a space); order and duplicates are kept as sent.
/// ```swift
/// let parameters = RequestParameters(request)
/// parameters.values(for: "city")    // ["Shanghai"]
/// parameters.canonicalForm           // "city=Shanghai&page=2"
/// ```
public struct RequestParameters: Sendable, Equatable {
    /// One parameter, decoded.
    public struct Item: Sendable, Equatable {
        /// The decoded name.
        public var name: String
        /// The decoded value.
        public var value: String

        /// Creates a parameter.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The query parameters followed by the form parameters, in the order sent.
    public var items: [Item]
    /// Whether the items are the exact decoding of what was sent: every `%` began a valid
    /// escape and the decoded bytes are UTF-8. When not, two different queries can decode to the
    /// same items (`%FF` and `%FE` both to U+FFFD, `%ZZ` and `%25ZZ` both to `%ZZ`), so
    /// ``canonicalForm`` does not identify the request: signing refuses it, and a cache keys it
    /// by its query as sent.
    public var isExactlyDecoded: Bool

    /// Creates parameters from decoded items.
    public init(_ items: [Item]) {
        self.items = items
        self.isExactlyDecoded = true
    }

    /// The query parameters of `request`, followed by its form fields when the body is
    /// `application/x-www-form-urlencoded`.
    public init(_ request: Request) {
        self.init(
            percentEncodedQuery: request.url.query(percentEncoded: true),
            contentType: request.headers["Content-Type"],
            body: request.body)
    }

    /// Parameters from the raw parts of a request as a server sees them.
    /// - Parameters:
    ///   - percentEncodedQuery: The query string without `?`, as on the wire.
    ///   - contentType: The `Content-Type` header; form fields are read only for
    ///     `application/x-www-form-urlencoded`.
    ///   - body: The request body.
    public init(percentEncodedQuery: String?, contentType: String?, body: Data?) {
        var exact = true
        var items = percentEncodedQuery.map { Self.decode($0, exact: &exact) } ?? []
        if let body, !body.isEmpty, let contentType, Self.isForm(contentType) {
            if let text = String(validating: body, as: UTF8.self) {
                items += Self.decode(text, exact: &exact)
            } else {
                items += Self.decode(String(decoding: body, as: UTF8.self), exact: &exact)
                exact = false
            }
        }
        self.items = items
        self.isExactlyDecoded = exact
    }

    /// Every value sent for `name`, in order.
    public func values(for name: String) -> [String] {
        items.filter { $0.name == name }.map(\.value)
    }

    /// Whether there are no parameters.
    public var isEmpty: Bool { items.isEmpty }

    /// The parameters as `name=value` pairs, each part percent-encoded per RFC 3986 (only
    /// unreserved characters left as they are), sorted by name, the values of one name in the
    /// order they were sent, joined by `&`.
    ///
    /// Reordering parameters of different names does not change it; changing, adding or
    /// removing one does, and so does reordering the values of one name (`a=1&a=2` against
    /// `a=2&a=1`: a server that reads the first value gets another one). Because `&` and `=`
    /// inside names and values are encoded, no two different parameter lists share a canonical
    /// form.
    public var canonicalForm: String {
        // Encoded parts are ASCII, so comparing their bytes is the same order everywhere
        // (no Unicode-aware String comparison, which is slower and not what a server uses).
        // Sorted by name, then by position: the values of a name keep their order.
        let pairs = items.enumerated().map { (Array(Self.encode($1.name).utf8), Array(Self.encode($1.value).utf8), $0) }
            .sorted { $0.0 != $1.0 ? $0.0.lexicographicallyPrecedes($1.0) : $0.2 < $1.2 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(pairs.reduce(0) { $0 + $1.0.count + $1.1.count + 2 })
        for (index, pair) in pairs.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: "&")) }
            bytes += pair.0
            bytes.append(UInt8(ascii: "="))
            bytes += pair.1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The canonical form of the parameters of a percent-encoded query (without `?`): the same
    /// as ``canonicalForm`` of `RequestParameters(percentEncodedQuery:contentType:body:)`, but a
    /// query that already is canonical (as API managers build them) is returned without decoding.
    /// A query that does not decode exactly (``isExactlyDecoded``) is returned as it is, so two
    /// different queries never share the result.
    public static func canonicalForm(percentEncodedQuery query: Substring) -> String {
        if isCanonical(query) { return String(query) }
        var exact = true
        let items = decode(String(query), exact: &exact)
        return exact ? RequestParameters(items).canonicalForm : String(query)
    }

    /// Whether a query already is its own canonical form: `name=value` pieces of unreserved
    /// characters only, each with one `=`, sorted by name (the values of a name in any order).
    public static func isCanonical(_ query: Substring) -> Bool {
        query.withUTF8Bytes(isCanonical)
    }

    /// ``isCanonical(_:)`` of a query's UTF-8.
    static func isCanonical(_ bytes: Span<UInt8>) -> Bool {
        var previous: Range<Int>?
        var start = 0
        while start < bytes.count {
            var end = start
            var equals: Int?
            while end < bytes.count, bytes[end] != UInt8(ascii: "&") {
                if bytes[end] == UInt8(ascii: "=") {
                    guard equals == nil else { return false }
                    equals = end
                } else if !isUnreserved(bytes[end]) {
                    return false
                }
                end += 1
            }
            guard let equals, equals > start else { return false }  // no "=", or an empty name
            let name = start..<equals
            if let previous, compare(bytes, previous, name) > 0 { return false }
            previous = name
            guard end < bytes.count else { return true }
            start = end + 1
            guard start < bytes.count else { return false }  // a trailing "&"
        }
        return true
    }

    /// The byte-wise order of two ranges of `bytes`: negative, zero or positive.
    private static func compare(_ bytes: Span<UInt8>, _ a: Range<Int>, _ b: Range<Int>) -> Int {
        for offset in 0..<min(a.count, b.count) {
            let x = bytes[a.lowerBound + offset]
            let y = bytes[b.lowerBound + offset]
            if x != y { return x < y ? -1 : 1 }
        }
        return a.count - b.count
    }

    /// Percent-encodes everything but RFC 3986 unreserved characters (`A-Z a-z 0-9 - . _ ~`).
    public static func encode(_ text: String) -> String {
        guard !text.allBytes(isUnreserved) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count * 3)
        appendEncoded(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func appendEncoded(_ text: String, to bytes: inout [UInt8]) {
        text.withUTF8Bytes { text in
            for index in text.indices {
                let byte = text[index]
                if isUnreserved(byte) {
                    bytes.append(byte)
                } else {
                    bytes.append(UInt8(ascii: "%"))
                    bytes.append(hexDigit(byte >> 4))
                    bytes.append(hexDigit(byte & 0x0F))
                }
            }
        }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// The upper-case hex digit of a value 0–15, as ASCII.
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }

    /// Decodes `a=1&b=x%20y` into items; `+` is a space, a malformed escape is kept literally,
    /// empty pieces (`a=1&&b=2`) are skipped, and a piece without `=` has an empty value.
    public static func decode(_ percentEncoded: String) -> [Item] {
        var exact = true
        return decode(percentEncoded, exact: &exact)
    }

    /// ``decode(_:)``, clearing `exact` when a piece does not decode exactly.
    static func decode(_ percentEncoded: String, exact: inout Bool) -> [Item] {
        var allExact = true
        let items = percentEncoded.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).map { piece in
            if let equals = piece.firstIndex(of: UInt8(ascii: "=")) {
                return Item(
                    name: percentDecode(Substring(piece[..<equals]), exact: &allExact),
                    value: percentDecode(Substring(piece[piece.index(after: equals)...]), exact: &allExact))
            }
            return Item(name: percentDecode(Substring(piece), exact: &allExact), value: "")
        }
        if !allExact { exact = false }
        return items
    }

    /// Decodes `%XX` escapes and (unless `plusIsSpace` is false, as in a path) `+`; a
    /// malformed escape is kept as written and invalid UTF-8 becomes U+FFFD, either way clearing
    /// `exact`.
    package static func percentDecode(_ text: Substring, plusIsSpace: Bool = true, exact: inout Bool) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) else {
            return String(text)
        }
        let utf8 = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var i = 0
        while i < utf8.count {
            let byte = utf8[i]
            if plusIsSpace, byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), i + 2 < utf8.count,
                let high = hexValue(utf8[i + 1]), let low = hexValue(utf8[i + 2])
            {
                out.append(high << 4 | low)
                i += 2
            } else {
                if byte == UInt8(ascii: "%") { exact = false }
                out.append(byte)
            }
            i += 1
        }
        if let decoded = String(validating: out, as: UTF8.self) { return decoded }
        exact = false
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of a hex digit, either case; `nil` for any other byte.
    package static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Whether a `Content-Type` value names a URL-encoded form: its media type, the part before
    /// the first `;` with spaces and tabs around it removed, is `application/x-www-form-urlencoded`
    /// in any case (`;application/x-www-form-urlencoded` has an empty media type: not a form).
    package static func isForm(_ contentType: String) -> Bool {
        // By scalar: a combining mark after the `;` does not join it to the media type.
        let mediaType = String(String.UnicodeScalarView(contentType.unicodeScalars.prefix { $0 != ";" }))
        return mediaType.trimmingSpacesAndTabs().lowercased() == "application/x-www-form-urlencoded"
    }
}
