import ByteStreams
import CSQLite

/// A read-only SQLite database held in memory, made from a file's bytes that the caller read
/// itself or that are read from a descriptor the caller opened and checked (with a size bound):
/// SQLite never opens a path, so the file cannot be swapped between the checks and the read,
/// and no `-journal` or `-wal` file beside it is ever looked at or rolled back. The bytes go
/// into one buffer from `sqlite3_malloc64`, which SQLite then owns, and are deserialized
/// read-only: a file read from a descriptor is held once, never also as a Swift array.
///
/// The database is treated as hostile, as SQLite's "Defense Against The Dark Arts"
/// (sqlite.org/security.html) advises: defensive mode on, schema-borne SQL untrusted (a view
/// or trigger may call only innocuous functions), every length bounded by `maximumLength`.
/// Corrupt pages are SQLite's `SQLITE_CORRUPT`, reported as a ``RatarmountIndexError``.
///
/// Ownership: the snapshot owns its connection and closes it in `deinit`. Calls block while
/// SQLite reads memory. Not thread-safe: one thread at a time.
final class SQLiteSnapshot {
    private let connection: OpaquePointer

    /// A read-only database of `bytes` (a whole SQLite 3 database file).
    /// - Parameters:
    ///   - bytes: The file's bytes; copied.
    ///   - maximumLength: The largest string or blob a query may return, in bytes.
    /// - Throws: ``RatarmountIndexError`` when SQLite refuses the bytes or cannot allocate.
    /// Wraps SQLite's `sqlite3_open_v2` (an empty in-memory database, `SQLITE_OPEN_READONLY`) and
    /// `sqlite3_deserialize` (`SQLITE_DESERIALIZE_READONLY`).
    convenience init(bytes: [UInt8], maximumLength: Int) throws(RatarmountIndexError) {
        do {
            try self.init(count: bytes.count, maximumLength: maximumLength) { buffer in
                bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                return bytes.count
            }
        } catch let error as RatarmountIndexError {
            throw error
        } catch {
            // The copy above throws nothing.
            throw RatarmountIndexError(reason: "\(error)")
        }
    }

    /// A read-only database of the file `descriptor` (a whole SQLite 3 database file of `count`
    /// bytes, as `fstat(2)` gave it), read with `pread(2)` from byte 0 straight into SQLite's
    /// memory. A file that is shorter by then is taken as it is; bytes past `count` are not read.
    /// - Parameters:
    ///   - descriptor: Open for reading; not closed (the caller owns it); its offset is not used.
    ///   - path: The file's name, for read errors.
    ///   - maximumLength: The largest string or blob a query may return, in bytes.
    /// - Throws: ``RatarmountIndexError`` when SQLite refuses the bytes or cannot allocate;
    ///   `ByteStreamError` when the read fails.
    /// Blocks while it reads. Wraps `pread(2)`, SQLite's `sqlite3_malloc64`, `sqlite3_open_v2`
    /// and `sqlite3_deserialize`.
    convenience init(descriptor: Int32, count: Int, path: String, maximumLength: Int) throws {
        try self.init(count: count, maximumLength: maximumLength) { buffer in
            var done = 0
            while done < count {
                let read = try SystemCalls.read(descriptor, buffer + done, count - done, at: Int64(done), target: path)
                if read == 0 { break }
                done += read
            }
            return done
        }
    }

