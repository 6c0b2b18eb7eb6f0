import CSQLite
import Dispatch
import RunwayCore
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One SQLite file in WAL mode that survives corruption: the storage under the response
/// cache's disk layer and the action log's outbox, on the system's SQLite.
///
/// ```swift
/// let store = try SQLiteStore(file: cachesDirectory.appending(path: "outbox.sqlite"), label: "RunwayActionLog") { db in
///     try db.execute("CREATE TABLE IF NOT EXISTS record (id TEXT PRIMARY KEY NOT NULL, body BLOB NOT NULL)")
/// }
/// let count = try store.read { db in try db.firstRow("SELECT count(*) FROM record") { $0.int(0) ?? 0 } ?? 0 }
/// try await store.write { db in try db.execute("DELETE FROM record WHERE id = ?", "r-1") }
/// ```
/// Reads run on the calling thread, each in a transaction on a reader connection of its own, and
/// run while a write is under way (WAL). Writes run one at a time on the writer connection, each
/// in a transaction rolled back when its closure throws: ``writeBlocking(_:)`` on the calling
/// thread, ``write(_:)`` on the store's serial queue while the calling task is suspended. A
/// statement waits up to 5 seconds for another connection's lock (`busy_timeout`).
///
/// A file that is not a database (SQLite says `SQLITE_NOTADB`) or is corrupt (`SQLITE_CORRUPT`,
/// including a truncated file, which `PRAGMA quick_check` finds at open) is moved aside to
/// `<file>.corrupt` (with its `-wal` and `-shm` companions, replacing an earlier corrupt copy)
/// and a new empty database with the same schema takes its place: at open, and whenever a read
/// or write reports corruption later. Each rebuild increases ``rebuildCount``; what the old file
/// held is gone from this store, so owners that keep data (not a cache) must report it.
///
/// Stores in other processes (or other stores of this one) may share the file. One that rebuilds
/// it, or replaces it (``replaceWithEmpty()``), puts a new file at the path: every store notices
/// at its next read or write, and goes on with the file at the path, never with the one that
/// was replaced.
///
/// Every failure is a ``RunwayError`` with stage `storage <label>`: `.configuration` when the
/// file cannot be opened or created at all, `.fileIO` for a failed read or write (the
/// underlying ``SQLiteError`` is kept).
public final class SQLiteStore: Sendable {
    /// The database file.
    public let file: URL
    /// The name in errors and of the write queue.
    public let label: String
    private let schema: @Sendable (SQLiteConnection) throws -> Void
    private let state: Locked<State>
    /// Where ``write(_:)`` runs its transactions, off the cooperative thread pool.
    private let writeQueue: DispatchQueue

    private struct State {
        /// Replaced when the file is rebuilt. Callers take a reference under the lock and use it
        /// outside; a replaced pool closes when its last user lets go. `nil` after a
        /// ``replaceWithEmpty()`` that deleted the file but could not open a new one (the disk
        /// full while the old one's files were still open): each read or write tries again.
        var current: SQLiteConnectionPool?
        /// The file `current` opened, to tell when another store puts a new one at the path.
        var identity: FileIdentity?
        var rebuilds = 0
        /// Until when writes given a patience fail at once: one found the lock held (`write`).
        var impatientUntil: ContinuousClock.Instant?
    }

    /// What tells one file from another at the same path: its device and inode.
    struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64

