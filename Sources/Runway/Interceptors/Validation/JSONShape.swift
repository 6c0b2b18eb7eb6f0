import RunwayCore

/// The expected shape of a JSON document, for response validation.
///
/// ```swift
/// let shape: JSONShape = .object([
///     "items": .array(of: .object(["id": .integer, "title": .string])),
///     "total": .integer,
/// ], optional: ["next": .string])
/// ```
/// Objects may carry members the shape does not mention; numbers accept integers.
public struct JSONShape: Sendable {
    indirect enum Kind: Sendable {
        case any, string, number, integer, boolean, null
        case array(JSONShape)
        case object(required: [String: JSONShape], optional: [String: JSONShape])
        case nullable(JSONShape)
    }

    let kind: Kind

    /// Any JSON value.
    public static let any = JSONShape(kind: .any)
    /// A string.
    public static let string = JSONShape(kind: .string)
    /// Any number.
    public static let number = JSONShape(kind: .number)
    /// A whole number.
    public static let integer = JSONShape(kind: .integer)
    /// `true` or `false`.
    public static let boolean = JSONShape(kind: .boolean)
    /// `null`.
    public static let null = JSONShape(kind: .null)

    /// An array whose every element has `element`'s shape.
    public static func array(of element: JSONShape = .any) -> JSONShape {
        JSONShape(kind: .array(element))
    }

    /// An object that has every `required` member, and whose `optional` members, when present
    /// and not `null`, have their shapes.
    public static func object(_ required: [String: JSONShape], optional: [String: JSONShape] = [:]) -> JSONShape {
        JSONShape(kind: .object(required: required, optional: optional))
    }

    /// This shape or `null`.
    public var orNull: JSONShape { JSONShape(kind: .nullable(self)) }

    /// The path of the first place `value` does not fit, and why; `nil` when it fits.
    func mismatch(in value: JSONValue, path: String) -> (path: String, reason: String)? {
        switch (kind, value) {
        case (.any, _), (.string, .string), (.number, .number), (.number, .integer),
            (.integer, .integer), (.boolean, .bool), (.null, .null):
            return nil
        case (.nullable, .null):
            return nil
        case (.nullable(let inner), _):
            return inner.mismatch(in: value, path: path)
        case (.array(let element), .array(let items)):
            for (index, item) in items.enumerated() {
                if let found = element.mismatch(in: item, path: "\(path)[\(index)]") { return found }
            }
            return nil
        case (.object(let required, let optional), .object(let members)):
            for (key, shape) in required.sorted(by: { $0.key < $1.key }) {
                let memberPath = path.isEmpty ? key : "\(path).\(key)"
                guard let member = members[key] else { return (memberPath, "is missing") }
                if let found = shape.mismatch(in: member, path: memberPath) { return found }
            }
            for (key, shape) in optional.sorted(by: { $0.key < $1.key }) {
                guard let member = members[key], member != .null else { continue }
                if let found = shape.mismatch(in: member, path: path.isEmpty ? key : "\(path).\(key)") {
                    return found
                }
            }
            return nil
        default:
            return (path.isEmpty ? "$" : path, "is \(value.typeName), expected \(expectedName)")
        }
    }

    private var expectedName: String {
        switch kind {
        case .any: "any"
        case .string: "string"
        case .number: "number"
        case .integer: "integer"
        case .boolean: "boolean"
        case .null: "null"
        case .array: "array"
        case .object: "object"
        case .nullable(let inner): "\(inner.expectedName) or null"
        }
    }
}
