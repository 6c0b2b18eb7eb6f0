#if ActionLog  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway
import RunwayStorage
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An action handed to the logger, numbered in the order it arrived.
struct PendingAction: Sendable {
    let sequence: UInt64
    let action: UserAction
}

/// A batch ready to send: its ID and its records exactly as stored, oldest first.
struct PreparedBatch: Sendable {
    let id: String
    let records: [Data]
    /// Whether it was assigned just now (else it is a batch sent before and not acknowledged).
    let isNew: Bool

    var body: Data { ActionBatch.body(batchID: id, encodedRecords: records) }
}

/// The outbox file: actions waiting for upload, and the batches they were assigned to.
///
/// Two tables (and a one-row `counts` table that triggers keep current). `action` holds each
/// record's wire JSON (so a re-sent batch is byte-for-byte the same), its unique ID, and the batch
/// it belongs to (`NULL` until assigned). `batch` lists the batches assigned and not yet
/// acknowledged, oldest first. A batch is assigned in one transaction **before** it is sent and
/// deleted in one transaction **after** the server acknowledged it, so a crash anywhere re-sends
/// exactly the same batch ID with exactly the same records.
final class Outbox: Sendable {
    let store: SQLiteStore
    private let onRebuild: @Sendable () -> Void
    /// The store's rebuild count already reported.
    private let reportedRebuilds: Locked<Int>
    /// `<file>.lock`, locked (`flock`) while this outbox is in use: one logger per file.
    private let lock: Locked<Int32>

