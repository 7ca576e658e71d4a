// The WAL write buffer (CoalescingVFS, docs/sqlite-engine.md §6.1): fewer write() calls, and
// nothing else different: every byte reaches the file, in order, before anyone can look at it.

import Foundation
import Testing
@testable import LulucatSQLite

@Suite struct WALWriteBufferTests {
    /// A WAL database through the VFS, buffer on, with a table of BLOBs.
    private func open(_ path: String, buffer: Int = 65_536, sync: SynchronousLevel = .full,
                      pageSize: Int = 4_096) throws -> Connection {
        let db = try Connection(path: path, vfs: CoalescingVFS.name)
        try db.setPageSize(pageSize)
        try db.setJournalMode(.wal)
        try db.setSynchronous(sync)
        try db.setWALAutocheckpoint(pages: 0)
        try db.execute("CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        try db.setWALWriteBuffer(bytes: buffer)
        return db
    }

    private func blob(_ k: Int, _ generation: Int = 0, size: Int = 20_000) -> [UInt8] {
        var x = UInt32(truncatingIfNeeded: k &* 2_654_435_761 &+ generation &* 40_503 &+ 1)
        return (0..<size).map { _ in x ^= x << 13; x ^= x >> 17; x ^= x << 5; return UInt8(truncatingIfNeeded: x) }
    }

    private func insert(_ db: Connection, _ keys: Range<Int>, generation: Int = 0, size: Int = 20_000) throws {
        let statement = try db.prepare("INSERT OR REPLACE INTO t(k, v) VALUES (?, ?)")
        for k in keys {
            try statement.bind(Int64(k), at: 1)
            try statement.bind(blob(k, generation, size: size), at: 2)
            try statement.run()
        }
    }

    /// Every row of `t`, read through a fresh connection on SQLite's default VFS.
    private func rows(_ path: String) throws -> [Int: [UInt8]] {
        let db = try Connection(path: path, flags: [.readWrite])
        defer { try? db.close() }
        #expect(try db.quickCheck() == [])
        let statement = try db.prepare("SELECT k, v FROM t ORDER BY k")
        var out: [Int: [UInt8]] = [:]
        while try statement.step() {
            out[Int(statement.int64(at: 0))] = statement.withBlob(at: 1) { Array($0) }
        }
        return out
    }

    @Test func theSettingIsClampedAndReadBack() throws {
        let dir = TestDirectory()
        let db = try open(dir.path("db.sqlite"), buffer: 0)
        #expect(try db.walWriteBuffer() == 0)
        #expect(try db.setWALWriteBuffer(bytes: 32_768) == 32_768)
        #expect(try db.setWALWriteBuffer(bytes: 10 << 20) == 65_536)  // the unix VFS's write limit
        #expect(try db.walWriteBuffer() == 65_536)
        #expect(try db.setWALWriteBuffer(bytes: -5) == 0)
        try db.close()
    }

    @Test func aConnectionOnTheDefaultVFSHasNoBuffer() throws {
        let dir = TestDirectory()
        let db = try Connection(path: dir.path("db.sqlite"))
        let error = #expect(throws: SQLiteError.self) { try db.setWALWriteBuffer(bytes: 65_536) }
        #expect(error?.code == .notFound)
        #expect(error?.message.contains(CoalescingVFS.name) == true)
        #expect(throws: SQLiteError.self) { try db.walWriteStatistics() }
        try db.close()
    }

    @Test func aBigCommitReachesTheFileInFewWrites() throws {
        let dir = TestDirectory()
        let path = dir.path("db.sqlite")
        let db = try open(path)
        let before = try db.walWriteStatistics()
        try db.transaction { try insert(db, 0..<100) }  // 2 MB: about 500 frames, 1,000 xWrite calls
        let after = try db.walWriteStatistics()
        let calls = after.writeCalls - before.writeCalls, writes = after.fileWrites - before.fileWrites
        #expect(calls > 900)
        // 2 MB in 64 KiB pieces: about 32 writes, not one a frame header and one a page.
        #expect(writes < calls / 15)
        #expect(after.writeBytes - before.writeBytes > 2_000_000)
        #expect(after.barrierFlushes == 0)  // FULL syncs before publishing: the buffer is empty by then
        // Every byte SQLite wrote is in the WAL file before COMMIT returned.
        #expect(Int(after.writeBytes) >= fileSize(path + "-wal") ?? 0)
        let seen = try rows(path)  // another connection, the default VFS, while this one is open
        #expect(seen.count == 100)
        #expect(seen[37] == blob(37))
        try db.close()
        #expect(try rows(path) == Dictionary(uniqueKeysWithValues: (0..<100).map { ($0, blob($0)) }))
    }

    @Test func withoutTheSettingEveryWriteGoesStraightThrough() throws {
        let dir = TestDirectory()
        let db = try open(dir.path("db.sqlite"), buffer: 0)
        let before = try db.walWriteStatistics()
        try db.transaction { try insert(db, 0..<20) }
        let after = try db.walWriteStatistics()
        #expect(after.writeCalls - before.writeCalls == after.fileWrites - before.fileWrites)
        #expect(after.writeCalls > before.writeCalls)
        try db.close()
    }

    /// A cache of a few pages: dirty pages spill into the WAL in the middle of the transaction and
    /// SQLite reads them back from it (through the buffer's write-out), some rewritten in place.
    @Test func spilledPagesAreReadBackAndRewrittenCorrectly() throws {
        let dir = TestDirectory()
        let path = dir.path("db.sqlite")
        let db = try open(path)
        try db.setCacheSize(10)  // pages, not KiB
        var expected: [Int: [UInt8]] = [:]
        try db.transaction {
            for generation in 0..<3 {
                try insert(db, 0..<60, generation: generation, size: 3_000 + 500 * generation)
                for k in 0..<60 { expected[k] = blob(k, generation, size: 3_000 + 500 * generation) }
            }
            try db.execute("DELETE FROM t WHERE k % 7 = 3")
        }
        for k in expected.keys where k % 7 == 3 { expected[k] = nil }
        // Read back inside this connection too (pages now come from the WAL, not the cache).
        do {
            let check = try db.prepare("SELECT count(*), sum(length(v)) FROM t")
            _ = try check.step()
            #expect(Int(check.int64(at: 0)) == expected.count)
            #expect(Int(check.int64(at: 1)) == expected.values.reduce(0) { $0 + $1.count })
        }
        try db.close()
        #expect(try rows(path) == expected)
    }

    /// A page spilled into the WAL a moment ago is still in the buffer when SQLite reads it back:
    /// the read must see it (the buffer is written out first), not the file's old bytes.
    @Test func aPageReadBackRightAfterItSpilledIsTheOneWritten() throws {
        let dir = TestDirectory()
        let path = dir.path("db.sqlite")
        let db = try open(path)
        try db.setCacheSize(4)
        try db.transaction {
            for round in 0..<8 {
                // 40 KB: ten overflow pages; the cache of four spills them as they are written.
                try insert(db, round..<(round + 1), generation: round, size: 40_000)
                let read = try db.prepare("SELECT v FROM t WHERE k = ?")
                try read.bind(Int64(round), at: 1)
                #expect(try read.step())
                #expect(read.withBlob(at: 0) { Array($0) } == blob(round, round, size: 40_000))
            }
        }
        try db.close()
        #expect(try rows(path) == Dictionary(uniqueKeysWithValues: (0..<8).map { ($0, blob($0, $0, size: 40_000)) }))
    }

    /// A transaction rolled back after its pages spilled into the WAL (through the buffer) leaves
    /// nothing of itself, and the next commit overwrites those frames correctly.
    @Test func aRollbackAfterSpillingLeavesNoTrace() throws {
        let dir = TestDirectory()
        let path = dir.path("db.sqlite")
        let db = try open(path)
        try db.setCacheSize(10)
        try db.transaction { try insert(db, 0..<10) }
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try db.transaction {
                try insert(db, 10..<80, size: 9_000)
                throw Abort()
            }
        }
        try db.transaction { try insert(db, 80..<90) }
        try db.close()
        var expected: [Int: [UInt8]] = [:]
        for k in Array(0..<10) + Array(80..<90) { expected[k] = blob(k) }
        #expect(try rows(path) == expected)
    }

