import RunwayCore

/// A typed key of a ``ReformedRecord``: the Swift form of named constant keys
/// (`kPropertyListDataKeyID`).
///
/// Declare a reformer's keys next to it, named after it, and use them at every call site:
/// ```swift
/// enum PropertyListKey {
///     static let id = ReformedKey<String>("PropertyList.id")
///     static let title = ReformedKey<String>("PropertyList.title")
///     static let price = ReformedKey<Int>("PropertyList.price")
/// }
/// cell.title = record[PropertyListKey.title]
/// ```
public struct ReformedKey<Value: Hashable & Sendable>: Hashable, Sendable, CustomStringConvertible {
    /// The key's name; unique within a record.
    public let name: String

    /// Creates a key.
    public init(_ name: String) {
        self.name = name
    }

    public var description: String { name }
}
