#ifndef GZSTREAM_CSQLITE_SHIM_H
#define GZSTREAM_CSQLITE_SHIM_H

#include <sqlite3.h>

// sqlite3_db_config is variadic, which Swift cannot call: these wrappers set the two options a
// reader of an untrusted database turns on ("Defense Against The Dark Arts", sqlite.org/security.html).
static inline int csqlite_enable_defensive(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
}

static inline int csqlite_distrust_schema(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)0);
}

#endif