    /// After a checkpoint the next commit starts the WAL over from its first frame: a write that
    /// goes back in the file, which the buffer must not reorder with what it holds.
    @Test func walRestartsAfterCheckpointsKeepEveryCommit() throws {
        let dir = TestDirectory()
        let path = dir.path("db.sqlite")
        let db = try open(path)
        try db.setJournalSizeLimit(bytes: 200_000)
        var expected: [Int: [UInt8]] = [:]
        for round in 0..<6 {
            try db.transaction { try insert(db, (round * 10)..<(round * 10 + 15), generation: round) }
            for k in (round * 10)..<(round * 10 + 15) { expected[k] = blob(k, round) }
            if round % 2 == 0 { _ = try db.walCheckpoint(.passive) } else { try db.checkpoint(.truncate) }
            #expect(try rows(path) == expected)
        }
        try db.close()
        #expect(try rows(path) == expected)
    }

    /// Under synchronous NORMAL a commit has no sync before it is published: the buffer is written
    /// out at the WAL index barrier, so another connection sees the commit at once. (The engine
    /// does not buffer under NORMAL; this is the VFS's own safety net.)
    @Test func aCommitWithoutSyncIsWrittenOutBeforeItIsPublished() throws {
        let dir = TestDirectory()
        let path = dir.path("db.sqlite")
        let db = try open(path, sync: .normal)
        try db.transaction { try insert(db, 0..<3, size: 500) }  // small: stays in the buffer until published
        let stats = try db.walWriteStatistics()
        #expect(stats.barrierFlushes >= 1)
        #expect(try rows(path).count == 3)
        try db.close()
    }

