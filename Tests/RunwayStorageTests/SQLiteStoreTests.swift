import Foundation
import GRDB
import Runway
import RunwayStorage
import Testing

@Suite struct SQLiteStoreTests {
    func directory() -> URL {
        FileManager.default.temporaryDirectory.appending(path: "runway-storage-\(UUID().uuidString)")
    }

    @Sendable static func schema(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS item (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
    }

    func count(_ store: SQLiteStore) throws(RunwayError) -> Int {
        try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM item") ?? 0 }
    }

    @Test func writesAndReadsInWALMode() async throws {
        let folder = directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore(file: folder.appending(path: "nested/s.sqlite"), label: "test", schema: Self.schema)
        try await store.write { db in try db.execute(sql: "INSERT INTO item (text) VALUES ('a')") }
        try store.writeBlocking { db in try db.execute(sql: "INSERT INTO item (text) VALUES ('b')") }
        #expect(try count(store) == 2)
        #expect(try store.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
        #expect(store.rebuildCount == 0)
    }

    @Test func aGarbageFileIsMovedAsideAndRebuiltWithTheSchema() async throws {
        let folder = directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appending(path: "s.sqlite")
        try Data(repeating: 0xAB, count: 10_000).write(to: file)
        let store = try SQLiteStore(file: file, label: "test", schema: Self.schema)
        #expect(store.rebuildCount == 1)
        #expect(FileManager.default.fileExists(atPath: file.path + ".corrupt"))
        try await store.write { db in try db.execute(sql: "INSERT INTO item (text) VALUES ('fresh')") }
        #expect(try count(store) == 1)
    }

    @Test func aTruncatedFileIsFoundAtOpen() async throws {
        let folder = directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "s.sqlite")
        do {
            let store = try SQLiteStore(file: file, label: "test", schema: Self.schema)
            try await store.write { db in
                for n in 0..<2_000 {
                    try db.execute(sql: "INSERT INTO item (text) VALUES (?)", arguments: [String(repeating: "\(n)", count: 20)])
                }
            }
        }
        let data = try Data(contentsOf: file)
        try data.prefix(data.count / 2).write(to: file)
        let store = try SQLiteStore(file: file, label: "test", schema: Self.schema)
        #expect(store.rebuildCount == 1)
        #expect(try count(store) == 0)
    }

    @Test func corruptionWhileOpenIsATypedErrorAndTheFileIsRebuilt() async throws {
        let folder = directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "s.sqlite")
        let store = try SQLiteStore(file: file, label: "outbox", schema: Self.schema)
        try await store.write { db in
            for n in 0..<500 { try db.execute(sql: "INSERT INTO item (text) VALUES (?)", arguments: ["row \(n)"]) }
        }
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: file.path + suffix) {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file.path + suffix))
            try handle.write(contentsOf: Data(repeating: 0x5A, count: 64 << 10))
            try handle.close()
        }
        var failure: RunwayError?
        for _ in 0..<3 where failure == nil {
            do {
                _ = try count(store)
            } catch {
                failure = error
            }
        }
        let error = try #require(failure)
        #expect(error.code == .fileIO)
        #expect(error.stage == .storage("outbox"))
        #expect(store.rebuildCount == 1)
        try await store.write { db in try db.execute(sql: "INSERT INTO item (text) VALUES ('after')") }
        #expect(try count(store) == 1)
    }

    @Test func aFileThatCannotBeCreatedIsAConfigurationError() throws {
        let folder = directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let blocker = folder.appending(path: "not-a-directory")
        try Data("x".utf8).write(to: blocker)
        #expect {
            try SQLiteStore(file: blocker.appending(path: "s.sqlite"), label: "test", schema: Self.schema)
        } throws: { error in
            (error as? RunwayError)?.code == .configuration && (error as? RunwayError)?.stage == .storage("test")
        }
    }

    @Test func aFailingStatementIsAFileIOErrorAndRebuildsNothing() async throws {
        let folder = directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore(file: folder.appending(path: "s.sqlite"), label: "test", schema: Self.schema)
        await #expect {
            try await store.write { db in try db.execute(sql: "INSERT INTO missing VALUES (1)") }
        } throws: { ($0 as? RunwayError)?.code == .fileIO }
        #expect(store.rebuildCount == 0)
    }
}
