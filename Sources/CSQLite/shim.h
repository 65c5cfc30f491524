#ifndef C_SQLITE_SHIM_H
#define C_SQLITE_SHIM_H
/* SQLite 3 (libsqlite3-dev) for the signature journal. */
#include <sqlite3.h>
#endif
