#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns one path segment into a typed value, for placeholders like `<int:id>`.
///
/// Built-ins are static members: ``int``, ``double``, ``uuid``. `<string:name>` is the same as
/// an untyped `<name>`, and `<path:name>` is the catch-all. Register your own with
/// ``Mediator/Builder/register(converter:fileID:line:)``; a segment the converter rejects (returns `nil`)
/// does not match, and the resolver backtracks to the next candidate.
///
/// Typed placeholders at the same position are tried in a fixed order that never depends on
/// registration: `int`, `double`, `uuid`, then custom converters by name.
public struct RouteConverter: Sendable, CustomStringConvertible {
    /// The name used in patterns (`<name:placeholder>`).
    public let name: String
    /// The rank among typed placeholders at one position (lower is tried first).
    let rank: Int
    let convert: @Sendable (String) -> (any Sendable)?
    /// The segment for a value `convert` returns, for ``Mediator/url(target:action:parameters:)``;
    /// `nil` for the built-ins, whose values are written as such (decimal, the UUID's string).
    let format: (@Sendable (any Sendable) -> String?)?
    /// Whether this is the built-in `int` (the matcher parses it inline, without boxing).
    let isInt: Bool

    /// A custom converter.
    /// - Parameters:
    ///   - name: The name patterns use (`<name:placeholder>`): an identifier, not a built-in's.
    ///   - convert: The value of a segment, or `nil` for a segment that does not fit.
    ///   - format: The segment for a value of the kind `convert` returns, or `nil` for a value it
    ///     cannot write: what ``Mediator/url(target:action:parameters:)`` puts in the URL for a
    ///     value that is not a `String`. Without it, `url` takes only the segment's text (a
    ///     `String`) for such a placeholder: a number written in decimal would be read by the
    ///     converter in its own way (`255` as hexadecimal is 597), and open another value.
    public init(
        name: String, convert: @escaping @Sendable (String) -> (any Sendable)?,
        format: (@Sendable (any Sendable) -> String?)? = nil
    ) {
        self.init(name: name, rank: 100, convert: convert, format: format)
    }

    private init(
        name: String, rank: Int, isInt: Bool = false, convert: @escaping @Sendable (String) -> (any Sendable)?,
        format: (@Sendable (any Sendable) -> String?)? = nil
    ) {
        self.name = name
        self.rank = rank
        self.isInt = isInt
        self.convert = convert
        self.format = format
    }

    /// Whether this is one of ``int``, ``double`` and ``uuid``.
    var isBuiltIn: Bool { rank < 100 }

    /// A decimal integer (`-?[0-9]+`, fitting `Int`; leading zeros are not significant), delivered as `Int`.
    public static let int = RouteConverter(name: "int", rank: 0, isInt: true) { parseInt($0) }
    /// A finite decimal number, delivered as `Double`.
    public static let double = RouteConverter(name: "double", rank: 1) { parseDouble($0) }
    /// A UUID in its 36-character string form, delivered as `UUID`.
    public static let uuid = RouteConverter(name: "uuid", rank: 2) { UUID(uuidString: $0) }

    /// The converters every mediator knows.
    static let builtIns: [String: RouteConverter] = ["int": .int, "double": .double, "uuid": .uuid]
    /// Names with a fixed meaning in patterns.
    static let reservedNames: Set<String> = ["int", "double", "uuid", "string", "path"]

    public var description: String { name }

    /// Orders converters for deterministic precedence: rank, then name.
    static func precedes(_ lhs: RouteConverter, _ rhs: RouteConverter) -> Bool {
        (lhs.rank, lhs.name) < (rhs.rank, rhs.name)
    }

    /// Strict decimal integer parsing over UTF-8: optional `-`, digits only, no overflow.
    static func parseInt(_ text: String) -> Int? {
        var utf8 = text.utf8[...]
        guard !utf8.isEmpty else { return nil }
        var negative = false
        if utf8.first == UInt8(ascii: "-") {
            negative = true
            utf8 = utf8.dropFirst()
            guard !utf8.isEmpty else { return nil }
        }
        // Leading zeros are not significant: `00000000000000000042` is 42.
        while utf8.count > 1, utf8.first == UInt8(ascii: "0") { utf8 = utf8.dropFirst() }
        guard utf8.count <= 19 else { return nil }
        var value = 0
        for byte in utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let digit = Int(byte - UInt8(ascii: "0"))
            let (sum, overflow2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    /// Strict decimal number parsing: digits, `.`, a sign and an exponent only (no hexadecimal,
    /// `inf` or `nan`), finite.
    static func parseDouble(_ text: String) -> Double? {
        guard
            text.utf8.allSatisfy({
                ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "e")
                    || $0 == UInt8(ascii: "E") || $0 == UInt8(ascii: "+")
            }),
            let value = Double(text), value.isFinite
        else { return nil }
        return value
    }
}