    /// Turning the buffer off while it holds frames writes them out then, not later.
    @Test func turningTheBufferOffWritesOutWhatItHolds() throws {
        let dir = TestDirectory()
        let path = dir.path("db.sqlite")
        let db = try open(path)
        try db.setCacheSize(10)
        try db.execute("BEGIN IMMEDIATE")
        try insert(db, 0..<40, size: 5_000)  // spills: frames sit in the buffer
        let walBefore = fileSize(path + "-wal") ?? 0
        let written = try db.walWriteStatistics().writeBytes
        try db.setWALWriteBuffer(bytes: 0)
        #expect(fileSize(path + "-wal") ?? 0 >= Int(written))
        #expect(fileSize(path + "-wal") ?? 0 >= walBefore)
        try db.execute("COMMIT")
        try db.close()
        #expect(try rows(path).count == 40)
    }

    /// A database opened through the VFS is an ordinary SQLite file: the default VFS reads it, and
    /// a crash's WAL left behind is recovered by either.
    @Test func theFilesAreOrdinarySQLiteFiles() throws {
        let dir = TestDirectory()
        let path = dir.path("db.sqlite")
        let db = try open(path, pageSize: 16_384)
        try db.transaction { try insert(db, 0..<30) }
        // Pages spilled, then changed again in the same transaction: SQLite rewrites their frames
        // in place and, at COMMIT, reads the frames back to redo the checksums a recovery checks.
        try db.setCacheSize(3)
        try db.transaction {
            for generation in 1...3 { try insert(db, 0..<30, generation: generation, size: 20_000 + generation) }
        }
        // Copy the database and its WAL while the writer is open, as a crash would leave them.
        let copy = dir.path("copy.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        try db.close()
        let expected = Dictionary(uniqueKeysWithValues: (0..<30).map { ($0, blob($0, 3, size: 20_003)) })
        #expect(try rows(copy) == expected)  // recovered from the copied WAL: checksums verified
        #expect(try rows(path) == expected)
    }
}
