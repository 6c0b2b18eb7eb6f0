import Foundation
import Runway
import RunwayStorage
import RunwayTestServer
import Testing

@testable import RunwayCache

@Suite struct DiskCacheTests {
    func entry(_ body: String, api: String = "a", at now: Double = 1000) -> CacheEntry {
        CacheEntry(
            api: api, status: 200, headers: ["Content-Type": "text/plain", "X-Two": "2"], body: Data(body.utf8), storedAt: now,
            expiresAt: now + 180)
    }

    func key(_ n: Int) -> CacheKey { CacheKey(bytes: Data("key-\(n)".utf8)) }

    @Test func garbageFileIsMovedAsideAndRebuilt() async throws {
        let directory = temporaryDirectory()
        let file = directory.appending(path: "c.sqlite")
        try Data(repeating: 0xAB, count: 10_000).write(to: file)
        let disk = try DiskCache(file: file, maxBytes: 1 << 20)
        #expect(disk.rebuildCount == 1)
        #expect(disk.get(key(1)) == nil)
        await disk.set(key(1), entry("one"), now: 1000)
        #expect(disk.get(key(1))?.body == Data("one".utf8))
        #expect(FileManager.default.fileExists(atPath: file.path + ".corrupt"))
        try? FileManager.default.removeItem(at: directory)
    }

    /// A disk cache in `directory` holding the entries of keys 0, 1 and 2.
    func threeEntries(in directory: URL) async throws -> (file: URL, disk: DiskCache) {
        let file = directory.appending(path: "c.sqlite")
        let disk = try DiskCache(file: file, maxBytes: 1 << 20)
        for n in 0..<3 { await disk.set(key(n), entry("entry \(n)"), now: 1000) }
        return (file, disk)
    }

    /// The next run on `file` finds none of keys 0, 1 and 2, and `disk` goes on storing.
    func expectRemovedAndStoring(_ disk: DiskCache, _ file: URL) async throws {
        let next = try DiskCache(file: file, maxBytes: 1 << 20)
        #expect((0..<3).allSatisfy { next.get(key($0)) == nil })
        await disk.set(key(4), entry("after"), now: 1000)
        #expect(disk.get(key(4))?.body == Data("after".utf8))
    }

