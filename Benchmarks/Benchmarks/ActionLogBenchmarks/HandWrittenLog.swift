import CSQLite3
import Foundation
import RunwayActionLog

/// What users build by hand: one committed SQLite insert per action, on the caller's thread, on
/// the system's SQLite in WAL mode (as the action log's outbox).
final class HandWrittenLog: @unchecked Sendable {
    // @unchecked Sendable: the benchmark uses it from one task at a time (setup, the measured
    // closure, teardown), never from two at once.
    private let database: OpaquePointer
    private let insert: OpaquePointer

    struct Failure: Error {
        let code: Int32
    }

    init(path: String) throws {
        var database: OpaquePointer?
        guard sqlite3_open(path, &database) == SQLITE_OK, let database else { throw Failure(code: SQLITE_CANTOPEN) }
        let setUp = """
            PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
            CREATE TABLE action (id TEXT PRIMARY KEY, name TEXT, at INTEGER, attributes BLOB)
            """
        var code = sqlite3_exec(database, setUp, nil, nil, nil)
        var insert: OpaquePointer?
        if code == SQLITE_OK { code = sqlite3_prepare_v2(database, "INSERT INTO action VALUES (?, ?, ?, ?)", -1, &insert, nil) }
        guard code == SQLITE_OK, let insert else {
            sqlite3_close(database)
            throw Failure(code: code)
        }
        self.database = database
        self.insert = insert
    }

    deinit {
        sqlite3_finalize(insert)
        sqlite3_close(database)
    }

    /// Inserts `action` in a transaction of its own.
    func record(_ action: UserAction) throws {
        let id = UUID().uuidString
        let attributes = try JSONEncoder().encode(action.attributes)
        guard sqlite3_exec(database, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK else { throw Failure(code: sqlite3_errcode(database)) }
        // Bound without a copy (a nil destructor, SQLITE_STATIC): the bytes live until the step.
        let code = id.withCString { id in
            action.name.withCString { name in
                attributes.withUnsafeBytes { attributes in
                    sqlite3_bind_text(insert, 1, id, -1, nil)
                    sqlite3_bind_text(insert, 2, name, -1, nil)
                    sqlite3_bind_int64(insert, 3, action.millisecondsSince1970)
                    sqlite3_bind_blob(insert, 4, attributes.baseAddress, Int32(attributes.count), nil)
                    defer { sqlite3_reset(insert) }
                    return sqlite3_step(insert)
                }
            }
        }
        guard code == SQLITE_DONE, sqlite3_exec(database, "COMMIT", nil, nil, nil) == SQLITE_OK else {
            sqlite3_exec(database, "ROLLBACK", nil, nil, nil)
            throw Failure(code: code)
        }
    }
}
