import CSQLite
import RunwaySync

/// One open database file in WAL mode: a writer connection, and reader connections beside it.
///
/// WAL lets readers run while the writer writes, each on a connection of its own: a read takes
/// an idle reader connection or opens one, and gives it back after (a few are kept). Writes take
/// the writer connection under a lock, one at a time.
final class SQLiteConnectionPool: @unchecked Sendable {
    // @unchecked Sendable: `writer` is used only while holding `writerLock`; a reader connection
    // is either in `idleReaders` (under its lock) or held by the one read that took it out.

    /// A connection on its way into or out of the idle list.
    private struct Idle: @unchecked Sendable {
        // @unchecked Sendable: it moves between threads only through the idle list's lock, and
        // only the thread that took it out uses it.
        let connection: SQLiteConnection
    }

    let path: String
    private let busyTimeout: Duration
    private let writerLock = Lock()
    private let writer: SQLiteConnection
    private let idleReaders = Locked<[Idle]>([])

    /// The most idle reader connections kept open.
    static let idleReaderLimit = 4

    /// Opens (or creates) the file at `path`, switches it to WAL, applies `schema` in a write
    /// transaction, and checks every page (a truncated file can open cleanly and fail only when
    /// a page is read).
    /// - Throws: What SQLite or `schema` throws; ``SQLiteError`` `SQLITE_CORRUPT` when the check
    ///   finds damage.
    init(path: String, busyTimeout: Duration, schema: (SQLiteConnection) throws -> Void) throws {
        self.path = path
        self.busyTimeout = busyTimeout
        writer = try SQLiteConnection(path: path, reader: false, busyTimeout: busyTimeout)
        let mode = try writer.firstRow("PRAGMA journal_mode = WAL") { $0.string(0) } ?? nil
        guard mode == "wal" else {
            throw SQLiteError(code: SQLITE_ERROR, message: "journal_mode is \(mode ?? "unknown"), not wal: \(path)")
        }
        // Durable at every checkpoint, and through any crash of the process: SQLite's advice for WAL.
        try writer.execute("PRAGMA synchronous = NORMAL")
        try writer.transaction(immediate: true) { try schema(writer) }
        let check = try writer.rows("PRAGMA quick_check") { $0.string(0) ?? "" }
        guard check == ["ok"] else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "quick_check: \(check.prefix(3).joined(separator: "; "))")
        }
    }

    /// Runs `body` in a write transaction on the writer connection, waiting for the writes
    /// before it; rolled back when it throws.
    /// - Parameters:
    ///   - patience: How long this transaction waits for another connection's lock, instead of
    ///     the pool's busy timeout.
    ///   - shouldStart: Asked once the writer is free, before the transaction begins; what it
    ///     throws is thrown, and nothing is written.
    func write<T>(_ body: (SQLiteConnection) throws -> T, patience: Duration? = nil, shouldStart: () throws -> Void = {}) throws -> T {
        try writerLock.withLock { () throws -> T in
            try shouldStart()
            guard let patience else { return try writer.transaction(immediate: true) { try body(writer) } }
            writer.setBusyTimeout(patience)
            defer { writer.setBusyTimeout(busyTimeout) }
            return try writer.transaction(immediate: true) { try body(writer) }
        }
    }

    /// Runs `body` in a read transaction on a reader connection, on the calling thread: it sees
    /// the last commit before it began, and runs beside a write.
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let reader = try takeReader()
        defer { giveBack(reader) }
        return try reader.transaction(immediate: false) { try body(reader) }
    }

    private func takeReader() throws(SQLiteError) -> SQLiteConnection {
        if let idle = idleReaders.withLock({ $0.popLast() }) { return idle.connection }
        return try SQLiteConnection(path: path, reader: true, busyTimeout: busyTimeout)
    }

    private func giveBack(_ connection: SQLiteConnection) {
        // One left inside a transaction (its rollback failed) is closed rather than reused.
        guard !connection.isInTransaction else { return }
        let returned = Idle(connection: connection)
        idleReaders.withLock { idle in
            if idle.count < Self.idleReaderLimit { idle.append(returned) }
        }
    }
}