    /// Opens an empty read-only connection, fills a `count`-byte buffer from `sqlite3_malloc64`
    /// with `fill` (which returns how many bytes it wrote) and hands the buffer to SQLite
    /// (`SQLITE_DESERIALIZE_FREEONCLOSE`: freed here when `fill` throws, by SQLite from then on).
    private init(count: Int, maximumLength: Int, fill: (UnsafeMutableRawPointer) throws -> Int) throws {
        var opened: OpaquePointer?
        // Read-only from the start; the deserialized database is read-only too.
        let flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_MEMORY | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(":memory:", &opened, flags, nil)
        guard status == SQLITE_OK, let opened else {
            if let opened { sqlite3_close_v2(opened) }
            throw RatarmountIndexError(reason: "SQLite cannot open a database (\(String(cString: sqlite3_errstr(status))))")
        }
        connection = opened
        _ = csqlite_enable_defensive(connection)
        _ = csqlite_distrust_schema(connection)
        let bound = Int32(clamping: max(maximumLength, 1024))
        sqlite3_limit(connection, SQLITE_LIMIT_LENGTH, bound)
        sqlite3_limit(connection, SQLITE_LIMIT_SQL_LENGTH, 1 << 20)
        sqlite3_limit(connection, SQLITE_LIMIT_ATTACHED, 0)
        guard count > 0, let buffer = sqlite3_malloc64(sqlite3_uint64(count)) else {
            throw RatarmountIndexError(reason: count == 0 ? "an empty file, not an SQLite database"
                : "SQLite cannot allocate \(count) bytes")
        }
        let length: Int
        do {
            length = try fill(buffer)
        } catch {
            sqlite3_free(buffer)
            throw error
        }
        guard length > 0 else {
            sqlite3_free(buffer)
            throw RatarmountIndexError(reason: "an empty file, not an SQLite database")
        }
        // A database in WAL mode (file format versions 2 at bytes 18-19, SQLite's file format
        // §1.3.9) would need its -wal file, which is never opened: in this private read-only
        // copy it is read as a rollback-journal database, whose pages are the same.
        let header = buffer.assumingMemoryBound(to: UInt8.self)
        if length > 19, header[18] == 2, header[19] == 2 {
            header[18] = 1
            header[19] = 1
        }
        // FREEONCLOSE: SQLite owns the buffer from here, also when this call fails.
        let deserialize = sqlite3_deserialize(connection, "main", header, sqlite3_int64(length), sqlite3_int64(count),
                                              UInt32(SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY))
        guard deserialize == SQLITE_OK else {
            throw RatarmountIndexError(reason: "not an SQLite database (\(message(deserialize)))")
        }
        // The header is only read when the first statement runs: an unreadable file is said here.
        try rows("SELECT count(*) FROM sqlite_schema", table: "sqlite_schema") { _ throws(RatarmountIndexError) in }
    }

    deinit {
        sqlite3_close_v2(connection)
    }

    /// SQLite's text for `status` and the connection's last error.
    private func message(_ status: Int32) -> String {
        let detail = String(cString: sqlite3_errmsg(connection))
        let name = String(cString: sqlite3_errstr(status))
        return detail == name ? name : "\(name): \(detail)"
    }

    /// Whether `name` is a `"table"`, a `"view"` (or another schema object kind), or `nil`
    /// when the database has nothing of that name. A table is one whose rows are stored: a
    /// virtual table (its module's code runs on every read) or a column computed on each read
    /// (a generated `VIRTUAL` column, `PRAGMA table_xinfo`'s hidden 1 or 2) is refused, since a
    /// hostile schema could make each row's value cost seconds of CPU within every limit.
    /// - Parameter name: One of this module's table names (letters only: it is written into the query).
    /// - Throws: ``RatarmountIndexError`` when the schema cannot be read, names it twice, or
    ///   computes a table's rows or columns.
    func kind(of name: String) throws(RatarmountIndexError) -> String? {
        precondition(name.utf8.allSatisfy { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") })
        var found: String?
        var isVirtual = false
        try rows("SELECT type, sql FROM sqlite_schema WHERE name = '\(name)'", table: "sqlite_schema") { row throws(RatarmountIndexError) in
            guard found == nil else { throw row.fault("two schema objects named \(name)") }
            found = try row.text(0, "type").map { String(decoding: $0, as: UTF8.self) }
            let sql = try row.text(1, "sql").map { String(decoding: $0, as: UTF8.self) } ?? ""
            isVirtual = sql.split(whereSeparator: \.isWhitespace).prefix(2).map { $0.uppercased() } == ["CREATE", "VIRTUAL"]
        }
        guard found == "table" else { return found }
        if isVirtual { throw RatarmountIndexError(reason: "a virtual table, whose rows are computed", table: name) }
        try rows("PRAGMA table_xinfo(\(name))", table: name) { row throws(RatarmountIndexError) in
            // Hidden 0: stored; 3: generated and stored (computed when written, read as stored).
            let hidden = try row.integer(6, "hidden")
            guard hidden == 0 || hidden == 3 else {
                let column = try row.text(1, "name").map { String(decoding: $0, as: UTF8.self) } ?? "?"
                throw row.fault("column \(column) is computed on every read")
            }
        }
        return found
    }

    /// Runs `sql` (a query of this module's, never text from the database) and calls `body`
    /// with each result row, in SQLite's order.
    /// - Parameter table: The table named in errors.
    /// - Throws: ``RatarmountIndexError`` naming `table` (and the row) for SQLite's failures
    ///   (a missing table or column, corrupt pages, a value over the length limit) and what
    ///   `body` throws.
    /// Wraps SQLite's `sqlite3_prepare_v2`, `sqlite3_step` and `sqlite3_finalize`.
    func rows(_ sql: String, table: String, _ body: (SQLiteRow) throws(RatarmountIndexError) -> Void)
        throws(RatarmountIndexError) {
        var statement: OpaquePointer?
        let prepared = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        guard prepared == SQLITE_OK, let statement else {
            throw RatarmountIndexError(reason: message(prepared), table: table)
        }
        defer { sqlite3_finalize(statement) }
        var number = 0
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { return }
            guard step == SQLITE_ROW else {
                throw RatarmountIndexError(reason: message(step), table: table, row: number + 1)
            }
            number += 1
            try body(SQLiteRow(statement: statement, table: table, number: number))
        }
    }
}

/// One result row of ``SQLiteSnapshot/rows(_:table:_:)``, valid only inside its call: each
/// value read with its type checked (SQLite's columns take any type whatever they declare).
struct SQLiteRow {
    let statement: OpaquePointer
    let table: String
    /// The row's place in the result, from 1: what errors name.
    let number: Int

