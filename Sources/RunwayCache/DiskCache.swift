import Foundation
import GRDB
import Runway

/// Entries in one SQLite file (WAL mode, through GRDB), bounded in bytes.
///
/// A file that is not a database, or is corrupt, is moved aside to `<file>.corrupt` and a new
/// empty database is created in its place: at open, and whenever a read or write reports
/// corruption later. A lookup that hits corruption is a miss, never a crash or wrong data.
/// Eviction when over ``maxBytes``: expired entries first, then the oldest stored.
final class DiskCache: Sendable {
    let file: URL
    let maxBytes: Int
    private let lock = NSLock()
    // Guarded by `lock`; replaced when the file is rebuilt. Readers take a reference under the
    // lock and use it outside; a replaced pool closes when its last reader lets go.
    nonisolated(unsafe) private var current: DatabasePool
    nonisolated(unsafe) private var rebuilds = 0

    /// Opens (or creates, or rebuilds) the database at `file`.
    /// - Throws: `.configuration` when the directory cannot be created or the file cannot be
    ///   opened even after being moved aside.
    init(file: URL, maxBytes: Int) throws(RunwayError) {
        self.file = file
        self.maxBytes = maxBytes
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw RunwayError(.configuration, "cannot create the cache directory \(file.deletingLastPathComponent().path)", underlying: error)
        }
        do {
            current = try Self.open(file)
        } catch where Self.isCorruption(error) {
            Self.moveAside(file)
            do {
                current = try Self.open(file)
            } catch {
                throw RunwayError(.configuration, "cannot open the cache database \(file.path)", underlying: error)
            }
            rebuilds = 1
        } catch {
            throw RunwayError(.configuration, "cannot open the cache database \(file.path)", underlying: error)
        }
    }

    /// How many times the file was found corrupt and rebuilt.
    var rebuildCount: Int { lock.withLock { rebuilds } }

    private var pool: DatabasePool { lock.withLock { current } }

    func get(_ key: CacheKey) -> CacheEntry? {
        let pool = self.pool
        do {
            return try pool.read { db -> CacheEntry? in
                let statement = try db.cachedStatement(
                    sql: "SELECT api, status, headers, body, stored_at, expires_at FROM entry WHERE key = ?")
                guard let row = try Row.fetchOne(statement, arguments: [key.bytes]) else { return nil }
                guard let api = row[0] as String?, let status = row[1] as Int?, let headerData = row[2] as Data?,
                    let headers = CacheEntry.decodeHeaders(headerData), let storedAt = row[4] as Double?,
                    let expiresAt = row[5] as Double?
                else { return nil }
                return CacheEntry(
                    api: api, status: status, headers: headers, body: row[3] as Data? ?? Data(), storedAt: storedAt,
                    expiresAt: expiresAt)
            }
        } catch {
            recover(from: error, in: pool)
            return nil
        }
    }

    func set(_ key: CacheKey, _ entry: CacheEntry, now: Double) async {
        let size = entry.size
        guard size <= maxBytes else {
            await remove(key)
            return
        }
        let pool = self.pool
        let maxBytes = self.maxBytes
        do {
            try await pool.write { db in
                try db.cachedStatement(
                    sql: """
                        INSERT OR REPLACE INTO entry (key, api, status, headers, body, stored_at, expires_at, size)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                        """
                ).execute(arguments: [
                    key.bytes, entry.api, entry.status, CacheEntry.encode(entry.headers), entry.body, entry.storedAt,
                    entry.expiresAt, size,
                ])
                try Self.evict(db, maxBytes: maxBytes, now: now)
            }
        } catch {
            recover(from: error, in: pool)
        }
    }

    func remove(_ key: CacheKey) async {
        await write { db in try db.execute(sql: "DELETE FROM entry WHERE key = ?", arguments: [key.bytes]) }
    }

    func removeAll(api: String) async {
        await write { db in try db.execute(sql: "DELETE FROM entry WHERE api = ?", arguments: [api]) }
    }

    func removeAll() async {
        await write { db in try db.execute(sql: "DELETE FROM entry") }
    }

    /// Total bytes and entries stored.
    func usage() -> (entries: Int, bytes: Int) {
        let pool = self.pool
        do {
            return try pool.read { db in
                let row = try Row.fetchOne(db, sql: "SELECT count(*), coalesce(sum(size), 0) FROM entry")
                return (row?[0] ?? 0, row?[1] ?? 0)
            }
        } catch {
            recover(from: error, in: pool)
            return (0, 0)
        }
    }

    private func write(_ body: @escaping @Sendable (Database) throws -> Void) async {
        let pool = self.pool
        do {
            try await pool.write(body)
        } catch {
            recover(from: error, in: pool)
        }
    }

    /// Rebuilds the file when `error` says it is corrupt; other errors (disk full, busy) just
    /// make this operation a miss.
    private func recover(from error: any Error, in failed: DatabasePool) {
        guard Self.isCorruption(error) else { return }
        lock.withLock {
            // Another caller may have rebuilt already.
            guard current === failed else { return }
            Self.moveAside(file)
            if let fresh = try? Self.open(file) {
                current = fresh
                rebuilds += 1
            }
        }
    }

    private static func evict(_ db: Database, maxBytes: Int, now: Double) throws {
        var total = try Int.fetchOne(db, sql: "SELECT coalesce(sum(size), 0) FROM entry") ?? 0
        guard total > maxBytes else { return }
        let rows = try Row.fetchAll(
            db, sql: "SELECT key, size FROM entry ORDER BY (expires_at <= ?) DESC, stored_at ASC", arguments: [now])
        var victims: [Data] = []
        for row in rows where total > maxBytes {
            victims.append(row[0])
            total -= row[1] as Int
        }
        for victim in victims {
            try db.execute(sql: "DELETE FROM entry WHERE key = ?", arguments: [victim])
        }
    }

    private static func open(_ file: URL) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.label = "RunwayCache"
        let pool = try DatabasePool(path: file.path, configuration: configuration)
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS entry (
                        key BLOB PRIMARY KEY NOT NULL,
                        api TEXT NOT NULL,
                        status INTEGER NOT NULL,
                        headers BLOB NOT NULL,
                        body BLOB NOT NULL,
                        stored_at REAL NOT NULL,
                        expires_at REAL NOT NULL,
                        size INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    CREATE INDEX IF NOT EXISTS entry_api ON entry(api);
                    """)
        }
        // A truncated file can open cleanly and fail only when a page is read: check it all now.
        let check = try pool.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
        if check != ["ok"] {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "quick_check: \(check.prefix(3).joined(separator: "; "))")
        }
        return pool
    }

    static func isCorruption(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode)
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