    /// A removal held up by another process's lock past the busy timeout was ignored: the
    /// entries invalidated at logout kept answering, in this run and the next. They now miss at
    /// once, and the removal is carried out on the shared file once the lock is free (the file
    /// is not replaced: the other process, which has it open, sees the removal too).
    @Test func aRemovalHeldUpByAnotherProcessIsCarriedOutWhenTheLockIsFree() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (file, disk) = try await threeEntries(in: directory)
        #expect(disk.usage().entries == 3)
        // Another program's write transaction on the file, held until the removal has given up.
        let release = try await holdingTheWriteLock(of: file)
        await disk.removeAll()
        #expect(disk.get(key(0)) == nil)
        #expect(!disk.isAnswering)
        try await release()
        // Tried again in the background: done once the lookups are answered again.
        #expect(await eventually(timeout: .seconds(60)) { disk.isAnswering })
        #expect(disk.usage().entries == 0)
        #expect(disk.rebuildCount == 0)
        #expect(
            try SQLiteStore(file: file, label: "other") { _ in }.read { db in try db.firstRow("SELECT count(*) FROM entry") { $0.int(0) } }
                == 0)
        try await expectRemovedAndStoring(disk, file)
    }

    /// A removal the file refuses (here a writer made read-only; a full disk or a file the
    /// process may not write fail alike) replaces the file by an empty one.
    @Test func aRemovalTheFileRefusesReplacesIt() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (file, disk) = try await threeEntries(in: directory)
        try await disk.store.write { db in try db.execute("PRAGMA query_only = 1") }
        await disk.removeAll()
        #expect(disk.get(key(0)) == nil)
        #expect(disk.usage().entries == 0)
        #expect(disk.rebuildCount == 1)
        try await expectRemovedAndStoring(disk, file)
    }

    @Test func truncatedFileIsAMissNeverWrongData() async throws {
        let directory = temporaryDirectory()
        let file = directory.appending(path: "c.sqlite")
        do {
            let disk = try DiskCache(file: file, maxBytes: 16 << 20)
            for n in 0..<200 { await disk.set(key(n), entry(String(repeating: "\(n)-", count: 200)), now: 1000) }
        }
        // Closing the last connection folded the WAL into the file; now cut the file in half.
        let data = try Data(contentsOf: file)
        #expect(data.count > 40_000)
        try data.prefix(data.count / 2).write(to: file)
        let disk = try DiskCache(file: file, maxBytes: 16 << 20)
        #expect(disk.rebuildCount == 1)
        for n in 0..<200 {
            if let found = disk.get(key(n)) {
                #expect(found.body == Data(String(repeating: "\(n)-", count: 200).utf8))
            }
        }
        await disk.set(key(5), entry("five"), now: 1000)
        #expect(disk.get(key(5))?.body == Data("five".utf8))
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func corruptionWhileOpenIsAMissAndRebuilds() async throws {
        let directory = temporaryDirectory()
        let file = directory.appending(path: "c.sqlite")
        let disk = try DiskCache(file: file, maxBytes: 16 << 20)
        for n in 0..<50 { await disk.set(key(n), entry("v\(n)"), now: 1000) }
        // Something else scribbles over the file and its WAL while the cache has it open.
        let handle = try FileHandle(forWritingTo: file)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 64 << 10))
        try handle.close()
        if FileManager.default.fileExists(atPath: file.path + "-wal") {
            // All of it: which pages a read takes from the log's first frames depends on the rows' sizes.
            let wal = try FileHandle(forWritingTo: URL(fileURLWithPath: file.path + "-wal"))
            let size = try wal.seekToEnd()
            try wal.seek(toOffset: 0)
            try wal.write(contentsOf: Data(repeating: 0x5A, count: max(64 << 10, Int(size))))
            try wal.close()
        }
        for n in 0..<50 {
            if let found = disk.get(key(n)) { #expect(found.body == Data("v\(n)".utf8)) }
        }
        #expect(disk.rebuildCount == 1)
        await disk.set(key(7), entry("seven"), now: 1000)
        #expect(disk.get(key(7))?.body == Data("seven".utf8))
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func aFileFromBeforeEntriesKeptTheirResourceIsUpgradedAndItsEntriesMiss() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "c.sqlite")
        do {
            let disk = try DiskCache(file: file, maxBytes: 1 << 20)
            await disk.set(key(1), entry("old"), now: 1000)
            #expect(disk.get(key(1))?.body == Data("old".utf8))
        }
        // The file as the version before wrote it: no resource column, so no write could remove its entries.
        do {
            let store = try SQLiteStore(file: file, label: "before") { _ in }
            try await store.write { db in
                try db.execute("DROP INDEX entry_resource")
                try db.execute("ALTER TABLE entry DROP COLUMN resource")
            }
        }
        let disk = try DiskCache(file: file, maxBytes: 1 << 20)
        #expect(disk.rebuildCount == 0)
        #expect(disk.get(key(1)) == nil)
        var written = entry("new")
        written.resource = "http://a.example/items/1"
        await disk.set(key(2), written, now: 1000)
        await disk.set(key(3), entry("other"), now: 1000)
        #expect(disk.get(key(2))?.resource == "http://a.example/items/1")
        await disk.removeAll(resources: ["http://a.example/items/1"])
        #expect(disk.get(key(2)) == nil)
        #expect(disk.get(key(3))?.body == Data("other".utf8))
    }

    @Test func rowsWhoseKeysWereSwappedAreMisses() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "c.sqlite")
        let disk = try DiskCache(file: file, maxBytes: 1 << 20)
        await disk.set(key(1), entry("one"), now: 1000)
        await disk.set(key(2), entry("two"), now: 1000)
        await disk.set(key(3), entry("three"), now: 1000)
        // Another program swaps the keys of two rows.
        let other = try SQLiteStore(file: file, label: "other") { _ in }
        let (one, two) = (key(1).bytes, key(2).bytes)
        try await other.write { db in
            try db.execute("UPDATE entry SET key = ? WHERE key = ?", Data("swap".utf8), one)
            try db.execute("UPDATE entry SET key = ? WHERE key = ?", one, two)
            try db.execute("UPDATE entry SET key = ? WHERE key = ?", two, Data("swap".utf8))
        }
        #expect(disk.get(key(1)) == nil)
        #expect(disk.get(key(2)) == nil)
        #expect(disk.get(key(3))?.body == Data("three".utf8))
    }

    @Test func sizeIsBoundedOldestFirst() async throws {
        let directory = temporaryDirectory()
        let disk = try DiskCache(file: directory.appending(path: "c.sqlite"), maxBytes: 20_000)
        let body = String(repeating: "x", count: 1_000)
        for n in 0..<60 { await disk.set(key(n), entry(body, at: 1000 + Double(n)), now: 1000 + Double(n)) }
        let usage = disk.usage()
        #expect(usage.bytes <= 20_000)
        #expect(usage.entries < 60)
        #expect(disk.get(key(59)) != nil)
        #expect(disk.get(key(0)) == nil)
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func emptyBodiesAndHeadersRoundTrip() async throws {
        let directory = temporaryDirectory()
        let disk = try DiskCache(file: directory.appending(path: "c.sqlite"), maxBytes: 1 << 20)
        let empty = CacheEntry(api: "a", status: 204, headers: [:], body: Data(), storedAt: 1, expiresAt: 2)
        await disk.set(key(1), empty, now: 1)
        let found = try #require(disk.get(key(1)))
        #expect(found.status == 204)
        #expect(found.body.isEmpty)
        #expect(found.headers.isEmpty)
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func headersRoundTripAndGarbageHeadersAreAMiss() {
        let headers: HTTPHeaders = ["A": "1", "Set-Cookie": "x", "set-cookie": "y", "Empty": ""]
        #expect(CacheEntry.decodeHeaders(CacheEntry.encode(headers)) == headers)
        #expect(CacheEntry.decodeHeaders(Data([1, 0, 0])) == nil)
        #expect(CacheEntry.decodeHeaders(Data([0xFF, 0xFF, 0xFF, 0x7F, 0x41])) == nil)
    }
}
