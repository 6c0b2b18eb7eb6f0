import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The parameter and response rules of one API, checked and compiled when created.
///
/// ```swift
/// let rent = try APIValidation(
///     parameters: [
///         ParameterRule("city", .required, .length(1...40)),
///         ParameterRule("page", .type(.integer), .range(1...500)),
///         ParameterRule("sort", .oneOf(["price", "date"])),
///     ],
///     response: ResponseRule(contentType: "application/json", json: .object(["items": .array()])))
/// ```
public struct APIValidation: Sendable {
    /// The parameter rules, as given.
    public let parameters: [ParameterRule]
    /// The response rule, if any.
    public let response: ResponseRule?

    private let patterns: [String: CompiledPattern]

    /// Checks and compiles the rules.
    /// - Throws: `RunwayError` `.configuration` for an empty or repeated parameter name, an
    ///   invalid pattern, a negative length, a range with a NaN or infinite bound, an empty
    ///   `oneOf`, a contradictory type, or a response rule that could never pass.
    public init(parameters: [ParameterRule] = [], response: ResponseRule? = nil) throws(RunwayError) {
        var seen: Set<String> = []
        var patterns: [String: CompiledPattern] = [:]
        for rule in parameters {
            guard !rule.name.isEmpty else {
                throw RunwayError(.configuration, "a parameter rule has an empty name")
            }
            guard seen.insert(rule.name).inserted else {
                throw RunwayError(.configuration, "parameter \"\(rule.name)\" has two rules", field: rule.name)
            }
            let types = rule.constraints.compactMap { if case .type(let t) = $0.kind { t } else { nil } }
            if Set(types).count > 1 {
                throw RunwayError(.configuration, "parameter \"\(rule.name)\" has several types", field: rule.name)
            }
            for constraint in rule.constraints {
                switch constraint.kind {
                case .required, .type:
                    break
                case .range(let range):
                    if !range.lowerBound.isFinite || !range.upperBound.isFinite {
                        throw RunwayError(.configuration, "range of \"\(rule.name)\" is not finite", field: rule.name)
                    }
                case .length(let range):
                    if range.lowerBound < 0 {
                        throw RunwayError(.configuration, "length of \"\(rule.name)\" is negative", field: rule.name)
                    }
                case .pattern(let source):
                    do {
                        patterns[source] = try CompiledPattern(source)
                    } catch {
                        throw RunwayError(
                            .configuration, "parameter \"\(rule.name)\": \(error.message)", field: rule.name,
                            underlying: error.underlying)
                    }
                case .oneOf(let values):
                    if values.isEmpty {
                        throw RunwayError(.configuration, "oneOf of \"\(rule.name)\" is empty", field: rule.name)
                    }
                }
            }
        }
        try response?.check()
        self.parameters = parameters
        self.response = response
        self.patterns = patterns
    }

    /// Throws `.paramsInvalid`, naming the field, when the request breaks a parameter rule.
    public func validate(_ request: Request) throws(RunwayError) {
        try validate(request, pathParameters: [:])
    }

    /// `validate(_:)` of a request, counting too the parameters a manager put into its path,
    /// and counting as absent those it gave as null in the query.
    func validate(_ request: Request, pathParameters: [String: JSON], nullQueryParameters: Set<String> = []) throws(RunwayError) {
        guard !parameters.isEmpty else { return }
        let values = try ParameterValues(request, pathParameters: pathParameters, nullQueryParameters: nullQueryParameters)
        for rule in parameters {
            if values.repeatedMembers.contains(rule.name) {
                // JSONDecoder keeps the first value; many servers read the last.
                throw RunwayError(
                    .paramsInvalid, "\(rule.name) is named more than once in the JSON body; servers differ on which value counts",
                    field: rule.name)
            }
            let present = values[rule.name]
            if present.isEmpty {
                if rule.constraints.contains(where: { if case .required = $0.kind { true } else { false } }) {
                    throw RunwayError(.paramsInvalid, "\(rule.name) is required", field: rule.name)
                }
                continue
            }
            for value in present {
                for constraint in rule.constraints {
                    if let reason = check(value, against: constraint) {
                        throw RunwayError(.paramsInvalid, "\(rule.name) \(reason)", field: rule.name)
                    }
                }
            }
        }
    }

    /// Throws `.responseInvalid` when the response breaks the response rule.
    public func validate(_ response: Response) throws(RunwayError) {
        try self.response?.validate(response)
    }

    /// A bound as people write it: `100`, not `100.0`, when it is a whole number.
    private static func text(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : "\(number)"
    }

    /// Why `value` fails `constraint`, or `nil` when it passes. Never the value itself: the
    /// message is logged (by the logging interceptor, and by apps that log errors), and which
    /// parameters are secret is the app's to say (its logging redaction), not known here; the
    /// value is in the request.
    private func check(_ value: ParameterValues.Value, against constraint: ParameterConstraint) -> String? {
        switch constraint.kind {
        case .required:
            return nil
        case .type(let type):
            let ok =
                switch value {
                case .text(let text): type.matches(text: text)
                case .json(let json): type.matches(json: json)
                }
            return ok ? nil : "is not of type \(type)"
        case .range(let range):
            guard let number = value.number else { return "is not a number" }
            let bounds = "\(Self.text(range.lowerBound))...\(Self.text(range.upperBound))"
            guard !range.contains(number) else { return nil }
            return "is outside \(bounds)"
        case .length(let range):
            guard let length = value.length else { return "has no length" }
            // Which bound it crosses, never the length: a secret's length narrows it down.
            guard !range.contains(length) else { return nil }
            return length < range.lowerBound
                ? "is shorter than \(range.lowerBound), outside the length \(range)"
                : "is longer than \(range.upperBound), outside the length \(range)"
        case .pattern(let source):
            guard let text = value.string, let pattern = patterns[source] else { return "is not text" }
            return pattern.matches(text) ? nil : "does not match \(source)"
        case .oneOf(let allowed):
            guard let text = value.text, allowed.contains(text) else {
                return "is not one of \(allowed.joined(separator: ", "))"
            }
            return nil
        }
    }
}
