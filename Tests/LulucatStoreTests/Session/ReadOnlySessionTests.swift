// ReadOnlySession: reads a document while a session writes it (no documentInUse, the writer's
// saves show), on a read-only file system (every write refused), and writes nothing at all.

import Foundation
import Testing
import LulucatInk
import LulucatStoreTesting
@testable import LulucatStore
@testable import LulucatStoreSQLite

/// A volume mounted read-only: every call that would change something fails with EROFS.
final class ReadOnlyVolume: ForwardingFileSystem, @unchecked Sendable {
    init() { super.init(PosixFileSystem()) }
    private func refuse(_ op: String, _ path: String) -> FileError { FileError(op, path: path, errno: EROFS) }
    override func open(_ path: String, _ mode: OpenMode) throws(FileError) -> FileDescriptor {
        guard mode == .read else { throw refuse("open", path) }
        return try base.open(path, mode)
    }
    override func write(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(FileError) { throw refuse("write", "fd") }
    override func truncate(_ fd: FileDescriptor, to length: Int) throws(FileError) { throw refuse("truncate", "fd") }
    override func rename(_ from: String, to: String) throws(FileError) { throw refuse("rename", from) }
    override func unlink(_ path: String) throws(FileError) { throw refuse("unlink", path) }
    override func makeDirectory(_ path: String) throws(FileError) { throw refuse("mkdir", path) }
    override func removeDirectory(_ path: String) throws(FileError) { throw refuse("rmdir", path) }
    override func lock(_ path: String) throws(FileError) -> FileDescriptor { throw refuse("lock", path) }
}

@Suite struct ReadOnlySessionTests {
    init() { Library.enableSQLiteEngine() }
    let noAutosave = SessionOptions(autosaveDelay: nil, thumbnails: nil)

    /// Every file under `path` with its size and modification time.
    func listing(_ path: String) -> [String: String] {
        var out: [String: String] = [:]
        let fm = FileManager.default
        for name in fm.subpaths(atPath: path) ?? [] {
            let a = try? fm.attributesOfItem(atPath: path + "/" + name)
            out[name] = "\(a?[.size] ?? "-") \((a?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"
        }
        return out
    }

    @Test(arguments: EngineKind.allCases)
    func readsWhileASessionWritesAndSeesItsSaves(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Shared", engine: engine)
        let writer = try await library.open(package.id, options: noAutosave)
        let page = await writer.pageIDs()[0]
        let a = sampleStroke(40, seed: 1), b = sampleStroke(40, seed: 2)
        try await writer.append(a, to: page)
        try await writer.save()

        let reader = try await library.openReadOnly(package.id)
        #expect(await reader.title == "Shared")
        #expect(await reader.engineKind == engine)
        #expect(try await reader.content(of: page).elements == [.stroke(a)])
        // Accepted but not saved: not shown. Saved: shown at the next read.
        try await writer.append(b, to: page)
        #expect(try await reader.content(of: page).elements == [.stroke(a)])
        try await writer.save()
        #expect(try await reader.content(of: page).elements == [.stroke(a), .stroke(b)])
        // Pages the writer adds appear after a reload.
        let second = try await writer.addPage()
        try await writer.flush()
        try await reader.reload()
        #expect(await reader.pageIDs() == [page, second])
        await #expect(throws: StoreError.self) { try await reader.content(of: UUID()) }
        await reader.close()
        await #expect { try await reader.content(of: page) } throws: { error in
            if case StoreError.sessionClosed = error { return true } else { return false }
        }
        // The writer goes on, unaware.
        try await writer.append(sampleStroke(seed: 3), to: page)
        try await writer.close()
        #expect(DocumentVerifier().verify(package).filter { $0.severity == .error }.isEmpty)
    }

    @Test(arguments: EngineKind.allCases)
    func readingWritesNothing(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Untouched", engine: engine)
        let writer = try await library.open(package.id, options: noAutosave)
        let page = await writer.pageIDs()[0]
        for i in 0..<5 { try await writer.append(sampleStroke(20, seed: i), to: page) }
        try await writer.close()
        let before = listing(package.path)
        try await Task.sleep(for: .milliseconds(20))  // a rewrite would show in the times
        let reader = try await library.openReadOnly(package.id)
        #expect(try await reader.content(of: page).strokes.count == 5)
        await reader.close()
        #expect(listing(package.path) == before)
    }

    @Test(arguments: [EngineKind.snapshot, .journal])
    func readsOnAReadOnlyVolume(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let writable = Library(root: tmp.path)
        let package = try await writable.createDocument(title: "On a CD", engine: engine)
        let writer = try await writable.open(package.id, options: noAutosave)
        let page = await writer.pageIDs()[0]
        let strokes = (0..<8).map { sampleStroke(30, seed: $0) }
        for s in strokes { try await writer.append(s, to: page) }
        try await writer.close()

        let volume = Library(root: tmp.path, fileSystem: ReadOnlyVolume())
        // A session for writing cannot even start there...
        await #expect(throws: StoreError.self) { _ = try await volume.open(package.id, options: noAutosave) }
        // ...a reader can.
        let reader = try await volume.openReadOnly(package.id)
        #expect(try await reader.content(of: page).elements == strokes.map { .stroke($0) })
        await reader.close()
    }

    @Test func aCancelledTaskGetsNoReader() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Cancelled")
        let task = Task { () async throws(StoreError) -> ReadOnlySession in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await ReadOnlySession.open(library.package(package.id))
        }
        await #expect { _ = try await task.value } throws: { error in
            if case StoreError.cancelled = error { return true } else { return false }
        }
    }
}
