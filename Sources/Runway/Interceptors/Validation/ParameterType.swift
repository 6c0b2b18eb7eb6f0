import RunwayCore

/// The type a parameter's value must have.
///
/// Query and form values are text, so for them the type means "parses as": `"12"` is an
/// integer, `"true"`/`"false"`/`"1"`/`"0"` are booleans. In a JSON body the JSON type itself
/// must match (`12` is an integer, `"12"` is a string).
public struct ParameterType: Sendable, Hashable, CustomStringConvertible {
    private enum Base: String, Sendable, Hashable {
        case string, integer, number, boolean, array, object
    }

    private let base: Base

    /// Any text; in JSON, a string.
    public static let string = ParameterType(base: .string)
    /// A whole number.
    public static let integer = ParameterType(base: .integer)
    /// Any finite number, whole or not; in a query or form, written in decimal (`-1.5`, `2e3`,
    /// not `0x10`, `inf` or `nan`).
    public static let number = ParameterType(base: .number)
    /// `true` or `false` (`1`/`0` in a query or form).
    public static let boolean = ParameterType(base: .boolean)
    /// A JSON array (only in a JSON body).
    public static let array = ParameterType(base: .array)
    /// A JSON object (only in a JSON body).
    public static let object = ParameterType(base: .object)

    public var description: String { base.rawValue }

    /// Whether a text value (query or form) has this type.
    func matches(text: String) -> Bool {
        switch base {
        case .string: true
        case .integer: Int64(text) != nil
        case .number: Self.decimalNumber(text) != nil
        case .boolean: ["true", "false", "1", "0"].contains(text)
        case .array, .object: false
        }
    }

    /// `text` as a finite decimal number (`12`, `-0.5`, `1e3`), or `nil`: `Double` also reads
    /// hexadecimal (`0x10`, `0x1p4`), `inf` and `nan`, which a server reading a number does not.
    static func decimalNumber(_ text: String) -> Double? {
        let decimal = text.utf8.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: ".") || byte | 0x20 == UInt8(ascii: "e")
        }
        return decimal ? Double(text).flatMap { $0.isFinite ? $0 : nil } : nil
    }

    /// Whether a JSON value has this type.
    func matches(json: JSONValue) -> Bool {
        switch (base, json) {
        case (.string, .string), (.integer, .integer), (.number, .integer), (.number, .number),
            (.boolean, .bool), (.array, .array), (.object, .object):
            true
        default:
            false
        }
    }
}
