#ifndef C_SQLITE_SHIMS_H
#define C_SQLITE_SHIMS_H
/* One-line wrappers for SQLite macros Swift cannot import (SQLITE_TRANSIENT is a cast pointer). */
#include <sqlite3.h>

int CSQLiteShims_bind_text_transient(sqlite3_stmt *statement, int index, const char *text, int length);
int CSQLiteShims_bind_blob_transient(sqlite3_stmt *statement, int index, const void *bytes, int length);

#endif
