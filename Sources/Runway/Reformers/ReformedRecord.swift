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
    private var values: [String: AnyHashableSendable]

    /// Creates an empty record.
    public init() {
        values = [:]
    }

    /// The value under `key`, if any; setting `nil` removes it.
    public subscript<Value>(key: ReformedKey<Value>) -> Value? {
        get { values[key.name]?.base as? Value }
        set { values[key.name] = newValue.map(AnyHashableSendable.init) }
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
private struct AnyHashableSendable: Hashable, Sendable {
    let base: any Hashable & Sendable

    init(_ base: any Hashable & Sendable) {
        self.base = base
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        AnyHashable(lhs.base) == AnyHashable(rhs.base)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(AnyHashable(base))
    }
}
