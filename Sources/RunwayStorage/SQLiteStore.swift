import Foundation
import RunwayCore
import RunwaySync

#if Cache || ActionLog  // the package trait that brings this dependency (TraitCheck.swift)
import GRDB
#endif

/// One SQLite file in WAL mode (through GRDB) that survives corruption: the storage under the
/// response cache's disk layer and the action log's outbox.
///
/// ```swift
/// let store = try SQLiteStore(file: cachesDirectory.appending(path: "outbox.sqlite"), label: "RunwayActionLog") { db in
///     try db.execute(sql: "CREATE TABLE IF NOT EXISTS record (id TEXT PRIMARY KEY NOT NULL, body BLOB NOT NULL)")
/// }
/// let count = try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM record") ?? 0 }
/// try await store.write { db in try db.execute(sql: "DELETE FROM record") }
/// ```
/// A file that is not a database (SQLite says `SQLITE_NOTADB`) or is corrupt (`SQLITE_CORRUPT`,
/// including a truncated file, which `PRAGMA quick_check` finds at open) is moved aside to
/// `<file>.corrupt` (with its `-wal` and `-shm` companions, replacing an earlier corrupt copy)
/// and a new empty database with the same schema takes its place: at open, and whenever a read
/// or write reports corruption later. Each rebuild increases ``rebuildCount``; what the old file
/// held is gone from this store, so owners that keep data (not a cache) must report it.
///
/// Every failure is a ``RunwayError`` with stage `storage <label>`: `.configuration` when the
/// file cannot be opened or created at all, `.fileIO` for a failed read or write (the
/// underlying `DatabaseError` is kept).
public final class SQLiteStore: Sendable {
    /// The database file.
    public let file: URL
    /// The name in errors and in GRDB's labels.
    public let label: String
    private let schema: @Sendable (Database) throws -> Void
    private let state: Locked<State>

    private struct State {
        /// Replaced when the file is rebuilt. Callers take a reference under the lock and use it
        /// outside; a replaced pool closes when its last user lets go.
        var current: DatabasePool
        var rebuilds = 0
    }

