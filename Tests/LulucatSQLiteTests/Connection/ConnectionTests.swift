// The wrapper's contract: open and close that throw, errors that carry code, message, SQL and file.

import Foundation
import Testing
@testable import LulucatSQLite

@Suite struct ConnectionTests {
    @Test func openFailureNamesTheFileAndCode() throws {
        let dir = TestDirectory()
        let path = dir.path("missing-dir/db.sqlite")
        let error = #expect(throws: SQLiteError.self) { try Connection(path: path) }
        #expect(error?.code == .cantOpen)
        #expect(error?.path == path)
        #expect(error?.description.contains(path) == true)
    }

    @Test func readOnlyOpenOfMissingFileFails() throws {
        let dir = TestDirectory()
        let error = #expect(throws: SQLiteError.self) { try Connection(path: dir.path("none.sqlite"), flags: [.readOnly]) }
        #expect(error?.code == .cantOpen)
        #expect(!FileManager.default.fileExists(atPath: dir.path("none.sqlite")))
    }

    @Test func errorCarriesSQLAndExtendedCode() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        try db.execute("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT UNIQUE)")
        try db.execute("INSERT INTO t(b) VALUES ('x')")
        let sql = "INSERT INTO t(b) VALUES ('x')"
        let error = #expect(throws: SQLiteError.self) { try db.execute(sql) }
        #expect(error?.code == .constraint)
        #expect(error?.extendedCode == 2067)  // SQLITE_CONSTRAINT_UNIQUE
        #expect(error?.sql == sql)
        #expect(error?.message.contains("UNIQUE constraint failed: t.b") == true)
        #expect(error?.path == dir.path("db.sqlite"))
        try db.close()
    }

    @Test func prepareErrorCarriesSQL() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        let error = #expect(throws: SQLiteError.self) { try db.prepare("SELEC 1") }
        #expect(error?.code == .error)
        #expect(error?.sql == "SELEC 1")
        #expect(error?.message.contains("syntax error") == true)
        try db.close()
    }

    @Test func executeNamesTheFailingStatementOfSeveral() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        let error = #expect(throws: SQLiteError.self) {
            try db.execute("CREATE TABLE a(x); INSERT INTO nowhere VALUES (1); CREATE TABLE b(y)")
        }
        #expect(error?.sql == "INSERT INTO nowhere VALUES (1);")
        // The statement before the failure ran, the one after did not.
        #expect(try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name IN ('a', 'b')") == 1)
        try db.close()
    }

    @Test func closeTwiceIsAnError() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        try db.close()
        #expect(db.isClosed)
        let error = #expect(throws: SQLiteError.self) { try db.close() }
        #expect(error?.code == .misuse)
        #expect(throws: SQLiteError.self) { try db.execute("SELECT 1") }
    }

    @Test func closeWithALiveStatementFailsAndKeepsTheConnectionUsable() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        var statement: Statement? = try db.prepare("SELECT 1")
        let error = #expect(throws: SQLiteError.self) { try db.close() }
        #expect(error?.code == .busy)
        #expect(!db.isClosed)
        #expect(try statement?.step() == true)
        statement = nil
        try db.close()
    }

    @Test func notADatabaseIsReportedByTheFirstStatement() throws {
        let dir = TestDirectory()
        let path = dir.path("junk.sqlite")
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        let db = try Connection(path: path)
        let error = #expect(throws: SQLiteError.self) { try db.userVersion() }
        #expect(error?.code == .notADatabase)
        #expect(error?.path == path)
        try db.close()
    }
}
