import RunwayCore

/// A dictionary whose keys are typed: what a reformer hands a view when a dictionary suits.
///
/// Reading with a ``ReformedKey`` gives the key's value type, so no call site casts or spells a
/// string:
/// ```swift
/// var record = ReformedRecord()
/// record[PropertyListKey.id] = "esf-1"
/// let id: String? = record[PropertyListKey.id]
/// ```
/// Records compare equal when they hold the same keys with equal values.
public struct ReformedRecord: Sendable, Hashable, CustomStringConvertible {
    // Internal but visible to inlined code, so the generic subscript below is specialised in
    // the reformer's module: reformers set a few fields per item, for every item.
    @usableFromInline var values: [String: AnyHashableSendable]

    /// Creates an empty record.
    public init() {
        values = [:]
    }

    /// The value under `key`, if any; setting `nil` removes it.
    @inlinable public subscript<Value>(key: ReformedKey<Value>) -> Value? {
        get { values[key.name]?.base as? Value }
        set {
            if let newValue {
                // Room for a typical record at the first value: one allocation instead of a
                // dictionary that grows (and rehashes) as fields are added one by one.
                if values.isEmpty { values.reserveCapacity(8) }
                values[key.name] = AnyHashableSendable(newValue)
            } else {
                values[key.name] = nil
            }
        }
    }

    /// The number of values.
    public var count: Int { values.count }

    /// The key names present, sorted.
    public var keyNames: [String] { values.keys.sorted() }

    public var description: String {
        "[" + values.keys.sorted().map { "\($0): \(values[$0]?.base ?? "")" }.joined(separator: ", ") + "]"
    }
}

/// A type-erased hashable, sendable value.
@usableFromInline struct AnyHashableSendable: Hashable, Sendable {
    @usableFromInline let base: any Hashable & Sendable

    @inlinable init(_ base: any Hashable & Sendable) {
        self.base = base
    }

    @usableFromInline static func == (lhs: Self, rhs: Self) -> Bool {
        AnyHashable(lhs.base) == AnyHashable(rhs.base)
    }

    @usableFromInline func hash(into hasher: inout Hasher) {
        hasher.combine(AnyHashable(base))
    }
}
