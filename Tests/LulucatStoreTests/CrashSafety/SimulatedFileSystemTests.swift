// The simulated file system and its crash model: that it finds the bugs it exists to find
// (a rename before the data is synced, a missing directory sync), injects faults as asked, and
// counts opens.

import Foundation
import Testing
@testable import LulucatStore
#if canImport(Glibc)
import Glibc
import LulucatStoreTesting
#endif

@Suite("Simulated file system")
struct SimulatedFileSystemTests {
    /// Every crash state of `body` run on a disk holding `/d/f` = "old", as (prefix, content of /d/f or nil).
    static func outcomes(_ body: (SimulatedFileSystem) throws -> Void) async throws -> [(Int, [UInt8]?)] {
        let fs = SimulatedFileSystem()
        try fs.put("/d/f", Array("old".utf8))
        fs.startRecording()
        try body(fs)
        let trace = try #require(fs.trace)
        var out: [(Int, [UInt8]?)] = []
        await CrashStates.enumerate(base: trace.base, operations: trace.operations, limits: .bounded) { state in
            let after = SimulatedFileSystem(tree: state.tree)
            out.append((state.prefix, try? after.readFile("/d/f")))
        }
        return out
    }

    @Test("writeAtomically: after a crash the file is wholly old or wholly new, and new once it returned")
    func atomicWriteIsAtomic() async throws {
        var returnedAt = 0
        let states = try await Self.outcomes { fs in
            try fs.writeAtomically(Array("new!".utf8), to: "/d/f")
            returnedAt = fs.recordedCount
        }
        #expect(states.count > 10)
        for (prefix, content) in states {
            #expect(content == Array("old".utf8) || content == Array("new!".utf8), "after \(prefix) operations: \(String(describing: content))")
            if prefix >= returnedAt { #expect(content == Array("new!".utf8)) }
        }
    }

    @Test("a rename before the data is synced can expose a torn or zeroed file")
    func renameBeforeSyncIsCaught() async throws {
        let states = try await Self.outcomes { fs in
            let fd = try fs.open("/d/tmp", .createExclusive)
            try Array("new!".utf8).withUnsafeBytes { raw in Result { () throws(FileError) in try fs.write(fd, raw) } }.get()
            try fs.close(fd)  // no fsync: the bug ALICE found most often
            try fs.rename("/d/tmp", to: "/d/f")
            try fs.syncDirectory("/d")
        }
        #expect(states.contains { $0.1 == Array("ne".utf8) + [0, 0] })
        #expect(states.contains { $0.1 == [] })
        #expect(states.contains { $0.1 == Array("ne".utf8) })
    }

    @Test("a file created without a directory sync can vanish even after its fsync")
    func missingDirectorySyncIsCaught() async throws {
        let states = try await Self.outcomes { fs in
            try fs.removeIfPresent("/d/f")
            try fs.syncDirectory("/d")
            let fd = try fs.open("/d/f", .createExclusive)
            try Array("new".utf8).withUnsafeBytes { raw in Result { () throws(FileError) in try fs.write(fd, raw) } }.get()
            try fs.sync(fd)
            try fs.close(fd)
        }
        let final = states.filter { $0.0 == states.map(\.0).max() }
        #expect(final.contains { $0.1 == nil })
        #expect(final.contains { $0.1 == Array("new".utf8) })
    }

    @Test("faults: the N-th call fails once, or from then on; a full disk still takes half a write")
    func faultInjection() throws {
        let fs = SimulatedFileSystem()
        try fs.makeDirectory("/d")
        fs.inject(InjectedFault(operation: 2, errno: ENOSPC, counting: .mutating))
        let fd = try fs.open("/d/a", .createExclusive)  // mutating call 1
        #expect(throws: FileError.self) {
            try [UInt8](repeating: 7, count: 10).withUnsafeBytes { raw in Result { () throws(FileError) in try fs.write(fd, raw) } }.get()
        }
        #expect(fs.snapshot.walk().first { $0.0 == "/d/a" }?.1.data == [UInt8](repeating: 7, count: 5))
        try fs.sync(fd)  // call 3: the fault fired once
        fs.inject(InjectedFault(operation: 1, errno: EIO, persistent: true))
        #expect(throws: FileError.self) { try fs.sync(fd) }
        #expect(throws: FileError.self) { _ = try fs.info("/d") }
        #expect(fs.faultsInjected == 3)
        #expect(fs.failedCalls == ["write", "fsync", "stat"])
        fs.clearFault()
        try fs.close(fd)
        #expect(fs.openDescriptorCount == 0)
    }

    @Test("listing the library opens exactly one file per document: its manifest")
    func listingOpensOneFilePerDocument() async throws {
        let fs = SimulatedFileSystem()
        let library = Library(root: "/lib", fileSystem: fs)
        var ids: [UUID] = []
        for i in 0..<5 { ids.append(try await library.createDocument(title: "Doc \(i)").id) }
        fs.resetReadOpens()
        let listed = try await library.documents()
        #expect(Set(listed.map(\.id)) == Set(ids))
        #expect(fs.readOpens == Dictionary(uniqueKeysWithValues: ids.map { (library.package($0).manifestPath, 1) }))
    }

    @Test("POSIX rules: exclusive create, rename over a file, non-empty directories, locks")
    func posixRules() throws {
        let fs = SimulatedFileSystem()
        try fs.put("/a/x", [1])
        try fs.put("/a/y", [2])
        #expect(throws: FileError.self) { _ = try fs.open("/a/x", .createExclusive) }
        try fs.rename("/a/x", to: "/a/y")
        #expect(try fs.readFile("/a/y") == [1])
        #expect(try fs.contentsOfDirectory("/a") == ["y"])
        #expect(throws: FileError.self) { try fs.removeDirectory("/a") }
        #expect(throws: FileError.self) { try fs.rename("/a", to: "/a/sub") }
        let lock = try fs.lock("/a/.lock")
        #expect { _ = try fs.lock("/a/.lock") } throws: { ($0 as? FileError)?.isWouldBlock == true }
        fs.unlock(lock)
        fs.unlock(try fs.lock("/a/.lock"))
    }
}
