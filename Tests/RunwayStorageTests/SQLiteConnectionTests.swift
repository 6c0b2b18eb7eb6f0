import Foundation
import Runway
import RunwayStorage
import Testing

/// What a connection binds and reads, and its statement cache.
@Suite struct SQLiteConnectionTests {
    @Sendable static func valueSchema(_ db: SQLiteConnection) throws {
        try db.execute("CREATE TABLE IF NOT EXISTS value (id INTEGER PRIMARY KEY, number, blob BLOB, text TEXT)")
    }

    struct Stored: Equatable {
        var number: Int64?
        var real: Double?
        var blob: Data?
        var bytes: [UInt8]?
        var text: String?
    }

    @Test func valuesNullsAndEmptyBlobsComeBackAsStored() async throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let store = try SQLiteStore(file: folder.file(), label: "test", schema: Self.valueSchema)
        try await store.write { db in
            let insert = "INSERT INTO value (id, number, blob, text) VALUES (?, ?, ?, ?)"
            try db.execute(insert, 1, Int64.max, Data([0, 1, 0, 255]), "a\u{0}b é")
            try db.execute(insert, 2, Int64.min, Data(), "")
            try db.execute(insert, 3, 2.5, [UInt8](), true)
            try db.execute(insert, 4, Int?.none, Data?.none, String?.none)
            try db.execute(insert, 5, SQLiteValue.null, [UInt8]([7, 8]), SQLiteValue.text("x"))
        }
        let rows = try store.read { db in
            // Every row's bytes are copied out before the next step: none aliases another.
            try db.rows("SELECT number, blob, text FROM value ORDER BY id") { row in
                Stored(number: row.int64(0), real: row.double(0), blob: row.data(1), bytes: row.bytes(1), text: row.string(2))
            }
        }
        #expect(
            rows == [
                Stored(number: .max, real: Double(Int64.max), blob: Data([0, 1, 0, 255]), bytes: [0, 1, 0, 255], text: "a\u{0}b é"),
                Stored(number: .min, real: Double(Int64.min), blob: Data(), bytes: [], text: ""),
                Stored(number: 2, real: 2.5, blob: Data(), bytes: [], text: "1"),
                Stored(number: nil, real: nil, blob: nil, bytes: nil, text: nil),
                Stored(number: nil, real: nil, blob: Data([7, 8]), bytes: [7, 8], text: "x"),
            ])
        let kinds = try store.read { db in try db.rows("SELECT typeof(blob) FROM value ORDER BY id") { $0.string(0) } }
        #expect(kinds == ["blob", "blob", "blob", "null", "blob"])
        let (isNull, columns) = try #require(
            try store.read { db in try db.firstRow("SELECT blob, text FROM value WHERE id = 4") { ($0.isNull(0), $0.columnCount) } })
        #expect(isNull && columns == 2)
    }

    @Test func eachStatementIsPreparedOncePerConnectionAndSeesLaterCommits() async throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let store = try SQLiteStore.items(folder.file())
        let count = "SELECT count(*) FROM item WHERE text <> ?"
        // Reads on one thread, one after the other, get the same reader connection back.
        let cached = try store.read { db in
            let before = db.cachedStatementCount
            for _ in 0..<3 { _ = try db.firstRow(count, "") { $0.int(0) } }
            return db.cachedStatementCount - before
        }
        #expect(cached == 1)
        for n in 1...3 {
            try await store.insert("item \(n)")
            // The cached statement, reset after each use, reads the new commit.
            let (seen, statements) = try store.read { db in (try db.firstRow(count, "") { $0.int(0) }, db.cachedStatementCount) }
            #expect(seen == n)
            #expect(statements <= 4)  // BEGIN, COMMIT, the count, PRAGMA query_only: nothing new per read
        }
    }

    @Test func aStatementUsedInsideItsOwnRowsGetsAFreshOne() throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let store = try SQLiteStore.items(folder.file())
        try store.writeBlocking { db in
            for n in 0..<3 { try db.execute("INSERT INTO item (id, text) VALUES (?, ?)", n, "t\(n)") }
        }
        let text = "SELECT text FROM item WHERE id >= ? ORDER BY id"
        let nested = try store.read { db in
            try db.rows(text, 0) { row in
                let rest = (try? db.rows(text, 1) { $0.string(0) ?? "" }) ?? []
                return "\(row.string(0) ?? ""):\(rest.joined(separator: ","))"
            }
        }
        #expect(nested == ["t0:t1,t2", "t1:t1,t2", "t2:t1,t2"])
    }

    @Test func argumentsThatDoNotMatchTheParametersOrSeveralStatementsAreRefused() throws {
        let folder = StorageFolder()
        defer { folder.remove() }
        let store = try SQLiteStore.items(folder.file())
        for sql in ["SELECT ?, ?", "SELECT 1; SELECT 2", "  "] {
            #expect(throws: RunwayError.self, "\(sql)") {
                try store.read { db in try db.execute(sql, 1) }
            }
        }
        #expect {
            try store.read { db in try db.execute("SELECT ?, ?", 1) }
        } throws: { error in
            ((error as? RunwayError)?.underlying as? SQLiteError)?.code == 25  // SQLITE_RANGE
        }
        try store.writeBlocking { db in
            try db.executeScript("INSERT INTO item (text) VALUES ('a'); INSERT INTO item (text) VALUES ('b');")
        }
        #expect(try store.count() == 2)
        let changed = try store.writeBlocking { db in
            try db.execute("UPDATE item SET text = ?", "c")
            return db.changes
        }
        #expect(changed == 2)
    }
}
