#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One value of SQLite's types, as bound to a statement's `?` parameter.
public enum SQLiteValue: Sendable, Equatable {
    /// SQL `NULL`.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// A 64-bit float.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes; empty is a zero-length blob, not `NULL`.
    case blob(Data)
}

/// A Swift value that can be bound to a statement's `?` parameter.
public protocol SQLiteBindable {
    /// The value as SQLite stores it.
    var sqliteValue: SQLiteValue { get }
}

extension SQLiteValue: SQLiteBindable {
    /// The value itself.
    public var sqliteValue: SQLiteValue { self }
}

extension Int: SQLiteBindable {
    /// An integer.
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
}

extension Int64: SQLiteBindable {
    /// An integer.
    public var sqliteValue: SQLiteValue { .integer(self) }
}

extension Bool: SQLiteBindable {
    /// 1 or 0, as SQLite stores booleans.
    public var sqliteValue: SQLiteValue { .integer(self ? 1 : 0) }
}

extension Double: SQLiteBindable {
    /// A float.
    public var sqliteValue: SQLiteValue { .real(self) }
}

extension String: SQLiteBindable {
    /// Text.
    public var sqliteValue: SQLiteValue { .text(self) }
}

extension Data: SQLiteBindable {
    /// A blob.
    public var sqliteValue: SQLiteValue { .blob(self) }
}

extension [UInt8]: SQLiteBindable {
    /// A blob.
    public var sqliteValue: SQLiteValue { .blob(Data(self)) }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    /// The wrapped value, or `NULL`.
    public var sqliteValue: SQLiteValue { self?.sqliteValue ?? .null }
}
