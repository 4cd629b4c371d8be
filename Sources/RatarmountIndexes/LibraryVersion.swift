import CSQLite

/// The version of the SQLite library loaded at run time, such as "3.40.1", for a program's
/// `--version`. Wraps SQLite's `sqlite3_libversion`.
public var sqliteVersion: String { String(cString: sqlite3_libversion()) }
