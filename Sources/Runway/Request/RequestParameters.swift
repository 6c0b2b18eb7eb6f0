import Foundation

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

    /// Creates parameters from decoded items.
    public init(_ items: [Item]) {
        self.items = items
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
        var items = percentEncodedQuery.map(Self.decode) ?? []
        if let body, !body.isEmpty, let contentType, Self.isForm(contentType) {
            items += Self.decode(String(decoding: body, as: UTF8.self))
        }
        self.items = items
    }

    /// Every value sent for `name`, in order.
    public func values(for name: String) -> [String] {
        items.filter { $0.name == name }.map(\.value)
    }

    /// Whether there are no parameters.
    public var isEmpty: Bool { items.isEmpty }

    /// The parameters as `name=value` pairs, each part percent-encoded per RFC 3986 (only
    /// unreserved characters left as they are), sorted by name and then value, joined by `&`.
    ///
    /// Reordering parameters does not change it; changing, adding or removing one does, and
    /// because `&` and `=` inside names and values are encoded, no two different parameter lists
    /// share a canonical form.
    public var canonicalForm: String {
        items
            .map { (Self.encode($0.name), Self.encode($0.value)) }
            .sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// Percent-encodes everything but RFC 3986 unreserved characters (`A-Z a-z 0-9 - . _ ~`).
    public static func encode(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Decodes `a=1&b=x%20y` into items; `+` is a space, a malformed escape is kept literally,
    /// empty pieces (`a=1&&b=2`) are skipped, and a piece without `=` has an empty value.
    public static func decode(_ percentEncoded: String) -> [Item] {
        percentEncoded.split(separator: "&", omittingEmptySubsequences: true).map { piece in
            if let equals = piece.firstIndex(of: "=") {
                return Item(
                    name: percentDecode(piece[..<equals]),
                    value: percentDecode(piece[piece.index(after: equals)...]))
            }
            return Item(name: percentDecode(piece), value: "")
        }
    }

    /// Decodes `%XX` escapes and `+`; invalid escapes and invalid UTF-8 survive as written.
    static func percentDecode(_ text: Substring) -> String {
        let utf8 = Array(text.utf8)
        guard utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(text)
        }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var i = 0
        while i < utf8.count {
            let byte = utf8[i]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), i + 2 < utf8.count,
                let high = hexValue(utf8[i + 1]), let low = hexValue(utf8[i + 2])
            {
                out.append(high << 4 | low)
                i += 2
            } else {
                out.append(byte)
            }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Whether a `Content-Type` value names a URL-encoded form.
    static func isForm(_ contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first ?? ""
        return mediaType.trimmingCharacters(in: .whitespaces).lowercased() == "application/x-www-form-urlencoded"
    }
}
