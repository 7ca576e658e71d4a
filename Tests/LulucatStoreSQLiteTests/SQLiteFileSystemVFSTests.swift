// SQLite through the `FileSystem` seam (SQLiteFileSystemVFS): a database lives entirely on a
// simulated disk, injected I/O errors become SQLite's codes and fail the commit, and the trace
// holds what the crash model needs (the WAL's directory sync on its first sync).

import Foundation
import Testing
import LulucatInk
import LulucatSQLite
@testable import LulucatStore
@testable import LulucatStoreSQLite
import LulucatStoreTesting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("SQLite on the FileSystem seam")
struct SQLiteFileSystemVFSTests {
    init() { Library.enableSQLiteEngine() }
    /// A directory name no real disk has, so that a file appearing under it would be noticed.
    private static func uniqueDirectory() -> String { "/lulucat-simfs-\(UUID().uuidString)" }

    private static func page(_ seed: Int, strokes: Int) -> PageContent {
        PageContent(canvasSize: .letter, elements: (0..<strokes).map { .stroke(makeStroke(seed * 10 + $0)) })
    }

    private static func open(_ path: String, _ fs: SimulatedFileSystem, mode: SQLiteContentStore.OpenMode = .openExisting) throws -> SQLiteContentStore {
        try SQLiteContentStore(path: path, mode: mode, fileSystem: fs)
    }

    @Test("a WAL database is created, written, checkpointed and reopened on the simulated disk only")
    func roundTripOnTheSimulatedDisk() throws {
        let dir = Self.uniqueDirectory()
        let fs = SimulatedFileSystem()
        try fs.makeDirectory(dir)
        let path = dir + "/" + SQLiteContentStore.fileName
        let (a, b) = (UUID(), UUID())
        let (pageA, pageB, extra) = (Self.page(1, strokes: 3), Self.page(2, strokes: 40), makeStroke(77))
        let store = try Self.open(path, fs, mode: .openOrCreate)
        #expect(try store.connection.journalMode() == .wal)
        #expect(try store.connection.synchronous() == .full)
        try store.replacePage(a, with: pageA)
        try store.replacePage(b, with: pageB)
        // Committed in the WAL, which lives on the simulated disk; the index (-shm) is memory only.
        #expect((try fs.info(path + "-wal")?.size ?? 0) > 0)
        #expect(try fs.info(path + "-shm") == nil)
        try store.applyChanges(to: a, [.append([.stroke(extra)])])
        try store.checkpointTruncate()
        #expect(try fs.info(path + "-wal")?.size == 0)
        try store.close()
        // The last close removes the WAL, as SQLite's own VFS does.
        #expect(try fs.info(path + "-wal") == nil)
        #expect(FileManager.default.fileExists(atPath: dir) == false)

        // Reopened from the disk image alone (a fresh file system, a fresh WAL index).
        let again = try Self.open(path, SimulatedFileSystem(tree: fs.snapshot))
        var expectedA = pageA
        expectedA.elements.append(.stroke(extra))
        #expect(try again.loadPage(a) == expectedA)
        #expect(try again.loadPage(b) == pageB)
        #expect(try again.integrityProblems().isEmpty)
        try again.close()
        #expect(FileManager.default.fileExists(atPath: dir) == false)
    }

    @Test("committed frames still in the WAL are read back after a crash (no checkpoint, no close)")
    func walReplayAfterCrash() throws {
        let fs = SimulatedFileSystem()
        try fs.makeDirectory("/d")
        let path = "/d/content.sqlite"
        let page = UUID(), content = Self.page(3, strokes: 5)
        let store = try Self.open(path, fs, mode: .openOrCreate)
        try store.replacePage(page, with: content)
        // The power goes: only what the disk holds now is there, and a new process maps a new index.
        let crashed = SimulatedFileSystem(tree: fs.snapshot)
        store.closeWithoutCheckpoint()
        let reopened = try Self.open(path, crashed)
        #expect(try reopened.loadPage(page) == content)
        try reopened.close()
    }

