#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The parameters of a call: values by name, with typed access.
///
/// Local calls may pass any `Sendable` value (a model, a closure); URL calls carry the typed
/// values of path placeholders (`<int:id>` gives an `Int`) and query values as `String`, or as
/// `[String]` when a key is repeated. The typed getters convert strings where that is lossless:
/// ```swift
/// let id = try call.parameters.int("id")          // Int, or a String holding one
/// let tags = call.parameters.strings("tag")       // every value of a repeated key
/// ```
/// Order is kept (insertion order), so lookups are a short linear scan: calls carry few values
/// (query items are collected through a dictionary, so a long query still parses in linear time).
public struct MediatorParameters: Sendable, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// A value, typed where the resolver knows the type, so typed getters need no dynamic cast.
    enum Stored: Sendable {
        case string(String)
        case strings([String])
        case int(Int)
        case other(any Sendable)

        init(_ value: any Sendable) {
            switch value {
            case let text as String: self = .string(text)
            case let list as [String]: self = .strings(list)
            case let number as Int: self = .int(number)
            default: self = .other(value)
            }
        }

        var any: any Sendable {
            switch self {
            case .string(let text): text
            case .strings(let list): list
            case .int(let number): number
            case .other(let value): value
            }
        }
    }

    /// The values in insertion order (internal so that the query reader can grow them in place).
    var storage: [(key: String, value: Stored)]

    /// No parameters.
    public init() { storage = [] }

    /// Parameters from pairs; a later pair with the same key replaces an earlier one.
    public init(_ pairs: [(String, any Sendable)]) {
        storage = []
        storage.reserveCapacity(pairs.count)
        for (key, value) in pairs { self[key] = value }
    }

    public init(dictionaryLiteral elements: (String, any Sendable)...) {
        self.init(elements)
    }

    init(reserving capacity: Int) {
        storage = []
        storage.reserveCapacity(capacity)
    }

    /// The raw value for `key`, or `nil`; setting `nil` removes it.
    public subscript(key: String) -> (any Sendable)? {
        get { typed(key)?.any }
        set {
            if let index = position(of: key) {
                if let newValue { storage[index].value = Stored(newValue) } else { storage.remove(at: index) }
            } else if let newValue {
                storage.append((key, Stored(newValue)))
            }
        }
    }

    func typed(_ key: String) -> Stored? {
        position(of: key).map { storage[$0].value }
    }

    /// Where `key` is in `storage` (a short linear scan: calls carry few values).
    func position(of key: String) -> Int? {
        var index = 0
        while index < storage.count {
            if storage[index].key == key { return index }
            index += 1
        }
        return nil
    }

    /// The names present, in insertion order.
    public var keys: [String] { storage.map(\.key) }

    /// The number of values.
    public var count: Int { storage.count }

    /// Whether there are no values.
    public var isEmpty: Bool { storage.isEmpty }

    /// Whether `key` is present.
    public func contains(_ key: String) -> Bool { position(of: key) != nil }

    /// Appends without checking for an existing key (the resolver never produces duplicates).
    mutating func appendUnchecked(_ key: String, _ value: Stored) {
        storage.append((key, value))
    }

    /// The pairs in insertion order.
    public var pairs: [(key: String, value: any Sendable)] { storage.map { ($0.key, $0.value.any) } }

    /// The value for `key` as `T`; throws `.parameterMissing` or `.parameterInvalid`.
    public func value<T>(_ key: String, as type: T.Type = T.self) throws -> T {
        guard let raw = self[key] else { throw Self.missing(key) }
        guard let typed = raw as? T else {
            throw MediatorError(.parameterInvalid, "parameter '\(key)' is \(Swift.type(of: raw)), not \(T.self)", field: key)
        }
        return typed
    }

    /// The value for `key` as a `String` (the first one when the key was repeated).
    public func string(_ key: String) throws -> String {
        switch typed(key) {
        case .string(let value)?: return value
        case .strings(let values)?:
            guard let first = values.first else { throw Self.invalid(key, "is an empty list") }
            return first
        default: break
        }
        switch self[key] {
        case nil: throw Self.missing(key)
        case let value as String: return value
        case let values as [String]:
            guard let first = values.first else { throw Self.invalid(key, "is an empty list") }
            return first
        case let value as Substring: return String(value)
        case let value?: throw Self.invalid(key, "is \(type(of: value)), not a string")
        }
    }

    /// Every value for `key`: a repeated query key gives all of them, a single value gives one.
    public func strings(_ key: String) -> [String] {
        switch typed(key) {
        case .strings(let values)?: return values
        case .string(let value)?: return [value]
        default: break
        }
        switch self[key] {
        case let values as [String]: return values
        case let value as String: return [value]
        case let value?: return ["\(value)"]
        case nil: return []
        }
    }

    /// The value for `key` as an `Int`, converting a decimal string or another integer type
    /// (`Int64`, `UInt8`...) whose value an `Int` holds.
    public func int(_ key: String) throws -> Int {
        if case .int(let value)? = typed(key) { return value }
        switch self[key] {
        case nil: throw Self.missing(key)
        case let value as Int: return value
        case let value as any BinaryInteger:
            guard let number = Int(exactly: value) else { throw Self.invalid(key, "is \(value), out of the range of Int") }
            return number
        case let values as [String] where values.count > 1:
            throw Self.repeated(key, values.count)
        case let value?:
            guard let text = Self.text(value), let number = RouteConverter.parseInt(text) else {
                // Out of range only when it is an integer at all: an optional `-`, then digits.
                let digits = Self.text(value).map { text in
                    let unsigned = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
                    return !unsigned.isEmpty && unsigned.allSatisfy { $0.isASCII && $0.isNumber }
                }
                throw Self.invalid(key, digits == true ? "is out of the range of Int" : "is not an integer")
            }
            return number
        }
    }

    /// The error for a key given several times (`?tag=1&tag=2`) and read as one value.
    private static func repeated(_ key: String, _ count: Int) -> MediatorError {
        invalid(key, "is given \(count) times (read every value with strings(_:))")
    }

    /// The value for `key` as a `Double`, converting another number type (`Float`, `Int64`...)
    /// or a decimal string by the rule of the `<double:>` placeholder (``RouteConverter/double``):
    /// no hexadecimal, `inf` or `nan`.
    public func double(_ key: String) throws -> Double {
        switch self[key] {
        case nil: throw Self.missing(key)
        case let value as Double: return value
        case let value as any BinaryFloatingPoint: return Double(value)
        case let value as any BinaryInteger: return Double(value)
        case let values as [String] where values.count > 1: throw Self.repeated(key, values.count)
        case let value?:
            guard let text = Self.text(value), let number = RouteConverter.parseDouble(text) else {
                throw Self.invalid(key, "is not a finite number")
            }
            return number
        }
    }

    /// The value for `key` as a `Bool`: `true`/`false`/`1`/`0`/`yes`/`no` in strings.
    public func bool(_ key: String) throws -> Bool {
        switch self[key] {
        case nil: throw Self.missing(key)
        case let value as Bool: return value
        case let values as [String] where values.count > 1: throw Self.repeated(key, values.count)
        case let value?:
            switch Self.text(value)?.lowercased() {
            case "true", "1", "yes": return true
            case "false", "0", "no": return false
            default: throw Self.invalid(key, "is not a boolean")
            }
        }
    }

    /// The value for `key` as a `UUID`, converting its string form.
    public func uuid(_ key: String) throws -> UUID {
        switch self[key] {
        case nil: throw Self.missing(key)
        case let value as UUID: return value
        case let values as [String] where values.count > 1: throw Self.repeated(key, values.count)
        case let value?:
            guard let text = Self.text(value), let uuid = UUID(uuidString: text) else {
                throw Self.invalid(key, "is not a UUID")
            }
            return uuid
        }
    }

    public var description: String {
        "[" + storage.map { "\($0.key): \($0.value.any)" }.joined(separator: ", ") + "]"
    }

    private static func text(_ value: any Sendable) -> String? {
        switch value {
        case let text as String: return text
        case let text as Substring: return String(text)
        case let texts as [String]: return texts.count == 1 ? texts[0] : nil
        default: return nil
        }
    }

    private static func missing(_ key: String) -> MediatorError {
        MediatorError(.parameterMissing, "parameter '\(key)' is missing", field: key)
    }

    private static func invalid(_ key: String, _ what: String) -> MediatorError {
        MediatorError(.parameterInvalid, "parameter '\(key)' \(what)", field: key)
    }
}