    /// Opens (or creates, or rebuilds) the database at `file` and applies `schema`.
    /// - Parameters:
    ///   - file: The SQLite file; its directory is created if missing.
    ///   - label: Names the store in errors (`storage <label>`).
    ///   - schema: Creates the tables if they do not exist; runs in a transaction at every open
    ///     and after every rebuild, so it must be idempotent (`CREATE TABLE IF NOT EXISTS`).
    /// - Throws: ``RunwayError`` `.configuration` when the directory cannot be created or the
    ///   file cannot be opened even after being moved aside.
    public init(file: URL, label: String, schema: @escaping @Sendable (Database) throws -> Void) throws(RunwayError) {
        self.file = file
        self.label = label
        self.schema = schema
        let stage = RunwayError.Stage.storage(label)
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw RunwayError(
                .configuration, "cannot create the directory \(file.deletingLastPathComponent().path)", stage: stage,
                underlying: error)
        }
        do {
            state = Locked(State(current: try Self.open(file, label: label, schema: schema)))
        } catch  where Self.isCorruption(error) {
            Self.moveAside(file)
            do {
                state = Locked(State(current: try Self.open(file, label: label, schema: schema), rebuilds: 1))
            } catch {
                throw RunwayError(.configuration, "cannot open the database \(file.path)", stage: stage, underlying: error)
            }
        } catch {
            throw RunwayError(.configuration, "cannot open the database \(file.path)", stage: stage, underlying: error)
        }
    }

    /// How many times the file was found corrupt and rebuilt empty (at open included).
    public var rebuildCount: Int { state.withLock { $0.rebuilds } }

    /// The open database; it changes when the file is rebuilt.
    public var pool: DatabasePool { state.withLock { $0.current } }

    /// Runs `body` in a read transaction, on the calling thread.
    /// - Throws: ``RunwayError`` `.fileIO`; a corrupt file is rebuilt first.
    public func read<T>(_ body: (Database) throws -> T) throws(RunwayError) -> T {
        let pool = self.pool
        do {
            return try pool.read(body)
        } catch {
            throw failure(error, in: pool, doing: "read")
        }
    }

    /// Runs `body` in a write transaction, blocking the calling thread (for a writer thread of
    /// its own, never the cooperative pool).
    /// - Throws: ``RunwayError`` `.fileIO`; a corrupt file is rebuilt first.
    public func writeBlocking<T>(_ body: (Database) throws -> T) throws(RunwayError) -> T {
        let pool = self.pool
        do {
            return try pool.write(body)
        } catch {
            throw failure(error, in: pool, doing: "write")
        }
    }

    /// Runs `body` in a write transaction on GRDB's writer queue, suspending meanwhile.
    /// - Throws: ``RunwayError`` `.fileIO` (`.cancelled` when the task is cancelled before the
    ///   transaction starts); a corrupt file is rebuilt first.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(RunwayError) -> T {
        let pool = self.pool
        do {
            return try await pool.write(body)
        } catch is CancellationError {
            throw RunwayError(.cancelled, "cancelled before writing", stage: .storage(label))
        } catch {
            throw failure(error, in: pool, doing: "write")
        }
    }

    /// Rebuilds the file when `error` says it is corrupt (unless someone already replaced
    /// `failed`); other errors (disk full, busy) leave it as it is. When the new file cannot be
    /// opened either, `failed` stays in use (``pool`` is still it) and the next corrupt
    /// read or write tries again.
    /// - Returns: Whether `error` was corruption.
    @discardableResult
    public func recover(from error: any Error, in failed: DatabasePool) -> Bool {
        guard Self.isCorruption(error) else { return false }
        state.withLock { state in
            guard state.current === failed else { return }
            Self.moveAside(file)
            if let fresh = try? Self.open(file, label: label, schema: schema) {
                state.current = fresh
                state.rebuilds += 1
            }
        }
        return true
    }

    /// Whether `error` is SQLite saying the file is corrupt or not a database.
    public static func isCorruption(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode)
    }

    private func failure(_ error: any Error, in pool: DatabasePool, doing what: String) -> RunwayError {
        if let error = error as? RunwayError { return error }
        let message: String
        if recover(from: error, in: pool) {
            // Rebuilt here or by another caller meanwhile: the pool in use is not the failed one.
            message =
                self.pool !== pool
                ? "the database \(file.lastPathComponent) was corrupt and was rebuilt empty"
                : "the database \(file.lastPathComponent) is corrupt and could not be rebuilt: \(error)"
        } else {
            message = "\(what) failed: \(error)"
        }
        return RunwayError(.fileIO, message, stage: .storage(label), underlying: error)
    }

    private static func open(_ file: URL, label: String, schema: @Sendable (Database) throws -> Void) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.label = label
        let pool = try DatabasePool(path: file.path, configuration: configuration)
        try pool.write(schema)
        // A truncated file can open cleanly and fail only when a page is read: check it all now.
        let check = try pool.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
        if check != ["ok"] {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "quick_check: \(check.prefix(3).joined(separator: "; "))")
        }
        return pool
    }

    /// Moves the file and its WAL and shared-memory companions to `<file>.corrupt*`, replacing
    /// any earlier corrupt copy so a bad disk cannot fill up with them.
    private static func moveAside(_ file: URL) {
        let manager = FileManager.default
        for suffix in ["", "-wal", "-shm"] {
            let source = URL(fileURLWithPath: file.path + suffix)
            let target = URL(fileURLWithPath: file.path + ".corrupt" + suffix)
            try? manager.removeItem(at: target)
            if (try? manager.moveItem(at: source, to: target)) == nil {
                try? manager.removeItem(at: source)
            }
        }
    }
}

extension RunwayError.Stage {
    /// A database file, by the label of its ``SQLiteStore``.
    public static func storage(_ label: String) -> RunwayError.Stage {
        RunwayError.Stage(kind: "storage", name: label)
    }
}
