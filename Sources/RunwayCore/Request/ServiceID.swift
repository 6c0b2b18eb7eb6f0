/// Names an API provider (a `Service`); API managers say which service they call by its ID.
///
/// Declare IDs once as static members so call sites stay typed:
/// ```swift
/// extension ServiceID {
///     static let rental: ServiceID = "rental"
/// }
/// ```
public struct ServiceID: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The identifier text.
    public let rawValue: String

    /// Creates an ID from its text.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Creates an ID from a string literal.
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    public var description: String { rawValue }
}