    @Test("the first sync of a new WAL also syncs its directory")
    func directorySyncOfANewWAL() throws {
        let fs = SimulatedFileSystem()
        try fs.makeDirectory("/d")
        let path = "/d/content.sqlite"
        fs.startRecording()
        let store = try Self.open(path, fs, mode: .openOrCreate)
        try store.replacePage(UUID(), with: Self.page(4, strokes: 2))
        let ops = fs.trace!.operations.map(\.summary)
        let firstWALSync = try #require(ops.firstIndex(of: "fsync \(path)-wal"))
        #expect(ops.firstIndex(of: "create \(path)-wal")! < firstWALSync)
        #expect(ops[firstWALSync + 1] == "fsync directory /d")
        // Only the first: the next commit syncs the WAL alone. (The new database's first
        // transaction, before WAL mode is on, went through a rollback journal: it synced /d too.)
        let directorySyncs = ops.filter { $0 == "fsync directory /d" }.count
        #expect(ops.firstIndex(of: "fsync \(path)-journal").map { ops[$0 + 1] } == "fsync directory /d")
        try store.replacePage(UUID(), with: Self.page(5, strokes: 2))
        let later = fs.trace!.operations.map(\.summary)
        #expect(later.filter { $0 == "fsync directory /d" }.count == directorySyncs)
        #expect(later.filter { $0 == "fsync \(path)-wal" }.count >= 2)
        try store.close()
    }

    /// The SQLite code the VFS gives a failed call of the seam.
    private static func expectedCode(_ call: String, _ errno: Int32) -> Int32? {
        let full: Int32 = 13
        switch call {
        case "write": return errno == EIO ? 10 | (3 << 8) : full         // SQLITE_IOERR_WRITE
        case "fsync", "fdatasync": return errno == EIO ? 10 | (4 << 8) : full  // SQLITE_IOERR_FSYNC
        case "truncate": return errno == EIO ? 10 | (6 << 8) : full     // SQLITE_IOERR_TRUNCATE
        case "fsync directory": return errno == EIO ? 10 | (5 << 8) : full  // SQLITE_IOERR_DIR_FSYNC
        case "read": return 10 | (1 << 8)                                // SQLITE_IOERR_READ
        case "stat": return 10 | (7 << 8)                                // SQLITE_IOERR_FSTAT
        default: return nil
        }
    }

    @Test("I/O errors become SQLite's codes, and a failed commit leaves the previous content",
          arguments: [EIO, ENOSPC])
    func injectedErrors(_ errno: Int32) throws {
        let fs = SimulatedFileSystem()
        try fs.makeDirectory("/d")
        let path = "/d/content.sqlite"
        let page = UUID()
        let before = Self.page(6, strokes: 4), after = Self.page(7, strokes: 30)
        let setUp = try Self.open(path, fs, mode: .openOrCreate)
        try setUp.replacePage(page, with: before)
        try setUp.close()
        let start = fs.snapshot
        var seen: Set<String> = []
        // Every call of a save fails in turn (a store opened before the fault is armed).
        for n in 1...60 {
            let disk = SimulatedFileSystem(tree: start)
            let store = try Self.open(path, disk)
            disk.inject(InjectedFault(operation: n, errno: errno, persistent: true, counting: .all))
            do {
                try store.replacePage(page, with: after)
                disk.clearFault()
                if disk.faultsInjected == 0 { store.closeWithoutCheckpoint(); break }  // past the last call
            } catch {
                disk.clearFault()
                let failed = disk.failedCalls.first!
                seen.insert(failed)
                guard case let .database(_, sqliteError) = error else {
                    Issue.record("call \(n) (\(failed)): \(error) is not a database error")
                    continue
                }
                if let code = Self.expectedCode(failed, errno) {
                    #expect(sqliteError.extendedCode == code, "call \(n) failed \(failed): \(sqliteError)")
                }
            }
            store.closeWithoutCheckpoint()
            // What the disk holds now opens to one whole version: the old one unless the commit got through.
            let reopened = try Self.open(path, SimulatedFileSystem(tree: disk.snapshot))
            let content = try reopened.loadPage(page)
            #expect(content == before || content == after, "call \(n)")
            if disk.faultsInjected > 0 && disk.failedCalls.first == "write" { #expect(content == before, "call \(n)") }
            try reopened.close()
        }
        #expect(seen.contains("write"))
        #expect(seen.contains("fsync") || seen.contains("fdatasync"))
    }
}
