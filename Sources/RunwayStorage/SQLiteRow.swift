#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The current row of a query, read by column index (from 0); `NULL` reads as `nil`.
///
/// Valid only inside the closure it is handed to: the statement moves on after it returns.
/// What it reads is a copy, so the values may be kept.
/// ```swift
/// let entries = try db.rows("SELECT key, size FROM entry WHERE api = ?", api) { row in
///     (row.data(0) ?? Data(), row.int(1) ?? 0)
/// }
/// ```
public struct SQLiteRow {
    private let statement: SQLiteStatement

    init(_ statement: SQLiteStatement) {
        self.statement = statement
    }

    /// The number of columns.
    public var columnCount: Int { statement.columnCount }

    /// Whether the column is `NULL` (or out of range).
    public func isNull(_ column: Int) -> Bool { statement.isNull(Int32(column)) }

    /// The column as a 64-bit integer; `nil` for `NULL`.
    public func int64(_ column: Int) -> Int64? { isNull(column) ? nil : statement.int64(Int32(column)) }

    /// The column as an integer; `nil` for `NULL`.
    public func int(_ column: Int) -> Int? { int64(column).map { Int($0) } }

    /// The column as a float; `nil` for `NULL`.
    public func double(_ column: Int) -> Double? { isNull(column) ? nil : statement.double(Int32(column)) }

    /// The column as text; `nil` for `NULL`.
    public func string(_ column: Int) -> String? { isNull(column) ? nil : statement.text(Int32(column)) }

    /// The column's bytes; `nil` for `NULL`, empty for a zero-length blob or text.
    public func data(_ column: Int) -> Data? { isNull(column) ? nil : statement.data(Int32(column)) }

    /// The column's bytes as an array; `nil` for `NULL`, empty for a zero-length blob or text.
    public func bytes(_ column: Int) -> [UInt8]? { isNull(column) ? nil : statement.bytes(Int32(column)) }
}
