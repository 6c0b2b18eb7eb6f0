import Foundation
import Runway
import RunwayStorage

#if Cache  // the package trait that brings this dependency (TraitCheck.swift)
import GRDB
#endif

/// Entries in one SQLite file (WAL mode, through GRDB), bounded in bytes.
///
/// The file is a ``SQLiteStore``: one that is not a database, or is corrupt, is moved aside to
/// `<file>.corrupt` and a new empty database is created in its place, at open and whenever a
/// read or write reports corruption later. A lookup that hits corruption is a miss, never a
/// crash or wrong data. Eviction when over ``maxBytes``: expired entries first, then the oldest
/// stored.
final class DiskCache: Sendable {
    let maxBytes: Int
    private let store: SQLiteStore

    /// Opens (or creates, or rebuilds) the database at `file`.
    /// - Throws: `.configuration` when the directory cannot be created or the file cannot be
    ///   opened even after being moved aside.
    init(file: URL, maxBytes: Int) throws(RunwayError) {
        self.maxBytes = maxBytes
        store = try SQLiteStore(file: file, label: "RunwayCache", schema: Self.createSchema)
    }

    /// The database file.
    var file: URL { store.file }

    /// How many times the file was found corrupt and rebuilt.
    var rebuildCount: Int { store.rebuildCount }

    func get(_ key: CacheKey) -> CacheEntry? {
        try? store.read { db -> CacheEntry? in
            let statement = try db.cachedStatement(
                sql: "SELECT api, status, headers, body, stored_at, expires_at FROM entry WHERE key = ?")
            guard let row = try Row.fetchOne(statement, arguments: [key.bytes]) else { return nil }
            // SQLite may hand an empty blob back as NULL: both mean "none".
            guard let api = row[0] as String?, let status = row[1] as Int?,
                let headers = CacheEntry.decodeHeaders(row[2] as Data? ?? Data()), let storedAt = row[4] as Double?,
                let expiresAt = row[5] as Double?
            else { return nil }
            return CacheEntry(
                api: api, status: status, headers: headers, body: row[3] as Data? ?? Data(), storedAt: storedAt,
                expiresAt: expiresAt)
        }
    }

    func set(_ key: CacheKey, _ entry: CacheEntry, now: Double) async {
        let size = entry.size
        guard size <= maxBytes else {
            await remove(key)
            return
        }
        let maxBytes = self.maxBytes
        await write { db in
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
        (try? store.read { db -> (entries: Int, bytes: Int) in
            let row = try Row.fetchOne(db, sql: "SELECT count(*), coalesce(sum(size), 0) FROM entry")
            return (row?[0] ?? 0, row?[1] ?? 0)
        }) ?? (0, 0)
    }

    /// A failed write (disk full, busy, corruption — after which the store is rebuilt) just
    /// leaves the entry out: the cache is never the only copy of anything.
    private func write(_ body: @escaping @Sendable (Database) throws -> Void) async {
        _ = try? await store.write(body)
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

    @Sendable private static func createSchema(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS entry (
                    key BLOB PRIMARY KEY NOT NULL,
                    api TEXT NOT NULL,
                    status INTEGER NOT NULL,
                    headers BLOB,
                    body BLOB,
                    stored_at REAL NOT NULL,
                    expires_at REAL NOT NULL,
                    size INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS entry_api ON entry(api);
                """)
    }
}
