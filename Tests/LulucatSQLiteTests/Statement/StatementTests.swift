// Typed binds and column reads round trip exactly, BLOBs with and without copies.

import Foundation
import Testing
@testable import LulucatSQLite

@Suite struct StatementTests {
    @Test func bindsRoundTrip() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        try db.execute("CREATE TABLE v(i INTEGER, d REAL, s TEXT, b BLOB, c BLOB, e BLOB, n)")
        let insert = try db.prepare("INSERT INTO v VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
        #expect(insert.parameterCount == 7)
        let blob: [UInt8] = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let noCopy: [UInt8] = [0, 1, 2, 0xFF, 0]
        try insert.bind(Int64.min, at: 1)
        try insert.bind(-0.125, at: 2)
        try insert.bind("héllo\u{0}wörld", at: 3)
        try insert.bind(blob, at: 4)
        try insert.bind(Data(), at: 6)
        try insert.bindNull(at: 7)
        try insert.withBlob(noCopy, at: 5) { try insert.run() }

        let select = try db.prepare("SELECT i, d, s, b, c, e, n FROM v")
        #expect(try select.step())
        #expect(select.int64(at: 0) == Int64.min)
        #expect(select.double(at: 1) == -0.125)
        #expect(select.string(at: 2) == "héllo\u{0}wörld")
        #expect(select.bytes(at: 3) == blob)
        #expect(select.withBlob(at: 4) { Array($0) } == noCopy)
        #expect(select.columnType(at: 5) == .blob)  // an empty BLOB stays a BLOB, not NULL
        #expect(select.bytes(at: 5) == [])
        #expect(select.isNull(at: 6))
        #expect(select.columnName(at: 3) == "b")
        #expect(try !select.step())
    }

    @Test func resetRunsAgainWithNewBindings() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        try db.execute("CREATE TABLE t(a INTEGER)")
        let insert = try db.prepare("INSERT INTO t VALUES (?)")
        for i in 1...5 {
            try insert.bind(Int64(i), at: 1)
            try insert.run()
        }
        #expect(db.changes == 1)
        #expect(db.lastInsertRowID == 5)
        #expect(try db.scalarInt("SELECT sum(a) FROM t") == 15)
    }

    @Test func withBlobClearsTheBindingAfterTheClosure() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        let echo = try db.prepare("SELECT ?1")
        try echo.withBlob([9, 8, 7], at: 1) { () throws in
            #expect(try echo.step())
            #expect(echo.bytes(at: 0) == [9, 8, 7])
        }
        // The borrowed bytes are gone: the parameter is NULL now, never a dangling pointer.
        #expect(try echo.step())
        #expect(echo.isNull(at: 0))
    }

    @Test func stepErrorCarriesSQL() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        try db.execute("CREATE TABLE t(a INTEGER NOT NULL)")
        let insert = try db.prepare("INSERT INTO t VALUES (?)")
        let error = #expect(throws: SQLiteError.self) { try insert.run() }
        #expect(error?.extendedCode == 1299)  // SQLITE_CONSTRAINT_NOTNULL
        #expect(error?.sql == "INSERT INTO t VALUES (?)")
        // The statement is usable again after the failure.
        try insert.bind(Int64(3), at: 1)
        try insert.run()
        #expect(try db.scalarInt("SELECT a FROM t") == 3)
    }

    @Test func bindOutOfRangeIsAnError() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        let statement = try db.prepare("SELECT ?1")
        let error = #expect(throws: SQLiteError.self) { try statement.bind(Int64(1), at: 2) }
        #expect(error?.code == .range)
        #expect(error?.sql == "SELECT ?1")
    }
}
