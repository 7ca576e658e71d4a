// WAL pragmas, the checked TRUNCATE checkpoint, and the backup API.

import Foundation
import Testing
@testable import LulucatSQLite

@Suite struct WALTests {
    private func filled(_ path: String) throws -> Connection {
        let db = try Connection(path: path)
        try db.setJournalMode(.wal)
        try db.setSynchronous(.full)
        try db.setWALAutocheckpoint(pages: 0)
        try db.execute("CREATE TABLE t(a INTEGER, b BLOB)")
        let insert = try db.prepare("INSERT INTO t VALUES (?, ?)")
        try db.transaction {
            for i in 0..<50 {
                try insert.bind(Int64(i), at: 1)
                try insert.bind([UInt8](repeating: UInt8(i), count: 10_000), at: 2)
                try insert.run()
            }
        }
        return db
    }

    @Test func pragmasApply() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        try db.setPageSize(16384)
        try db.setJournalMode(.wal)
        try db.setSynchronous(.normal)
        try db.setUserVersion(7)
        try db.setBusyTimeout(milliseconds: 100)
        try db.execute("CREATE TABLE t(a)")
        #expect(try db.journalMode() == .wal)
        #expect(try db.synchronous() == .normal)
        #expect(try db.userVersion() == 7)
        #expect(try db.pageSize() == 16384)
        #expect(try db.quickCheck() == [])
    }

    @Test func walIsRefusedInMemoryAndSaysSo() throws {
        let db = try Connection(path: ":memory:")
        let error = #expect(throws: SQLiteError.self) { try db.setJournalMode(.wal) }
        #expect(error?.message.contains("memory") == true)
    }

    @Test func checkpointTruncateEmptiesTheWAL() throws {
        let dir = TestDirectory()
        let path = dir.path("db.sqlite")
        let db = try filled(path)
        #expect((fileSize(path + "-wal") ?? 0) > 500_000)
        let result = try db.checkpoint(.truncate)
        #expect(result == CheckpointResult(busy: 0, logFrames: 0, checkpointedFrames: 0))
        #expect(fileSize(path + "-wal") == 0)

        // The database file alone holds everything: copy only it and read it back.
        let copy = dir.path("copy.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let other = try Connection(path: copy, flags: [.readOnly])
        #expect(try other.scalarInt("SELECT sum(length(b)) FROM t") == 500_000)
        try other.close()
        try db.close()
    }

    @Test func checkpointBlockedByAReaderThrowsBusy() throws {
        let dir = TestDirectory()
        let path = dir.path("db.sqlite")
        let db = try filled(path)
        let reader = try Connection(path: path)
        let read = try reader.prepare("SELECT a FROM t")
        try reader.execute("BEGIN")
        #expect(try read.step())  // holds a read snapshot on the WAL
        try db.execute("INSERT INTO t VALUES (99, x'00')")
        let error = #expect(throws: SQLiteError.self) { try db.checkpoint(.truncate) }
        #expect(error?.code == .busy)
        #expect(error?.message.contains("checkpoint incomplete") == true)
        try read.reset()
        try reader.execute("COMMIT")
        try db.checkpoint(.truncate)
        #expect(fileSize(path + "-wal") == 0)
    }

    @Test func checkpointOutsideWALIsAnError() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        try db.execute("CREATE TABLE t(a)")
        let error = #expect(throws: SQLiteError.self) { try db.checkpoint(.truncate) }
        #expect(error?.message.contains("not in WAL mode") == true)
    }

    @Test func backupMakesOneFileCopyIncludingWALContent() throws {
        let dir = TestDirectory()
        let path = dir.path("db.sqlite")
        let db = try filled(path)
        let copy = dir.path("backup.sqlite")
        try db.backup(to: copy)
        #expect(!FileManager.default.fileExists(atPath: copy + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: copy + "-journal"))
        let other = try Connection(path: copy, flags: [.readOnly])
        #expect(try other.journalMode() == .delete)
        #expect(try other.scalarInt("SELECT count(*) FROM t") == 50)
        #expect(try other.scalarInt("SELECT sum(length(b)) FROM t") == 500_000)
        try other.close()
        try db.close()
    }

    @Test func backupToUnwritablePlaceFailsAndLeavesNothing() throws {
        let dir = TestDirectory()
        let db = try filled(dir.path("db.sqlite"))
        let error = #expect(throws: SQLiteError.self) { try db.backup(to: dir.path("no/such/dir/x.sqlite")) }
        #expect(error?.code == .cantOpen)
        try db.close()
    }
}
