#if Cache  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway
import RunwayStorage
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if Cache  // the package trait that brings this dependency (TraitCheck.swift)
import Crypto
#endif

/// Entries in one SQLite file (WAL mode), bounded in bytes.
///
/// The file is a ``SQLiteStore``: one that is not a database, or is corrupt, is moved aside to
/// `<file>.corrupt` and a new empty database is created in its place, at open and whenever a
/// read or write reports corruption later. A lookup that hits corruption is a miss, never a
/// crash or wrong data. SQLite does not check what a row holds, so each entry keeps the SHA-256
/// of its key, status, headers, body, selecting request fields (``CacheEntry/selecting``) and
/// resource: an entry whose bytes changed on disk is a miss too.
/// Eviction when over ``maxBytes``: expired entries (and any stored after now, the clock having
/// been set back) first, then the oldest stored.
///
/// A store waits at most 0.1 s for another process's lock on the file (and none for a second
/// after one waited in vain), then leaves its entry out: the response it stores is on its way
/// to the caller.
///
/// A removal that fails must not leave what was invalidated answering, here or in the next run.
/// When another process holds the file's lock past the busy timeout, the file is that process's
/// too: it stays, every lookup here misses while the removal is tried again in the background
/// (for about a minute, then as below). Any other failure (the disk full, a file the process may
/// not write) replaces the file by an empty one, every entry gone (the cache is never the only
/// copy of anything). When even that fails (a directory it may not write), the disk layer is
/// off for the rest of the run: every lookup a miss, nothing stored.
final class DiskCache: Sendable {
    let maxBytes: Int
    let store: SQLiteStore
    /// Removals not yet carried out, and whether the disk layer is off for good.
    private let health = Locked(Health())

    private struct Health {
        var pendingRemovals = 0
        var isOff = false
        var answers: Bool { pendingRemovals == 0 && !isOff }
    }

    /// The waits before each new try of a removal another process's lock held up.
    static let removalRetries: [Duration] = [1, 2, 4, 8, 16, 32].map { .seconds($0) }

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

    /// Whether lookups are answered: no removal waits to be carried out, and the layer is on.
    var isAnswering: Bool { health.withLock { $0.answers } }

    func get(_ key: CacheKey) -> CacheEntry? {
        guard isAnswering else { return nil }
        let found = try? store.read { db in
            try db.firstRow(
                "SELECT api, status, headers, body, stored_at, expires_at, digest, selecting, resource FROM entry WHERE key = ?",
                key.bytes
            ) { row in
                // Headers, body and selecting are nullable columns: NULL and an empty blob both mean "none".
                let (encodedHeaders, body, encodedSelecting) = (row.data(2) ?? Data(), row.data(3) ?? Data(), row.data(7) ?? Data())
                guard let api = row.string(0), let status = row.int(1), let storedAt = row.double(4), let expiresAt = row.double(5),
                    let digest = row.data(6), let resource = row.string(8),
                    digest
                        == Self.digest(
                            key: key.bytes, status: status, headers: encodedHeaders, body: body, selecting: encodedSelecting,
                            resource: resource),
                    let headers = CacheEntry.decodeHeaders(encodedHeaders), let selecting = CacheEntry.decodeHeaders(encodedSelecting)
                else { return CacheEntry?.none }
                return CacheEntry(
                    api: api, resource: resource, status: status, headers: headers, body: body, storedAt: storedAt,
                    expiresAt: expiresAt, selecting: selecting)
            }
        }
        return found ?? nil
    }

