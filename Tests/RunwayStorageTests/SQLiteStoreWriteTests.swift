import Dispatch
import Foundation
import Runway
import RunwayStorage
import RunwayTestServer
import Synchronization
import Testing

/// Transactions: reads beside a write (WAL), rollback, and the async write that waits off the
/// cooperative pool.
@Suite(.timeLimit(.minutes(2))) struct SQLiteStoreWriteTests {
    /// A write held inside its transaction (after inserting one item) until ``release()``.
    final class HeldWrite: Sendable {
        let inside: Gate
        private let hold: DispatchSemaphore
        let task: Task<Void, any Error>

        init(_ store: SQLiteStore) {
            let (inside, hold) = (Gate(), DispatchSemaphore(value: 0))
            self.inside = inside
            self.hold = hold
            task = Task {
                try await store.write { db in
                    try db.execute("INSERT INTO item (text) VALUES ('held')")
                    inside.open()
                    // Blocks the store's write queue, never a thread of the cooperative pool.
                    hold.wait()
                }
            }
        }

        func release() { hold.signal() }
    }

    struct Refused: Error {}

    /// A count tasks share.
    final class Counter: Sendable {
        let value = Atomic(0)
    }

    @Test func readsRunBesideAWriteAndSeeTheLastCommit() async throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let store = try SQLiteStore.items(folder.file())
        try await store.insert("committed")
        let write = HeldWrite(store)
        await write.inside.wait()
        // The writer is inside its transaction: reads do not wait for it, and do not see it.
        #expect(try store.count() == 1)
        let concurrent = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try store.count() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(concurrent == Array(repeating: 1, count: 8))
        write.release()
        try await write.task.value
        #expect(try store.count() == 2)
    }

    @Test func aWriteThatThrowsIsRolledBack() async throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let store = try SQLiteStore.items(folder.file())
        await #expect {
            try await store.write { db in
                try db.execute("INSERT INTO item (text) VALUES ('a')")
                try db.execute("INSERT INTO item (text) VALUES ('b')")
                throw Refused()
            }
        } throws: { error in
            (error as? RunwayError)?.code == .fileIO && (error as? RunwayError)?.underlying is Refused
        }
        // A statement SQLite refuses (a duplicate key) undoes the statements before it too.
        #expect {
            try store.writeBlocking { db in
                try db.execute("INSERT INTO item (id, text) VALUES (1, 'c')")
                try db.execute("INSERT INTO item (id, text) VALUES (1, 'd')")
            }
        } throws: { error in
            ((error as? RunwayError)?.underlying as? SQLiteError)?.primaryCode == 19  // SQLITE_CONSTRAINT
        }
        #expect(try store.count() == 0)
        try await store.insert("after")
        #expect(try store.count() == 1)
        #expect(store.rebuildCount == 0)
    }

    @Test func writesWaitingForTheWriterHoldNoThreadOfTheCooperativePool() async throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let store = try SQLiteStore.items(folder.file())
        let write = HeldWrite(store)
        await write.inside.wait()
        // Far more writers than the pool has threads: each must suspend, not block, for the next
        // to start at all.
        let started = Counter()
        let writers = (0..<64).map { n in
            Task {
                started.value.add(1, ordering: .relaxed)
                try await store.insert("writer \(n)")
            }
        }
        #expect(await eventually { started.value.load(ordering: .relaxed) == 64 })
        #expect(await Task.detached { 42 }.value == 42)
        write.release()
        for writer in writers { try await writer.value }
        try await write.task.value
        #expect(try store.count() == 65)
    }

    @Test func aTaskCancelledBeforeItsTransactionStartsWritesNothing() async throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let store = try SQLiteStore.items(folder.file(), label: "cancel")
        let write = HeldWrite(store)
        await write.inside.wait()
        let queued = Task { try await store.insert("never") }
        queued.cancel()
        write.release()
        let error = await #expect(throws: RunwayError.self) { try await queued.value }
        #expect(error?.code == .cancelled)
        #expect(error?.stage == .storage("cancel"))
        try await write.task.value
        #expect(try store.count() == 1)
    }

    /// A file another process holds locked past the busy timeout cannot be opened (its schema
    /// is applied in a write): the error says the database is locked, not only that it cannot
    /// be opened.
    @Test func aFileLockedPastTheBusyTimeoutSaysSoWhenOpened() async throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let store = try SQLiteStore.items(folder.file(), label: "holder")
        let write = HeldWrite(store)
        await write.inside.wait()
        let error = #expect(throws: RunwayError.self) { try SQLiteStore.items(folder.file(), label: "second") }
        write.release()
        try await write.task.value
        #expect(error?.code == .configuration)
        #expect(error?.message.contains(": database is locked") == true, "\(String(describing: error))")
    }
}