    /// An error at this row: `detail` says what is wrong.
    func fault(_ detail: String) -> RatarmountIndexError {
        RatarmountIndexError(reason: detail, table: table, row: number)
    }

    /// Whether column `index` is NULL.
    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(statement, index) == SQLITE_NULL }

    /// The type's name for messages.
    private func typeName(_ index: Int32) -> String {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: "an integer"
        case SQLITE_FLOAT: "a real number"
        case SQLITE_TEXT: "text"
        case SQLITE_BLOB: "a blob"
        default: "NULL"
        }
    }

    /// Column `index` (named `name` in errors), which must be an INTEGER.
    /// - Throws: ``RatarmountIndexError`` for any other type.
    /// Wraps SQLite's `sqlite3_column_int64`.
    func integer(_ index: Int32, _ name: String) throws(RatarmountIndexError) -> Int64 {
        guard sqlite3_column_type(statement, index) == SQLITE_INTEGER else {
            throw fault("\(name) is \(typeName(index)), not an integer")
        }
        return sqlite3_column_int64(statement, index)
    }

    /// Column `index`, an INTEGER or a REAL, as a `Double`.
    /// Wraps SQLite's `sqlite3_column_double`.
    func number(_ index: Int32, _ name: String) throws(RatarmountIndexError) -> Double {
        let type = sqlite3_column_type(statement, index)
        guard type == SQLITE_INTEGER || type == SQLITE_FLOAT else {
            throw fault("\(name) is \(typeName(index)), not a number")
        }
        return sqlite3_column_double(statement, index)
    }

    /// Column `index`'s bytes when it is TEXT (UTF-8, as stored); `nil` for NULL.
    /// - Throws: ``RatarmountIndexError`` for an integer, real or blob.
    /// Wraps SQLite's `sqlite3_column_text` and `sqlite3_column_bytes`.
    func text(_ index: Int32, _ name: String) throws(RatarmountIndexError) -> [UInt8]? {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_NULL: return nil
        case SQLITE_TEXT:
            guard let pointer = sqlite3_column_text(statement, index) else { return [] }
            return Array(UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(statement, index))))
        default: throw fault("\(name) is \(typeName(index)), not text")
        }
    }

    /// Column `index`'s bytes when it is a BLOB.
    /// - Throws: ``RatarmountIndexError`` for any other type.
    /// Wraps SQLite's `sqlite3_column_blob` and `sqlite3_column_bytes`.
    func blob(_ index: Int32, _ name: String) throws(RatarmountIndexError) -> [UInt8] {
        guard sqlite3_column_type(statement, index) == SQLITE_BLOB else {
            throw fault("\(name) is \(typeName(index)), not a blob")
        }
        let count = Int(sqlite3_column_bytes(statement, index))
        guard count > 0, let pointer = sqlite3_column_blob(statement, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
