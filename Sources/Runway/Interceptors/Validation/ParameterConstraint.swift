import RunwayCore

/// One condition on a parameter: required, type, numeric range, length, pattern, or a fixed set
/// of allowed values.
///
/// Constraints other than ``required`` apply only when the parameter is present. Each value of
/// a repeated query parameter is checked on its own.
public struct ParameterConstraint: Sendable {
    enum Kind: Sendable {
        case required
        case type(ParameterType)
        case range(ClosedRange<Double>)
        case length(ClosedRange<Int>)
        case pattern(String)
        case oneOf([String])
    }

    let kind: Kind

    /// The parameter must be present (and not JSON `null`). An empty string is present; add
    /// ``length(_:)`` to reject it.
    public static let required = ParameterConstraint(kind: .required)

    /// The value must have `type`.
    public static func type(_ type: ParameterType) -> ParameterConstraint {
        ParameterConstraint(kind: .type(type))
    }

    /// The value must be a number within `range` (inclusive).
    public static func range(_ range: ClosedRange<Double>) -> ParameterConstraint {
        ParameterConstraint(kind: .range(range))
    }

    /// The value must be a number within `range` (inclusive).
    public static func range(_ range: ClosedRange<Int>) -> ParameterConstraint {
        ParameterConstraint(kind: .range(Double(range.lowerBound)...Double(range.upperBound)))
    }

    /// The value's length in characters (or a JSON array's element count) must be within
    /// `range`.
    public static func length(_ range: ClosedRange<Int>) -> ParameterConstraint {
        ParameterConstraint(kind: .length(range))
    }

    /// The value must match a regular expression (searched anywhere in the value unless you
    /// anchor it with `^...$`). An invalid pattern is a `.configuration` error at registration.
    ///
    /// The pattern runs on the standard library's `Regex`, in the ICU syntax
    /// `NSRegularExpression` reads, matching Unicode scalars as ICU does (`^.$` does not match
    /// `e` followed by a combining accent). It differs from `NSRegularExpression` in three ways:
    /// - `$` matches at the very end only; ICU also matched before a final line break (write `\Z`
    ///   for that), so `^\d+$` does not accept `"123\n"`;
    /// - case-insensitive matching folds one scalar to one, so `(?i)straße` does not match
    ///   `STRASSE` (it matches `STRAẞE`);
    /// - lookbehind (`(?<=…)`, `(?<!…)`), `\K` and the `(?w)` word-boundary mode are not
    ///   supported: such a pattern is refused at registration.
    public static func pattern(_ pattern: String) -> ParameterConstraint {
        ParameterConstraint(kind: .pattern(pattern))
    }

    /// The value must be one of `values` (compared as text; JSON numbers and booleans by their
    /// JSON spelling).
    public static func oneOf(_ values: [String]) -> ParameterConstraint {
        ParameterConstraint(kind: .oneOf(values))
    }
}

/// The constraints on one named parameter.
///
/// ```swift
/// ParameterRule("page", .type(.integer), .range(1...500))
/// ```
public struct ParameterRule: Sendable {
    /// The parameter's name: a query or form name, or a top-level member of a JSON object body.
    public var name: String
    /// What the parameter must satisfy.
    public var constraints: [ParameterConstraint]

    /// Creates a rule for the parameter `name`.
    public init(_ name: String, _ constraints: ParameterConstraint...) {
        self.name = name
        self.constraints = constraints
    }

    /// Creates a rule for the parameter `name` from a list of constraints.
    public init(_ name: String, constraints: [ParameterConstraint]) {
        self.name = name
        self.constraints = constraints
    }
}
