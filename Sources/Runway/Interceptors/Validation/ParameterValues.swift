import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The parameters of a request as validation sees them: query and form values as text, and
/// the top-level members of a JSON object body with their JSON types.
struct ParameterValues {
    enum Value {
        case text(String)
        case json(JSONValue)

        /// The value as a number, if it is one.
        var number: Double? {
            switch self {
            case .text(let text): ParameterType.decimalNumber(text)
            case .json(.integer(let value)): Double(value)
            case .json(.number(let value)): value
            case .json: nil
            }
        }

        /// The value as a string (not a JSON number or boolean).
        var string: String? {
            switch self {
            case .text(let text), .json(.string(let text)): text
            case .json: nil
            }
        }

        /// Characters of a string, elements of a JSON array.
        var length: Int? {
            switch self {
            case .text(let text), .json(.string(let text)): text.count
            case .json(.array(let items)): items.count
            case .json: nil
            }
        }

        /// The value spelled as text: strings as they are, JSON scalars in their JSON spelling.
        var text: String? {
            switch self {
            case .text(let text), .json(.string(let text)): text
            case .json(.integer(let value)): String(value)
            case .json(.number(let value)): String(value)
            case .json(.bool(let value)): String(value)
            case .json: nil
            }
        }
    }

    private var values: [String: [Value]] = [:]
    /// Members the JSON object body names more than once.
    private(set) var repeatedMembers: Set<String> = []

    /// Collects the parameters of `request`, and those a manager put into its path; a query
    /// parameter the manager gave as null (sent as an empty value) is absent.
    /// - Throws: `.paramsInvalid` when the body claims to be JSON but is not a JSON object.
    init(_ request: Request, pathParameters: [String: JSON] = [:], nullQueryParameters: Set<String> = []) throws(RunwayError) {
        for item in RequestParameters(request).items {
            if item.value.isEmpty, nullQueryParameters.contains(item.name) { continue }
            values[item.name, default: []].append(.text(item.value))
        }
        for (name, value) in pathParameters {
            // A path holds strings, numbers and booleans only (PathTemplate refuses the rest).
            let scalar: JSONValue? =
                switch value {
                case .string(let text): .string(text)
                case .int(let number): .integer(number)
                case .double(let number): .number(number)
                case .bool(let flag): .bool(flag)
                case .null, .array, .object: nil
                }
            if let scalar { values[name, default: []].append(.json(scalar)) }
        }
        guard let body = request.body, !body.isEmpty, Self.isJSON(request.headers["Content-Type"]) else { return }
        guard case .object(let members)? = JSONValue.parse(body) else {
            throw RunwayError(.paramsInvalid, "the JSON body is not a JSON object")
        }
        for (name, value) in members where value != .null {
            values[name, default: []].append(.json(value))
        }
        repeatedMembers = JSON.repeatedMembers(in: body)
    }

    /// Every value for `name`; empty when absent.
    subscript(name: String) -> [Value] { values[name] ?? [] }

    private static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let mediaType = (contentType.split(separator: ";", maxSplits: 1).first ?? "")
            .trimmingBlanks().lowercased()
        return mediaType == "application/json" || mediaType.hasSuffix("+json")
    }
}