    func set(_ key: CacheKey, _ entry: CacheEntry, now: Double) async {
        guard !health.withLock({ $0.isOff }) else { return }
        let size = entry.size
        guard size <= maxBytes else {
            await remove(key)
            return
        }
        let maxBytes = self.maxBytes
        let headers = CacheEntry.encode(entry.headers)
        let selecting = CacheEntry.encode(entry.selecting)
        let digest = Self.digest(
            key: key.bytes, status: entry.status, headers: headers, body: entry.body, selecting: selecting, resource: entry.resource)
        await write { db in
            try db.execute(
                """
                INSERT OR REPLACE INTO entry (key, api, status, headers, body, stored_at, expires_at, size, digest, selecting, resource)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                key.bytes, entry.api, entry.status, headers, entry.body, entry.storedAt, entry.expiresAt, size, digest, selecting,
                entry.resource)
            try Self.evict(db, maxBytes: maxBytes, now: now)
        }
    }

    func remove(_ key: CacheKey) async {
        await removal { db in try db.execute("DELETE FROM entry WHERE key = ?", key.bytes) }
    }

    func removeAll(api: String) async {
        await removal { db in try db.execute("DELETE FROM entry WHERE api = ?", api) }
    }

    func removeAll(resources: Set<String>) async {
        await removal { db in
            for resource in resources { try db.execute("DELETE FROM entry WHERE resource = ?", resource) }
        }
    }

    func removeAll() async {
        await removal { db in try db.execute("DELETE FROM entry") }
    }

    /// Total bytes and entries stored.
    func usage() -> (entries: Int, bytes: Int) {
        guard !health.withLock({ $0.isOff }) else { return (0, 0) }
        let usage = try? store.read { db in
            try db.firstRow("SELECT count(*), coalesce(sum(size), 0) FROM entry") { row in
                (entries: row.int(0) ?? 0, bytes: row.int(1) ?? 0)
            }
        }
        return (usage ?? nil) ?? (0, 0)
    }

    /// A failed write (disk full, busy, corruption — after which the store is rebuilt) just
    /// leaves the entry out: the cache is never the only copy of anything. So a store waits
    /// for another process's lock on the file only briefly (``storePatience``), not the 5
    /// seconds a removal waits: the response it stores is on its way to the caller.
    private func write(_ body: @escaping @Sendable (SQLiteConnection) throws -> Void) async {
        _ = try? await store.write(patience: Self.storePatience, body)
    }

    /// How long a store waits for another process's lock on the file before leaving its entry out.
    static let storePatience = Duration.milliseconds(100)

    /// A removal runs even when the calling task is cancelled (``SQLiteStore/write(_:)`` skips a
    /// cancelled caller's transaction): an invalidation from a task being torn down (a screen
    /// closing, a logout) that stopped at memory would leave the disk answering with what was
    /// invalidated. The task that runs it does not inherit the caller's cancellation.
    private func removal(_ body: @escaping @Sendable (SQLiteConnection) throws -> Void) async {
        let store = self.store
        let failure = await Task { () -> RunwayError? in
            do throws(RunwayError) {
                try await store.write(body)
                return nil
            } catch {
                return error
            }
        }.value
        guard let failure else { return }
        // Failed: see the type.
        let health = self.health
        guard (failure.underlying as? SQLiteError)?.isBusy == true else {
            if !store.replaceWithEmpty() { health.withLock { $0.isOff = true } }
            return
        }
        health.withLock { $0.pendingRemovals += 1 }
        Task.detached {
            for delay in Self.removalRetries {
                try? await Task.sleep(for: delay)
                if (try? await store.write(body)) != nil {
                    health.withLock { $0.pendingRemovals -= 1 }
                    return
                }
            }
            if !store.replaceWithEmpty() { health.withLock { $0.isOff = true } }
            health.withLock { $0.pendingRemovals -= 1 }
        }
    }

    private static func evict(_ db: SQLiteConnection, maxBytes: Int, now: Double) throws(SQLiteError) {
        var total = try db.firstRow("SELECT coalesce(sum(size), 0) FROM entry") { $0.int(0) ?? 0 } ?? 0
        guard total > maxBytes else { return }
        // Expired entries go first, with those stored after `now` (the clock was set back since).
        let rows = try db.rows(
            "SELECT key, size FROM entry ORDER BY (expires_at <= ? OR stored_at > ?) DESC, stored_at ASC", now, now
        ) { row in
            (key: row.data(0) ?? Data(), size: row.int(1) ?? 0)
        }
        var victims: [Data] = []
        for row in rows where total > maxBytes {
            victims.append(row.key)
            total -= row.size
        }
        for victim in victims {
            try db.execute("DELETE FROM entry WHERE key = ?", victim)
        }
    }

    /// The SHA-256 of an entry's key, status, encoded headers, body, encoded selecting fields and
    /// resource, each apart from the next: a row whose key was changed (rows' keys swapped)
    /// is a miss, never another request's answer. An entry written before the selecting fields
    /// were kept (their response may have a `Vary`), or before its key and resource were (a
    /// write to it would not remove it), has a digest without them: a miss.
    static func digest(key: Data, status: Int, headers: Data, body: Data, selecting: Data, resource: String) -> Data {
        var hash = SHA256()
        let resource = Array(resource.utf8)
        let numbers = [key.count, status, headers.count, body.count, selecting.count, resource.count].flatMap { number in
            stride(from: 0, to: 64, by: 8).map { UInt8(truncatingIfNeeded: number >> $0) }
        }
        hash.update(data: numbers)
        hash.update(data: key)
        hash.update(data: headers)
        hash.update(data: body)
        hash.update(data: selecting)
        hash.update(data: resource)
        return Data(hash.finalize())
    }

    @Sendable private static func createSchema(_ db: SQLiteConnection) throws {
        try db.executeScript(
            """
            CREATE TABLE IF NOT EXISTS entry (
                key BLOB PRIMARY KEY NOT NULL,
                api TEXT NOT NULL,
                status INTEGER NOT NULL,
                headers BLOB,
                body BLOB,
                stored_at REAL NOT NULL,
                expires_at REAL NOT NULL,
                size INTEGER NOT NULL,
                digest BLOB,
                selecting BLOB,
                resource TEXT
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS entry_api ON entry(api);
            """)
        // A file from before entries had a digest (NULL: a miss), selecting fields or a resource
        // (a digest without them, or a NULL resource: a miss).
        let columns = try db.rows("PRAGMA table_info(entry)", row: { $0.string(1) })
        if !columns.contains("digest") { try db.execute("ALTER TABLE entry ADD COLUMN digest BLOB") }
        if !columns.contains("selecting") { try db.execute("ALTER TABLE entry ADD COLUMN selecting BLOB") }
        if !columns.contains("resource") { try db.execute("ALTER TABLE entry ADD COLUMN resource TEXT") }
        try db.execute("CREATE INDEX IF NOT EXISTS entry_resource ON entry(resource)")
    }
}

#endif
