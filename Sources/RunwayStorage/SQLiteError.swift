import CSQLite

/// A failure SQLite reported: its result code and message.
///
/// ``SQLiteStore`` keeps it as the `underlying` error of the ``RunwayError`` it throws.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// SQLite's (extended) result code, such as `SQLITE_CONSTRAINT_UNIQUE` (2067).
    public let code: Int32
    /// SQLite's message, with the statement when there was one.
    public let message: String

    /// An error with SQLite's `code` and `message`.
    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// The primary result code, without the extended bits (`SQLITE_CONSTRAINT` for any constraint).
    public var primaryCode: Int32 { code & 0xFF }

    /// Whether SQLite says the file is corrupt (`SQLITE_CORRUPT`) or not a database (`SQLITE_NOTADB`).
    public var isCorruption: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }

    /// Whether another connection held the lock past the busy timeout (`SQLITE_BUSY`,
    /// `SQLITE_LOCKED`): the file is fine and in use, and the statement may succeed later.
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }

    /// The code and the message, as SQLite words them.
    public var description: String { "SQLite error \(code): \(message)" }
}
