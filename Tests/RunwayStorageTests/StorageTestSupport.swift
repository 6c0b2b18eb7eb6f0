import Foundation
import Runway
import RunwayStorage

/// A folder of its own under the temporary directory, removed by ``remove()``.
struct StorageFolder {
    let url = FileManager.default.temporaryDirectory.appending(path: "runway-storage-\(UUID().uuidString)")

    /// The file `name` in the folder.
    func file(_ name: String = "s.sqlite") -> URL { url.appending(path: name) }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// The schema of the tests' stores: one table of texts.
@Sendable func itemSchema(_ db: SQLiteConnection) throws {
    try db.execute("CREATE TABLE IF NOT EXISTS item (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
}

extension SQLiteStore {
    /// A store of ``itemSchema(_:)`` at `file`.
    static func items(_ file: URL, label: String = "test") throws(RunwayError) -> SQLiteStore {
        try SQLiteStore(file: file, label: label, schema: itemSchema)
    }

    /// The rows of `item`.
    func count() throws(RunwayError) -> Int {
        try read { db in try db.firstRow("SELECT count(*) FROM item") { $0.int(0) ?? 0 } ?? 0 }
    }

    /// Inserts one item, in a write of its own.
    func insert(_ text: String) async throws(RunwayError) {
        try await write { db in try db.execute("INSERT INTO item (text) VALUES (?)", text) }
    }
}

/// Scribbles over `file` and its WAL, as something else writing into them would.
func scribble(over file: URL) throws {
    for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: file.path + suffix) {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file.path + suffix))
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 64 << 10))
        try handle.close()
    }
}
