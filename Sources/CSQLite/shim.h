#ifndef RUNWAY_CSQLITE_SHIM_H
#define RUNWAY_CSQLITE_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro that casts -1 to a function pointer, which Swift cannot import.
// These bind with it: SQLite copies the bytes before returning, so the caller's buffer need
// only live for the call.

/// Binds UTF-8 text; a NULL pointer (an empty Swift string may have no storage) binds "".
static inline int runway_sqlite3_bind_text(sqlite3_stmt *statement, int index, const void *text, sqlite3_uint64 length) {
    return sqlite3_bind_text64(statement, index, text ? (const char *)text : "", length, SQLITE_TRANSIENT, SQLITE_UTF8);
}

/// Binds a blob; an empty one is a zero-length blob (a NULL pointer would bind SQL NULL).
static inline int runway_sqlite3_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, sqlite3_uint64 length) {
    if (length == 0) return sqlite3_bind_zeroblob(statement, index, 0);
    return sqlite3_bind_blob64(statement, index, bytes, length, SQLITE_TRANSIENT);
}

#endif