    /// Opens (or creates, or rebuilds) the file.
    /// - Parameter onRebuild: Called when the file is found corrupt while in use and rebuilt
    ///   empty (not for a rebuild at open: see ``rebuiltAtOpen``).
    /// - Throws: `.configuration` when another logger, in this process or another, has the file:
    ///   two would send the same batches and count each other's actions.
    init(file: URL, onRebuild: @escaping @Sendable () -> Void) throws(RunwayError) {
        // A file of its own, so the lock outlives the database file being rebuilt; its folder is
        // made here if it is missing (the store would make it too, and says so if it cannot).
        let lockPath = file.path + ".lock"
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw RunwayError(
                .configuration, "action log: cannot open \(lockPath): \(String(cString: strerror(errno)))",
                stage: .storage("RunwayActionLog"), field: "file")
        }
        // A lock held for a moment only (a logger just shut down) is waited for.
        guard lockExclusively(descriptor) else {
            close(descriptor)
            throw RunwayError(
                .configuration,
                "action log: another ActionLogger, in this process or another, has \(file.path) open; use one logger per file",
                stage: .storage("RunwayActionLog"), field: "file")
        }
        do {
            store = try SQLiteStore(file: file, label: "RunwayActionLog", schema: Self.createSchema)
        } catch {
            close(descriptor)
            throw error
        }
        lock = Locked(descriptor)
        reportedRebuilds = Locked(store.rebuildCount)
        self.onRebuild = onRebuild
    }

    deinit {
        releaseLock()
    }

    /// Lets another logger open the file (at shutdown, once nothing writes or sends any more).
    func releaseLock() {
        lock.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    /// Whether the file was corrupt at open and was rebuilt empty (its actions are lost).
    var rebuiltAtOpen: Bool { store.rebuildCount > 0 }

    /// What one write of queued actions did.
    struct Insertion: Sendable {
        /// The positions (in the actions handed over) that were written; the others were
        /// dropped by the full-outbox policy.
        var kept: Range<Int> = 0..<0
        /// Stored actions deleted by the full-outbox policy to make room.
        var droppedStored = 0
        /// Actions stored and not yet in a batch, after the write.
        var unassigned = 0
    }

    /// Writes `actions` in one transaction, giving each a record ID; blocks the calling thread.
    ///
    /// Over `maxRecords`, ``ActionLogger/DropPolicy/dropOldest`` deletes the oldest stored
    /// actions not in a batch, then (if that is not enough) leaves out the oldest of `actions`;
    /// ``ActionLogger/DropPolicy/dropNewest`` leaves out the newest of `actions`.
    func insert(_ actions: [PendingAction], maxRecords: Int, policy: ActionLogger.DropPolicy) throws(RunwayError) -> Insertion {
        let records = actions.map { pending in
            let action = pending.action
            return ActionBatch.Record(
                id: UUID().uuidString, name: action.name, at: action.millisecondsSince1970, attributes: action.attributes)
        }
        return try reportingRebuild { () throws(RunwayError) -> Insertion in
            try store.writeBlocking { db -> Insertion in
                var outcome = Insertion(kept: records.indices)
                let stored = try Self.counts(db).total
                let excess = stored + records.count - maxRecords
                if excess > 0 {
                    if policy == .dropOldest {
                        try db.execute(
                            "DELETE FROM action WHERE seq IN (SELECT seq FROM action WHERE batch IS NULL ORDER BY seq LIMIT ?)", excess)
                        outcome.droppedStored = db.changes
                        // Everything else stored is in a batch being sent: drop the oldest arrivals.
                        outcome.kept = min(records.count, excess - outcome.droppedStored)..<records.count
                    } else {
                        outcome.kept = 0..<max(0, records.count - excess)
                    }
                }
                for record in records[outcome.kept] {
                    try db.execute("INSERT INTO action (id, record) VALUES (?, ?)", record.id, record.encoded())
                }
                outcome.unassigned = try Self.counts(db).unassigned
                return outcome
            }
        }
    }

    /// What start-up found.
    struct Leftovers: Sendable {
        /// Actions stored by earlier runs.
        var records = 0
        /// Batches already assigned (sent, perhaps acknowledged, not deleted).
        var assignedBatches = 0
        /// Batches just made from the rest.
        var newBatches = 0
    }

    /// Puts every action left by an earlier run into batches of `batchSize` (the last may be
    /// smaller), so they go out among themselves, never mixed with this run's; blocks.
    func batchLeftovers(batchSize: Int) throws(RunwayError) -> Leftovers {
        try reportingRebuild { () throws(RunwayError) -> Leftovers in
            try store.writeBlocking { db -> Leftovers in
                var found = Leftovers()
                found.records = try Self.counts(db).total
                found.assignedBatches = try db.firstRow("SELECT count(*) FROM batch") { $0.int(0) ?? 0 } ?? 0
                while try Self.assign(db, size: batchSize, partial: true) != nil {
                    found.newBatches += 1
                }
                return found
            }
        }
    }

    /// The oldest batch not yet acknowledged, or a new one: `size` unassigned actions (fewer when
    /// `partial`). `nil` when there is nothing to send.
    func nextBatch(size: Int, partial: Bool) async throws(RunwayError) -> PreparedBatch? {
        try await reportingRebuildAsync { () async throws(RunwayError) -> PreparedBatch? in
            try await store.write { db -> PreparedBatch? in
                while let id = try db.firstRow("SELECT id FROM batch ORDER BY seq LIMIT 1", row: { $0.string(0) }) ?? nil {
                    let records = try Self.records(db, batch: id)
                    if !records.isEmpty { return PreparedBatch(id: id, records: records, isNew: false) }
                    try db.execute("DELETE FROM batch WHERE id = ?", id)
                }
                guard let id = try Self.assign(db, size: size, partial: partial) else { return nil }
                return PreparedBatch(id: id, records: try Self.records(db, batch: id), isNew: true)
            }
        }
    }

    /// Deletes an acknowledged batch and its actions; returns how many actions went.
    func delete(batch id: String) async throws(RunwayError) -> Int {
        try await reportingRebuildAsync { () async throws(RunwayError) -> Int in
            try await store.write { db -> Int in
                try db.execute("DELETE FROM action WHERE batch = ?", id)
                let deleted = db.changes
                try db.execute("DELETE FROM batch WHERE id = ?", id)
                return deleted
            }
        }
    }

    /// Splits a refused batch in two new ones (new IDs: the server took neither): the first
    /// half keeps the batch's place in the queue, the second goes last. One transaction.
    func split(batch id: String) async throws(RunwayError) {
        try await reportingRebuildAsync { () async throws(RunwayError) in
            try await store.write { db in
                let sequences = try db.rows("SELECT seq FROM action WHERE batch = ? ORDER BY seq", id) { $0.int64(0) ?? 0 }
                guard sequences.count > 1 else { return }
                let (first, second) = (UUID().uuidString, UUID().uuidString)
                try db.execute("UPDATE batch SET id = ? WHERE id = ?", first, id)
                try db.execute("INSERT INTO batch (id) VALUES (?)", second)
                let lastOfFirst = sequences[(sequences.count + 1) / 2 - 1]
                try db.execute("UPDATE action SET batch = ? WHERE batch = ? AND seq <= ?", first, id, lastOfFirst)
                try db.execute("UPDATE action SET batch = ? WHERE batch = ?", second, id)
            }
        }
    }

    /// Moves a batch to the end of the queue (same ID, same actions), behind every action not
    /// yet in a batch, which are put into batches of `batchSize` first (the last may be
    /// smaller): a refused action alone never holds back those recorded after it, and their
    /// acknowledgements are what lets it be discarded. One transaction.
    func requeue(batch id: String, batchSize: Int) async throws(RunwayError) {
        try await reportingRebuildAsync { () async throws(RunwayError) in
            try await store.write { db in
                try db.execute("DELETE FROM batch WHERE id = ?", id)
                while try Self.assign(db, size: batchSize, partial: true) != nil {}
                try db.execute("INSERT INTO batch (id) VALUES (?)", id)
            }
        }
    }

    /// Makes a batch of the oldest unassigned actions; `nil` when too few.
    private static func assign(_ db: SQLiteConnection, size: Int, partial: Bool) throws(SQLiteError) -> String? {
        let unassigned = try counts(db).unassigned
        guard unassigned >= size || (partial && unassigned > 0) else { return nil }
        let id = UUID().uuidString
        try db.execute("INSERT INTO batch (id) VALUES (?)", id)
        try db.execute(
            "UPDATE action SET batch = ? WHERE seq IN (SELECT seq FROM action WHERE batch IS NULL ORDER BY seq LIMIT ?)", id, size)
        return id
    }

    /// The stored and the unassigned actions, kept by triggers in the same transactions that
    /// change them (so no write scans the table to count it).
    private static func counts(_ db: SQLiteConnection) throws(SQLiteError) -> (total: Int, unassigned: Int) {
        try db.firstRow("SELECT total, unassigned FROM counts") { row in (row.int(0) ?? 0, row.int(1) ?? 0) } ?? (0, 0)
    }

    private static func records(_ db: SQLiteConnection, batch id: String) throws(SQLiteError) -> [Data] {
        try db.rows("SELECT record FROM action WHERE batch = ? ORDER BY seq", id) { $0.data(0) ?? Data() }
    }

    private func reportingRebuild<T>(_ body: () throws(RunwayError) -> T) throws(RunwayError) -> T {
        do {
            return try body()
        } catch {
            noticeRebuild()
            throw error
        }
    }

    private func reportingRebuildAsync<T>(_ body: () async throws(RunwayError) -> T) async throws(RunwayError) -> T {
        do {
            return try await body()
        } catch {
            noticeRebuild()
            throw error
        }
    }

    private func noticeRebuild() {
        let count = store.rebuildCount
        let fresh = reportedRebuilds.withLock { reportedRebuilds in
            guard count > reportedRebuilds else { return false }
            reportedRebuilds = count
            return true
        }
        if fresh { onRebuild() }
    }

    /// The outbox's tables and the columns it uses.
    private static let tables = [
        ("action", ["seq", "id", "record", "batch"]), ("batch", ["seq", "id"]), ("counts", ["total", "unassigned"]),
    ]

    @Sendable private static func createSchema(_ db: SQLiteConnection) throws {
        // A database of another program with a table of one of these names is not an outbox:
        // refused before anything is written to it (its rows would never leave: they have no
        // `seq` to be put in a batch by, and no `record` to send).
        for (table, columns) in tables {
            let found = try db.rows("PRAGMA table_info(\(table))") { $0.string(1) ?? "" }
            guard found.isEmpty || Set(columns).isSubset(of: found) else {
                throw SQLiteError(
                    code: 1,  // SQLITE_ERROR
                    message: "not an action-log outbox: its table \(table) has the columns \(found.joined(separator: ", "))")
            }
        }
        try db.executeScript(
            """
            CREATE TABLE IF NOT EXISTS action (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                record BLOB NOT NULL,
                batch TEXT
            );
            CREATE INDEX IF NOT EXISTS action_batch ON action(batch, seq);
            CREATE TABLE IF NOT EXISTS batch (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE
            );
            CREATE TABLE IF NOT EXISTS counts (total INTEGER NOT NULL, unassigned INTEGER NOT NULL);
            INSERT INTO counts (total, unassigned)
                SELECT (SELECT count(*) FROM action), (SELECT count(*) FROM action WHERE batch IS NULL)
                WHERE NOT EXISTS (SELECT 1 FROM counts);
            CREATE TRIGGER IF NOT EXISTS action_inserted AFTER INSERT ON action BEGIN
                UPDATE counts SET total = total + 1, unassigned = unassigned + (NEW.batch IS NULL);
            END;
            CREATE TRIGGER IF NOT EXISTS action_deleted AFTER DELETE ON action BEGIN
                UPDATE counts SET total = total - 1, unassigned = unassigned - (OLD.batch IS NULL);
            END;
            CREATE TRIGGER IF NOT EXISTS action_assigned AFTER UPDATE OF batch ON action BEGIN
                UPDATE counts SET unassigned = unassigned - (OLD.batch IS NULL) + (NEW.batch IS NULL);
            END;
            """)
    }
}

#endif
