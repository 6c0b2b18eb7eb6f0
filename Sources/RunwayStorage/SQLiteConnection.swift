import CSQLite

/// One connection to a database file: what a ``SQLiteStore`` hands to its `read` and `write`
/// closures, inside a transaction.
///
/// Values are always bound to `?` parameters, never written into the SQL:
/// ```swift
/// try db.execute("INSERT INTO item (id, body) VALUES (?, ?)", id, body)
/// let count = try db.firstRow("SELECT count(*) FROM item WHERE id > ?", 10) { $0.int(0) ?? 0 }
/// ```
/// Each SQL text is prepared once per connection and kept (the statement cache), so the same
/// statement run again only binds and steps. Use the connection only inside the closure it is
/// handed to, on that closure's thread.
public final class SQLiteConnection {
    /// The `sqlite3`, closed with the connection.
    private let handle: OpaquePointer
    /// Prepared statements by SQL text.
    private var statements: [String: SQLiteStatement] = [:]

    /// The most statements kept; beyond it the cache starts over (Runway's SQL is a few fixed texts).
    static let statementCacheLimit = 64

    /// Opens the file at `path` (creating it unless `reader`), in SQLite's multi-thread mode: the
    /// pool hands a connection to one thread at a time.
    /// - Parameters:
    ///   - reader: Opens an existing file for queries only (`PRAGMA query_only`).
    ///   - busyTimeout: How long a statement waits for another connection's lock before failing
    ///     with `SQLITE_BUSY`.
    init(path: String, reader: Bool, busyTimeout: Duration) throws(SQLiteError) {
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (reader ? 0 : SQLITE_OPEN_CREATE)
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map(sqliteMessage) ?? "out of memory"
            sqlite3_close_v2(opened)
            throw SQLiteError(code: code, message: "\(message): \(path)")
        }
        handle = opened
        sqlite3_extended_result_codes(handle, 1)
        setBusyTimeout(busyTimeout)
        if reader { try execute("PRAGMA query_only = 1") }
    }

    /// How long each statement from now on waits for another connection's lock.
    func setBusyTimeout(_ timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        sqlite3_busy_timeout(handle, Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000))
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one statement with `arguments` bound to its `?` parameters, to its end (rows it
    /// returns are skipped).
    public func execute<each Argument: SQLiteBindable>(_ sql: String, _ arguments: repeat each Argument) throws(SQLiteError) {
        try withStatement(sql, repeat each arguments) { statement throws(SQLiteError) in
            while try statement.step() {}
        }
    }

    /// Every row of one statement, each made into a `T` by `row`, in order.
    public func rows<T, each Argument: SQLiteBindable>(
        _ sql: String, _ arguments: repeat each Argument, row: (SQLiteRow) -> T
    ) throws(SQLiteError) -> [T] {
        try withStatement(sql, repeat each arguments) { statement throws(SQLiteError) in
            var rows: [T] = []
            while try statement.step() { rows.append(row(SQLiteRow(statement))) }
            return rows
        }
    }

    /// The first row of one statement made into a `T` by `row`, or `nil` when there is none;
    /// the statement stops there.
    public func firstRow<T, each Argument: SQLiteBindable>(
        _ sql: String, _ arguments: repeat each Argument, row: (SQLiteRow) -> T
    ) throws(SQLiteError) -> T? {
        try withStatement(sql, repeat each arguments) { statement throws(SQLiteError) in
            try statement.step() ? row(SQLiteRow(statement)) : nil
        }
    }

    /// Runs several statements separated by `;` (a schema), without arguments and uncached.
    public func executeScript(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteError(code: code, message: "\(sqliteMessage(handle)) in \(sql)") }
    }

    /// The rows changed by the last `INSERT`, `UPDATE` or `DELETE` (not counting triggers).
    public var changes: Int { Int(sqlite3_changes64(handle)) }

    /// How many prepared statements the connection keeps.
    public var cachedStatementCount: Int { statements.count }

    /// Whether a transaction is open.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it (or the
    /// commit) throws.
    /// - Parameter immediate: Takes the write lock at once (`BEGIN IMMEDIATE`), else at the first
    ///   write (`BEGIN DEFERRED`: a read transaction, one snapshot for all its statements).
    func transaction<T>(immediate: Bool, _ body: () throws -> T) throws -> T {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            // SQLite may have rolled back already (after SQLITE_FULL, say): then there is none.
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Binds `arguments` to the cached statement for `sql` and runs `body` on it, then resets it
    /// (so no statement left half-stepped holds a read snapshot).
    private func withStatement<Result, each Argument: SQLiteBindable>(
        _ sql: String, _ arguments: repeat each Argument, body: (SQLiteStatement) throws(SQLiteError) -> Result
    ) throws(SQLiteError) -> Result {
        let statement = try statement(for: sql)
        statement.isInUse = true
        defer {
            statement.reset()
            statement.isInUse = false
        }
        var index: Int32 = 0
        for argument in repeat each arguments {
            index += 1
            try statement.bind(argument.sqliteValue, at: index)
        }
        guard Int(index) == statement.parameterCount else {
            throw SQLiteError(
                code: SQLITE_RANGE, message: "\(statement.parameterCount) parameters, \(index) arguments, in \(sql)")
        }
        return try body(statement)
    }

    /// The cached statement for `sql`, prepared now if new; a fresh one when the cached one is
    /// being stepped by an enclosing call.
    private func statement(for sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] {
            if !cached.isInUse { return cached }
            return try SQLiteStatement(sql: sql, database: handle)
        }
        let statement = try SQLiteStatement(sql: sql, database: handle)
        if statements.count >= Self.statementCacheLimit { statements.removeAll() }
        statements[sql] = statement
        return statement
    }
}
