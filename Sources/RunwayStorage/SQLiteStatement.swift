import CSQLite

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One prepared statement of a ``SQLiteConnection``: bound, stepped, read, reset.
///
/// The module's C boundary: every pointer handed to SQLite or read from it is in this file.
/// Bound text and blobs are copied by SQLite during the call (`SQLITE_TRANSIENT`, in the
/// `CSQLite` shim); column text and blobs are copied out at once, before the statement steps
/// again, which invalidates SQLite's pointers. No arithmetic is done on any pointer.
final class SQLiteStatement {
    /// The `sqlite3_stmt`, finalized with the statement.
    private let handle: OpaquePointer
    /// The connection's `sqlite3`, for error messages (the connection outlives its statements).
    private let database: OpaquePointer
    /// The SQL, for error messages.
    let sql: String
    /// Whether a caller is stepping it (a nested use of the same SQL prepares another one).
    var isInUse = false

    /// Compiles one statement of `sql` on `database`.
    /// - Throws: ``SQLiteError`` when SQLite refuses it, or when `sql` holds no statement or more
    ///   than one (``SQLiteConnection/executeScript(_:)`` runs several).
    init(sql: String, database: OpaquePointer) throws(SQLiteError) {
        var statement: OpaquePointer?
        // The tail is what SQLite did not compile: it must be blank. It points into the C copy
        // of `sql`, so it is read inside the closure.
        let (code, tailIsBlank) = sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v2(database, text, -1, &statement, &tail)
            let rest = tail.map { String(cString: $0) } ?? ""
            return (code, rest.allSatisfy { $0.isWhitespace || $0 == ";" })
        }
        guard code == SQLITE_OK else {
            throw SQLiteError(code: code, message: "\(sqliteMessage(database)) in \(sql)")
        }
        guard let statement else { throw SQLiteError(code: SQLITE_MISUSE, message: "no statement in \"\(sql)\"") }
        guard tailIsBlank else {
            sqlite3_finalize(statement)
            throw SQLiteError(code: SQLITE_MISUSE, message: "more than one statement in \"\(sql)\": use executeScript")
        }
        self.handle = statement
        self.database = database
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// How many `?` parameters the statement has.
    var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    /// Binds `value` to the parameter at `index` (from 1).
    func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        let code: Int32
        switch value {
        case .null:
            code = sqlite3_bind_null(handle, index)
        case .integer(let integer):
            code = sqlite3_bind_int64(handle, index, integer)
        case .real(let real):
            code = sqlite3_bind_double(handle, index, real)
        case .text(var text):
            // The string's UTF-8 for the duration of the call; SQLite copies it.
            code = text.withUTF8 { utf8 in
                runway_sqlite3_bind_text(handle, index, UnsafeRawPointer(utf8.baseAddress), sqlite3_uint64(utf8.count))
            }
        case .blob(let data):
            // The bytes for the duration of the call; SQLite copies them (an empty blob binds as one).
            code = data.withUnsafeBytes { bytes in
                runway_sqlite3_bind_blob(handle, index, bytes.baseAddress, sqlite3_uint64(bytes.count))
            }
        }
        guard code == SQLITE_OK else { throw failure(code) }
    }

    /// Runs the statement to its next row.
    /// - Returns: `true` when a row is ready to read, `false` when the statement is done.
    func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw failure(code)
        }
    }

    /// Makes the statement ready to run again, its parameters unbound (`NULL`).
    func reset() {
        // sqlite3_reset repeats the last step's error, already thrown by `step`.
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// The number of columns of the current row.
    var columnCount: Int { Int(sqlite3_column_count(handle)) }

    /// Whether the column at `index` of the current row is `NULL` (or does not exist).
    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    /// The column at `index` as an integer (SQLite converts other types).
    func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// The column at `index` as a float (SQLite converts other types).
    func double(_ index: Int32) -> Double { sqlite3_column_double(handle, index) }

    /// The column at `index` as text, copied out of SQLite.
    func text(_ index: Int32) -> String {
        // The pointer first, then its length: the order SQLite documents, as reading the text
        // may convert the value and change its length.
        guard let text = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The column at `index` as bytes, copied out of SQLite (empty for a zero-length blob).
    func data(_ index: Int32) -> Data {
        guard let bytes = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_column_bytes(handle, index)))
    }

    /// The column at `index` as an array of bytes, copied out of SQLite.
    func bytes(_ index: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(handle, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, index))))
    }

    private func failure(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, message: "\(sqliteMessage(database)) in \(sql)")
    }
}

/// SQLite's message for the last failure on the connection `database`, copied out.
func sqliteMessage(_ database: OpaquePointer) -> String {
    sqlite3_errmsg(database).map { String(cString: $0) } ?? "no message"
}
