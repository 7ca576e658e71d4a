// Transactions commit, roll back on a throw with the first error, and report a failed COMMIT.

import Foundation
import Testing
@testable import LulucatSQLite

private struct Boom: Error, Equatable {}

@Suite struct TransactionTests {
    @Test func commitsOnSuccess() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        try db.execute("CREATE TABLE t(a INTEGER)")
        let value = try db.transaction {
            try db.execute("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)")
            return 42
        }
        #expect(value == 42)
        #expect(db.isAutocommit)
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 2)
    }

    @Test func rollsBackOnThrowAndRethrowsTheFirstError() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        try db.execute("CREATE TABLE t(a INTEGER)")
        #expect(throws: Boom()) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(db.isAutocommit)
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 0)
    }

    @Test func rollsBackOnSQLiteErrorInside() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        try db.execute("CREATE TABLE t(a INTEGER UNIQUE)")
        let error = #expect(throws: SQLiteError.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (1)")
                try db.execute("INSERT INTO t VALUES (1)")
            }
        }
        #expect(error?.code == .constraint)
        #expect(error?.sql == "INSERT INTO t VALUES (1)")
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 0)
    }

    @Test func failedCommitIsReportedAndRolledBack() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        try db.execute("""
            PRAGMA foreign_keys = ON;
            CREATE TABLE parent(id INTEGER PRIMARY KEY);
            CREATE TABLE child(p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
            """)
        // The orphan row is accepted by INSERT and refused only by COMMIT.
        let error = #expect(throws: SQLiteError.self) {
            try db.transaction { try db.execute("INSERT INTO child VALUES (7)") }
        }
        #expect(error?.extendedCode == 787)  // SQLITE_CONSTRAINT_FOREIGNKEY
        #expect(error?.sql == "COMMIT TRANSACTION")
        #expect(db.isAutocommit)
        #expect(try db.scalarInt("SELECT count(*) FROM child") == 0)
    }

    @Test func busyBeginFailsBeforeTheBodyRuns() throws {
        let dir = TestDirectory()
        let path = dir.path("db.sqlite")
        let first = try Connection(path: path)
        try first.setJournalMode(.wal)
        try first.execute("CREATE TABLE t(a INTEGER)")
        let second = try Connection(path: path)
        try first.execute("BEGIN IMMEDIATE")
        var ran = false
        let error = #expect(throws: SQLiteError.self) { try second.transaction { ran = true } }
        #expect(error?.code == .busy)
        #expect(!ran)
        try first.execute("ROLLBACK")
    }
}
