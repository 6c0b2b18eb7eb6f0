import Foundation
import Runway
import RunwayStorage
import Synchronization
import Testing

/// Opening, WAL, typed errors, and a corrupt file found at open or later.
@Suite struct SQLiteStoreTests {
    @Test func writesAndReadsInWALMode() async throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let store = try SQLiteStore.items(folder.file("nested/s.sqlite"))
        try await store.write { db in try db.execute("INSERT INTO item (text) VALUES ('a')") }
        try store.writeBlocking { db in try db.execute("INSERT INTO item (text) VALUES ('b')") }
        #expect(try store.count() == 2)
        #expect(try store.read { db in try db.firstRow("PRAGMA journal_mode") { $0.string(0) } } == "wal")
        #expect(try store.read { db in try db.firstRow("PRAGMA busy_timeout") { $0.int(0) } } == 5_000)
        #expect(store.rebuildCount == 0)
    }

    @Test func aGarbageFileIsMovedAsideAndRebuiltWithTheSchema() async throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        let file = folder.file()
        try Data(repeating: 0xAB, count: 10_000).write(to: file)
        let store = try SQLiteStore.items(file)
        #expect(store.rebuildCount == 1)
        #expect(FileManager.default.fileExists(atPath: file.path + ".corrupt"))
        try await store.insert("fresh")
        #expect(try store.count() == 1)
    }

    @Test func aFileAnotherStoreReplacedIsTheOneUsedFromTheNextCall() async throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let file = folder.file()
        // Two stores on one file, as two processes have.
        let first = try SQLiteStore.items(file)
        let second = try SQLiteStore.items(file)
        try await first.insert("stale")
        #expect(try second.count() == 1)
        // Emptied by one (its removal failed, say): the other answers from the new file too, and
        // what it writes lands there, where the first sees it.
        #expect(first.replaceWithEmpty())
        #expect(try second.count() == 0)
        try await second.insert("new")
        #expect(try first.count() == 1)
        #expect(second.rebuildCount == 0)
        // Rebuilt by one after corruption: the same.
        try await second.insert("more")
        try scribble(over: file)
        for _ in 0..<3 where first.rebuildCount == 1 { _ = try? first.count() }
        #expect(first.rebuildCount == 2)
        try await first.insert("after")
        #expect(try second.read { db in try db.rows("SELECT text FROM item") { $0.string(0) ?? "" } } == ["after"])
    }

    @Test("a file replaced when the new one cannot be made is let go of: its space is freed, its rows never read again")
    func aReplacementThatCannotOpenLetsGoOfTheOldFile() async throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let file = folder.file()
        // The schema fails from its second run on, as opening a new file on a full disk does.
        let opens = Atomic<Int>(0)
        let refusing = Atomic<Bool>(true)
        let store = try SQLiteStore(file: file, label: "test") { db in
            if opens.add(1, ordering: .relaxed).newValue > 1, refusing.load(ordering: .relaxed) {
                throw SQLiteError(code: 13, message: "database or disk is full")  // SQLITE_FULL
            }
            try itemSchema(db)
        }
        for text in ["a", "b", "c"] { try await store.insert(text) }
        #expect(try store.count() == 3)
        #expect(!store.replaceWithEmpty())
        // No descriptor of the deleted file, its WAL or its shared memory is left open.
        let held = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")
        }
        #expect(!held.contains { $0.hasPrefix(file.path) }, "\(held.filter { $0.contains("runway-storage") })")
        // Nothing is read from the deleted file; each call tries the new one again.
        let failure = #expect(throws: RunwayError.self) { try store.count() }
        #expect(failure?.code == .fileIO)
        refusing.store(false, ordering: .relaxed)
        #expect(try store.count() == 0)
        try await store.insert("fresh")
        #expect(try store.count() == 1)
    }

    @Test func aTruncatedFileIsFoundAtOpen() async throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let file = folder.file()
        do {
            let store = try SQLiteStore.items(file)
            try await store.write { db in
                for n in 0..<2_000 {
                    try db.execute("INSERT INTO item (text) VALUES (?)", String(repeating: "\(n)", count: 20))
                }
            }
        }
        // Closing the last connection folded the WAL into the file; now cut the file in half.
        #expect(!FileManager.default.fileExists(atPath: file.path + "-wal"))
        let data = try Data(contentsOf: file)
        try data.prefix(data.count / 2).write(to: file)
        let store = try SQLiteStore.items(file)
        #expect(store.rebuildCount == 1)
        #expect(try store.count() == 0)
    }

    @Test func corruptionWhileOpenIsATypedErrorAndTheFileIsRebuilt() async throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let file = folder.file()
        let store = try SQLiteStore.items(file, label: "outbox")
        try await store.write { db in
            for n in 0..<500 { try db.execute("INSERT INTO item (text) VALUES (?)", "row \(n)") }
        }
        try scribble(over: file)
        var failure: RunwayError?
        for _ in 0..<3 where failure == nil {
            do {
                _ = try store.count()
            } catch {
                failure = error
            }
        }
        let error = try #require(failure)
        #expect(error.code == .fileIO)
        #expect(error.stage == .storage("outbox"))
        #expect((error.underlying as? SQLiteError)?.isCorruption == true)
        #expect(store.rebuildCount == 1)
        try await store.insert("after")
        #expect(try store.count() == 1)
    }

    @Test func whatIsWrittenAfterARebuildIsInTheFileWhenItIsOpenedAgain() async throws {
        // The corrupt file's connections close after the new file took its name; SQLite sees the
        // file moved and leaves the new file's WAL and shared memory alone.
        let folder = StorageFolder()
        defer { folder.remove() }
        let file = folder.file()
        do {
            let store = try SQLiteStore.items(file)
            for n in 0..<50 { try await store.insert("old \(n)") }
            _ = try store.count()  // a reader connection of the old file, idle from now on
            try scribble(over: file)
            // Connections may answer from their page cache for a while; one of them reads the
            // damaged pages soon.
            for _ in 0..<10 where store.rebuildCount == 0 {
                _ = try? store.count()
                if store.rebuildCount == 0 { try? await store.insert("probe") }
            }
            #expect(store.rebuildCount == 1)
            for n in 0..<20 { try await store.insert("new \(n)") }
            #expect(try store.count() == 20)
        }
        let reopened = try SQLiteStore.items(file)
        #expect(reopened.rebuildCount == 0)
        #expect(try reopened.count() == 20)
    }

    @Test func aFileThatCannotBeCreatedIsAConfigurationError() throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        let blocker = folder.file("not-a-directory")
        try Data("x".utf8).write(to: blocker)
        #expect {
            try SQLiteStore.items(blocker.appending(path: "s.sqlite"))
        } throws: { error in
            (error as? RunwayError)?.code == .configuration && (error as? RunwayError)?.stage == .storage("test")
        }
    }

    @Test func aFailingStatementIsAFileIOErrorAndRebuildsNothing() async throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let store = try SQLiteStore.items(folder.file())
        await #expect {
            try await store.write { db in try db.execute("INSERT INTO missing VALUES (1)") }
        } throws: { error in
            let error = error as? RunwayError
            return error?.code == .fileIO && (error?.underlying as? SQLiteError)?.message.contains("no such table") == true
        }
        #expect(store.rebuildCount == 0)
    }
}