        /// The file at `path` now; `nil` when there is none.
        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            (device, inode) = (UInt64(truncatingIfNeeded: info.st_dev), UInt64(truncatingIfNeeded: info.st_ino))
        }
    }

    /// How long a statement waits for another connection's lock.
    static let busyTimeout = Duration.seconds(5)

    /// Opens (or creates, or rebuilds) the database at `file` and applies `schema`.
    /// - Parameters:
    ///   - file: The SQLite file; its directory is created if missing.
    ///   - label: Names the store in errors (`storage <label>`).
    ///   - schema: Creates the tables if they do not exist; runs in a transaction at every open
    ///     and after every rebuild, so it must be idempotent (`CREATE TABLE IF NOT EXISTS`).
    /// - Throws: ``RunwayError`` `.configuration` when the directory cannot be created or the
    ///   file cannot be opened even after being moved aside.
    public init(file: URL, label: String, schema: @escaping @Sendable (SQLiteConnection) throws -> Void) throws(RunwayError) {
        self.file = file
        self.label = label
        self.schema = schema
        writeQueue = DispatchQueue(label: "runway.storage.\(label)")
        let stage = RunwayError.Stage.storage(label)
        let directory = file.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw RunwayError(.configuration, "cannot create the directory \(directory.path)", stage: stage, underlying: error)
        }
        do {
            state = Locked(State(current: try Self.open(file, schema: schema), identity: FileIdentity(path: file.path)))
        } catch  where (error as? SQLiteError)?.isCorruption == true {
            Self.moveAside(file)
            do {
                state = Locked(State(current: try Self.open(file, schema: schema), identity: FileIdentity(path: file.path), rebuilds: 1))
            } catch {
                throw Self.cannotOpen(file, error, stage)
            }
        } catch {
            throw Self.cannotOpen(file, error, stage)
        }
    }

    /// The `.configuration` error of a file that cannot be opened, saying why as SQLite (or the
    /// schema) words it: `database is locked` (another process holds it past the busy
    /// timeout), `unable to open database file`, another program's tables.
    private static func cannotOpen(_ file: URL, _ error: any Error, _ stage: RunwayError.Stage) -> RunwayError {
        let why = (error as? SQLiteError)?.message ?? (error as? RunwayError)?.message ?? "\(error)"
        return RunwayError(.configuration, "cannot open the database \(file.path): \(why)", stage: stage, underlying: error)
    }

    /// How many times the file was rebuilt empty: found corrupt (at open included), or
    /// replaced by ``replaceWithEmpty()``.
    public var rebuildCount: Int { state.withLock { $0.rebuilds } }

    /// The open file; it changes when the file is rebuilt, here or by another store: a file
    /// another store put at the path since `current` opened is opened (one stat call per read or
    /// write). While the path holds no file (another store between deleting and making one), or
    /// when the new one cannot be opened, the open one stays in use and the next call looks again.
    private var pool: SQLiteConnectionPool {
        get throws(RunwayError) {
            let found = FileIdentity(path: file.path)
            let pool = state.withLock { state in
                if state.current == nil || (found != nil && found != state.identity), let fresh = try? Self.open(file, schema: schema) {
                    state.current = fresh
                    state.identity = FileIdentity(path: file.path)
                }
                return state.current
            }
            guard let pool else {
                throw RunwayError(
                    .fileIO, "the database \(file.lastPathComponent) was deleted and a new one cannot be opened", stage: .storage(label))
            }
            return pool
        }
    }

    /// Runs `body` in a read transaction, on the calling thread, beside any write under way.
    /// - Throws: ``RunwayError`` `.fileIO`; a corrupt file is rebuilt first.
    public func read<T>(_ body: (SQLiteConnection) throws -> T) throws(RunwayError) -> T {
        let pool = try self.pool
        do {
            return try pool.read(body)
        } catch {
            throw failure(error, in: pool, doing: "read")
        }
    }

    /// Runs `body` in a write transaction, blocking the calling thread until the writes before it
    /// are done and it is (for a writer thread of its own, never the cooperative pool).
    /// - Throws: ``RunwayError`` `.fileIO`, after rolling back; a corrupt file is rebuilt first.
    public func writeBlocking<T>(_ body: (SQLiteConnection) throws -> T) throws(RunwayError) -> T {
        let pool = try self.pool
        do {
            return try pool.write(body)
        } catch {
            throw failure(error, in: pool, doing: "write")
        }
    }

    /// Runs `body` in a write transaction on the store's serial queue, suspending the calling
    /// task meanwhile (no thread of the cooperative pool waits for the disk or for other writes).
    /// - Parameter patience: For a write worth dropping rather than waiting for (a cache's
    ///   store): how long it waits for another connection's lock (another process's) instead of
    ///   the 5-second busy timeout. Once such a write found the lock held that long, the next
    ///   writes given a patience fail at once for a second (`SQLITE_BUSY`) rather than each
    ///   waiting in turn behind the one before.
    /// - Throws: ``RunwayError`` `.fileIO`, after rolling back (`.cancelled` when the task is
    ///   cancelled before the transaction starts); a corrupt file is rebuilt first.
    public func write<T: Sendable>(
        patience: Duration? = nil, _ body: @escaping @Sendable (SQLiteConnection) throws -> T
    ) async throws(RunwayError) -> T {
        let cancelled = Locked(Task.isCancelled)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, RunwayError>, Never>) in
                // The queue holds the store weakly: the awaiting caller keeps it alive until the
                // continuation is resumed, and nothing of it outlives that (its files close when
                // the caller lets go).
                writeQueue.async { [weak self, label] in
                    let result =
                        self?.writeUnlessCancelled(body, patience: patience, cancelled: cancelled)
                        ?? .failure(RunwayError(.cancelled, "the store was released before writing", stage: .storage(label)))
                    continuation.resume(returning: result)
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
        return try result.get()
    }

    private func writeUnlessCancelled<T>(
        _ body: (SQLiteConnection) throws -> T, patience: Duration?, cancelled: Locked<Bool>
    ) -> Result<T, RunwayError> {
        let pool: SQLiteConnectionPool
        do throws(RunwayError) {
            pool = try self.pool
        } catch {
            return .failure(error)
        }
        let clock = ContinuousClock()
        var tried = false
        do {
            return .success(
                try pool.write(body, patience: patience) {
                    if cancelled.withLock({ $0 }) {
                        throw RunwayError(.cancelled, "cancelled before writing", stage: .storage(label))
                    }
                    if patience != nil, let until = state.withLock({ $0.impatientUntil }), clock.now < until {
                        throw SQLiteError(code: SQLITE_BUSY, message: "another connection held the lock in the last second")
                    }
                    tried = true
                })
        } catch {
            // Only a write that tried (and waited) opens the second: one that failed at once does not prolong it.
            if patience != nil, tried, (error as? SQLiteError)?.isBusy == true {
                state.withLock { $0.impatientUntil = clock.now + .seconds(1) }
            }
            return .failure(failure(error, in: pool, doing: "write"))
        }
    }

    /// Deletes the file (with its `-wal` and `-shm` companions) and puts a new empty database
    /// in its place, counted in ``rebuildCount``: for a store whose contents may all go, such
    /// as a cache whose removal failed (the disk full, a lock another process held past the
    /// busy timeout, a file it may read but not write), which must not answer again with what
    /// it was told to remove. Reads and writes under way finish on the old file, which closes
    /// when the last of them lets go (its space is freed then: on a full disk, the new file is
    /// made in what the old one took).
    /// - Returns: Whether the new file is in use; `false` when the file could not be deleted
    ///   (a directory it may not write: the old one stays in use) or the new one opened (each
    ///   read or write then tries to open it, and fails with `.fileIO` until it can).
    public func replaceWithEmpty() -> Bool {
        state.withLock { state in
            let manager = FileManager.default
            for suffix in ["", "-wal", "-shm"] { try? manager.removeItem(atPath: file.path + suffix) }
            guard !manager.fileExists(atPath: file.path) else { return false }
            // Let go of the deleted files first: while they are open their space stays taken, and
            // on a full disk the new file could not be made.
            state.current = nil
            state.identity = nil
            guard let fresh = try? Self.open(file, schema: schema) else { return false }
            state.current = fresh
            state.identity = FileIdentity(path: file.path)
            state.rebuilds += 1
            return true
        }
    }

    /// Rebuilds the file when `error` says it is corrupt (unless someone already replaced
    /// `failed`); other errors (disk full, busy) leave it as it is. When the new file cannot be
    /// opened either, `failed` stays in use and the next corrupt read or write tries again.
    /// - Returns: Whether `error` was corruption.
    private func recover(from error: any Error, in failed: SQLiteConnectionPool) -> Bool {
        guard (error as? SQLiteError)?.isCorruption == true else { return false }
        state.withLock { state in
            guard state.current === failed else { return }
            Self.moveAside(file)
            if let fresh = try? Self.open(file, schema: schema) {
                state.current = fresh
                state.identity = FileIdentity(path: file.path)
                state.rebuilds += 1
            }
        }
        return true
    }

    private func failure(_ error: any Error, in pool: SQLiteConnectionPool, doing what: String) -> RunwayError {
        if let error = error as? RunwayError { return error }
        let message: String
        if recover(from: error, in: pool) {
            // Rebuilt here or by another caller meanwhile: the pool in use is not the failed one.
            message =
                (try? self.pool) !== pool
                ? "the database \(file.lastPathComponent) was corrupt and was rebuilt empty"
                : "the database \(file.lastPathComponent) is corrupt and could not be rebuilt: \(error)"
        } else {
            message = "\(what) failed: \(error)"
        }
        return RunwayError(.fileIO, message, stage: .storage(label), underlying: error)
    }

    private static func open(_ file: URL, schema: (SQLiteConnection) throws -> Void) throws -> SQLiteConnectionPool {
        try SQLiteConnectionPool(path: file.path, busyTimeout: busyTimeout, schema: schema)
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
