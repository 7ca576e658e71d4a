// LulucatSQLite: a thin wrapper of our own over the system SQLite (GRDB's layering, kept small).
// C module (CSQLite, or SQLite3 on Apple) -> `Connection` and `Statement` (one final class per raw
// handle, not Sendable) -> the storage engine that owns a connection (LulucatStore/SQLiteEngine).
