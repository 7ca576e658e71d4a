// Transactions: commit on success, roll back on a throw (rethrowing the first error), and a failed
// COMMIT reported, never swallowed.

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// How a transaction takes its lock (`BEGIN DEFERRED | IMMEDIATE | EXCLUSIVE`).
package enum TransactionKind: String, Sendable {
    case deferred = "DEFERRED"
    /// Takes the write lock at BEGIN, so a busy database fails before any work is done.
    case immediate = "IMMEDIATE"
    case exclusive = "EXCLUSIVE"
}

extension Connection {
    /// Runs `body` inside one transaction.
    ///
    /// ```swift
    /// try db.transaction {
    ///     try db.execute("INSERT INTO t VALUES (1)")
    ///     try db.execute("INSERT INTO t VALUES (2)")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - kind: the lock taken at BEGIN; immediate by default.
    ///   - body: the work. If it throws, the transaction is rolled back and its error rethrown.
    /// - Throws: the first error: BEGIN's, `body`'s, or COMMIT's. When COMMIT fails (a deferred
    ///   constraint, I/O, a full disk) the transaction is rolled back and COMMIT's error thrown.
    package func transaction<R>(_ kind: TransactionKind = .immediate, _ body: () throws -> R) throws -> R {
        try execute("BEGIN \(kind.rawValue) TRANSACTION")
        let result: R
        do {
            result = try body()
        } catch {
            rollbackIgnoringErrors()
            throw error
        }
        do {
            try execute("COMMIT TRANSACTION")
        } catch {
            // Some COMMIT failures leave the transaction open (a deferred foreign key), others have
            // already rolled it back (I/O errors): end it in either case, report COMMIT's error.
            rollbackIgnoringErrors()
            throw error
        }
        return result
    }

    /// Rolls back an open transaction. Its own error is dropped because the caller is already
    /// reporting the error that made it roll back.
    func rollbackIgnoringErrors() {
        guard let handle, sqlite3_get_autocommit(handle) == 0 else { return }
        sqlite3_exec(handle, "ROLLBACK TRANSACTION", nil, nil, nil)
    }
}
