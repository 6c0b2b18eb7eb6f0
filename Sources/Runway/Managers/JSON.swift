import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A JSON value: what an API manager keeps as the raw response.
///
/// Runway hands business code the raw data plus reformers (or a `Decodable` type) instead of
/// model objects.
/// `JSON` is that raw data as a `Sendable` value with typed access; integers and other numbers
/// are kept apart so that an ID never turns into `1.0e+15`. An integer beyond 64 bits
/// (`18446744073709551615`) is the nearest `Double`, as in most JSON libraries: decode such a
/// field with `load(as:)` into `UInt64` to keep it exact.
/// ```swift
/// let raw: JSON = try await manager.load()
/// let title = raw["data"]?["items"]?[0]?["title"]?.string   // String?
/// let count = raw["data"]?["total"]?.int ?? 0
/// ```
/// Literals build values in tests and parameters: `let params: JSON = ["page": 1, "q": "flat"]`.
public enum JSON: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 bits.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSON])
    /// An object; key order is not kept.
    case object([String: JSON])
}

extension JSON {
    /// The member `key` of an object; `nil` for a missing key or a non-object.
    public subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The element at `index` of an array; `nil` when out of range or not an array.
    public subscript(index: Int) -> JSON? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The string, if this is a string.
    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is an integer, or a double with no fractional part that fits.
    public var int: Int? {
        switch self {
        case .int(let value): return Int(exactly: value)
        case .double(let value): return Int(exactly: value)
        default: return nil
        }
    }

    /// The number as a `Double`, if this is a number.
    public var double: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The Boolean, if this is `true` or `false`.
    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an array.
    public var array: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, if this is an object.
    public var object: [String: JSON]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool { self == .null }

    /// The name of the first parameter that holds, at any depth, a number that is not finite
    /// (NaN, infinity): neither a URL nor JSON can carry one (serialised, it would be `null`).
    static func nonFiniteNumber(in parameters: [String: JSON]) -> String? {
        func isFinite(_ value: JSON) -> Bool {
            switch value {
            case .double(let number): number.isFinite
            case .array(let elements): elements.allSatisfy(isFinite)
            case .object(let members): members.values.allSatisfy(isFinite)
            default: true
            }
        }
        return parameters.first { !isFinite($0.value) }?.key
    }

    /// A value as the text a query string carries: strings as they are, numbers and Booleans
    /// in JSON spelling, `null` as empty, arrays and objects as compact JSON. (A manager's call
    /// sends a top-level array parameter as one pair per element, each element's `queryText`.)
    public var queryText: String {
        switch self {
        case .string(let value): value
        case .null: ""
        default: serialized()
        }
    }
}

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSON: CustomStringConvertible {
    /// Compact JSON text.
    public var description: String { serialized() }
}
