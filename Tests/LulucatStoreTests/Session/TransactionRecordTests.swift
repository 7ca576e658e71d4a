// The transaction record (docs/package-format.md, "The transaction record"): its bytes, its
// refusal of damage, and a transaction committed but not wholly written, finished by whoever
// comes next (the session's next save, the next open, an export) and read whole by a reader.
// Crash states of transactions are enumerated by CrashFlowTests ("transactions" flows).

import Foundation
import LulucatInk
import Testing
@testable import LulucatStore
import LulucatStoreTesting

/// CRC-32C bit by bit (Castagnoli, reflected 0x82F63B78), independent of the store's table code.
private func crc32c(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for b in bytes {
        crc ^= UInt32(b)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
    }
    return ~crc
}

private func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
private func bytes(_ id: UUID) -> [UInt8] { withUnsafeBytes(of: id.uuid) { Array($0) } }

/// A file system whose page-file renames fail with EIO while `armed`: a transaction's record is
/// written, then its page writes fail (the state a crash between them leaves).
final class PageWritesFail: ForwardingFileSystem, @unchecked Sendable {
    private let lock = NSLock()
    private var _armed = false
    var armed: Bool {
        get { lock.withLock { _armed } }
        set { lock.withLock { _armed = newValue } }
    }
    override func rename(_ from: String, to: String) throws(FileError) {
        if armed && to.hasSuffix(".content") { throw FileError("rename", path: to, errno: EIO) }
        try base.rename(from, to: to)
    }
}

@Suite("The transaction record")
struct TransactionRecordTests {
    static let page = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!
    static let gone = UUID(uuidString: "F0E1D2C3-B4A5-9687-7869-5A4B3C2D1E0F")!

    @Test("its bytes, exactly as docs/package-format.md lays them out")
    func exactBytes() throws {
        let record = TransactionRecord(document: Array("{}".utf8), pages: [(Self.page, [1, 2, 3])], removed: [Self.gone])
        var expected: [UInt8] = Array("LTXN".utf8) + [1, 0, 0, 0]
        expected += le32(2) + Array("{}".utf8)
        expected += le32(1) + bytes(Self.page) + le32(3) + [1, 2, 3]
        expected += le32(1) + bytes(Self.gone)
        expected += le32(crc32c(expected))
        #expect(record.encoded() == expected)
        #expect(expected.count == 8 + 4 + 2 + 4 + 16 + 4 + 3 + 4 + 16 + 4)
        #expect(try TransactionRecord.decode(expected) == record)
        let empty = TransactionRecord(document: [], pages: [], removed: [])
        #expect(try TransactionRecord.decode(empty.encoded()) == empty)
    }

    @Test("every bit flipped and every truncation refused; a newer version says so")
    func damageIsRefused() throws {
        let record = TransactionRecord(document: Array("{\"a\":1}".utf8), pages: [(Self.page, [9, 8, 7, 6])], removed: [Self.gone])
        let good = record.encoded()
        for i in 0..<good.count {
            for bit in 0..<8 {
                var b = good
                b[i] ^= 1 << bit
                #expect(throws: TransactionRecordError.self) { try TransactionRecord.decode(b) }
            }
        }
        for n in 0..<good.count {
            #expect(throws: TransactionRecordError.self) { try TransactionRecord.decode(Array(good.prefix(n))) }
        }
        var newer = Array(good.dropLast(4))
        newer[4] = 2
        newer += le32(crc32c(newer))
        #expect(throws: TransactionRecordError.newerVersion(2)) { try TransactionRecord.decode(newer) }
        var trailing = Array(good.dropLast(4)) + [0]
        trailing += le32(crc32c(trailing))
        #expect(throws: TransactionRecordError.self) { try TransactionRecord.decode(trailing) }
    }

    /// A document of two drawn pages, the file system armed to fail page writes, and a transaction
    /// committed under it: its record on disk, its pages not written.
    static func committedButNotWritten(_ tmp: TemporaryFolder, engine: EngineKind = .snapshot)
        async throws -> (fs: PageWritesFail, library: Library, session: DocumentSession, id: UUID, before: [PageContent], after: [PageContent]) {
        let fs = PageWritesFail()
        let library = Library(root: tmp.path, fileSystem: fs)
        let package = try await library.createDocument(title: "Before", engine: engine, firstPage: nil)
        let s = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let a = try await s.addPage(), b = try await s.addPage()
        let strokes = (0..<4).map { SampleContent.stroke(seed: 500 + UInt32($0)) }
        try await s.append(strokes.map { .stroke($0) }, to: a)
        try await s.flush()
        let before = [try await s.content(of: a), try await s.content(of: b)]
        fs.armed = engine != .sqlite
        try await s.transaction("Cut and paste") { s in
            try s.delete([strokes[0].id, strokes[1].id], from: a)
            try s.append([.stroke(strokes[0]), .stroke(strokes[1])], to: b)
            try s.rename(to: "After")
        }
        let after = [try await s.content(of: a), try await s.content(of: b)]
        return (fs, library, s, package.id, before, after)
    }

    static func state(_ s: DocumentSession) async throws -> (String, [PageContent]) {
        var contents: [PageContent] = []
        for p in await s.pageIDs() { contents.append(try await s.content(of: p)) }
        return (await s.title, contents)
    }

    @Test("committed, its writes failed: the transaction returns, the record stays, the next save finishes it")
    func theNextSaveFinishesIt() async throws {
        let tmp = TemporaryFolder()
        let (fs, library, s, id, before, after) = try await Self.committedButNotWritten(tmp)
        #expect(after != before)
        #expect(await s.lastSaveError != nil, "the failed write is reported as a save failure")
        let record = library.package(id).transactionPath
        #expect(FileManager.default.fileExists(atPath: record))
        // Another transaction now finishes the first one's writes first; still failing, it throws
        // and leaves the first one committed.
        await #expect(throws: StoreError.self) {
            try await s.transaction { s in try s.rename(to: "Second") }
        }
        #expect(await s.title == "After")
        fs.armed = false
        try await s.flush()
        #expect(!FileManager.default.fileExists(atPath: record))
        #expect(await s.lastSaveError == nil)
        try await s.close()
        let again = try await library.open(id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let (title, contents) = try await Self.state(again)
        #expect(title == "After" && contents == after)
        try await again.close()
    }

    @Test("committed, then the app died: a reader reads the record, an export and the next open finish it",
          arguments: [EngineKind.snapshot, .journal])
    func theNextOpenFinishesIt(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let (fs, library, s, id, before, after) = try await Self.committedButNotWritten(tmp, engine: engine)
        await s.abandon()  // as a kill: nothing more is written
        fs.armed = false
        let plain = Library(root: tmp.path)
        let package = plain.package(id)
        #expect(FileManager.default.fileExists(atPath: package.transactionPath))
        // The files alone still hold the document before the transaction.
        #expect(try PackageReader.readDocument(package, fileSystem: PosixFileSystem()).title == "Before")
        // A reader without the lock reads the transaction whole from its record.
        let reader = try await plain.openReadOnly(id)
        #expect(await reader.title == "After")
        var read: [PageContent] = []
        for p in await reader.pageIDs() { read.append(try await reader.content(of: p)) }
        #expect(read == after && read != before)
        await reader.close()
        if engine == .snapshot {
            // An export takes the free lock and finishes it before it reads the files.
            let files = try plain.withConsistentFiles(id) { _, files in files }
            #expect(files.contains("document.json"))
            #expect(!FileManager.default.fileExists(atPath: package.transactionPath))
            #expect(try PackageReader.readDocument(package, fileSystem: PosixFileSystem()).title == "After")
        }
        let again = try await plain.open(id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let (title, contents) = try await Self.state(again)
        #expect(title == "After" && contents == after)
        if engine != .snapshot {
            #expect(await again.openReport.contains { $0.path == package.transactionPath && $0.severity == .repaired })
        }
        try await again.close()
        #expect(!FileManager.default.fileExists(atPath: package.transactionPath))
        #expect(DocumentVerifier().verify(package).filter { $0.severity == .error }.isEmpty)
        _ = library
    }

    @Test("a damaged record is kept in recovered/, never applied, and the document opens as its files are")
    func aDamagedRecordIsKeptAside() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Kept", firstPage: .letter)
        var damaged = TransactionRecord(document: Array("{}".utf8), pages: [], removed: []).encoded()
        damaged[9] ^= 0x40
        try Data(damaged).write(to: URL(fileURLWithPath: package.transactionPath))
        let s = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        #expect(await s.title == "Kept")
        let report = await s.openReport
        #expect(report.contains { $0.severity == .error && $0.path == package.transactionPath && $0.message.contains("damaged") })
        try await s.close()
        #expect(!FileManager.default.fileExists(atPath: package.transactionPath))
        let kept = try FileManager.default.contentsOfDirectory(atPath: package.recoveredPath)
        #expect(kept == ["transaction"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: package.recoveredPath + "/transaction")) == Data(damaged))
        #expect(FileManager.default.fileExists(atPath: package.path + "/.needs-repair"))
    }

    @Test("a record naming a page its document.json does not list is refused the same way")
    func aRecordThatContradictsItselfIsRefused() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Listed", firstPage: .letter)
        let document = try Data(contentsOf: URL(fileURLWithPath: package.documentPath))
        let page = try PageFile.encode(PageContent(canvasSize: .a4))
        let record = TransactionRecord(document: [UInt8](document), pages: [(UUID(), page)], removed: [])
        try Data(record.encoded()).write(to: URL(fileURLWithPath: package.transactionPath))
        let s = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        #expect(await s.pageIDs().count == 1)
        #expect(await s.openReport.contains { $0.severity == .error && $0.message.contains("does not list") })
        try await s.close()
    }

    @Test("while a transaction runs nothing is written; one that throws leaves every file as it was")
    func aFailedTransactionWritesNothing() async throws {
        let fs = SimulatedFileSystem()
        let library = Library(root: "/lib", fileSystem: fs)
        let package = try await library.createDocument(title: "Untouched", firstPage: .letter)
        let s = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let first = await s.pageIDs()[0]
        try await s.append([.stroke(SampleContent.stroke(seed: 1))], to: first)
        try await s.flush()
        let disk = fs.snapshot.fingerprint()
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await s.transaction { s in
                let added = try s.addPage()
                try s.append([.stroke(SampleContent.stroke(seed: 2))], to: added)
                try s.movePage(added, to: 0)
                try s.removePage(first)
                try s.rename(to: "Changed")
                try s.flush()  // inside a transaction: its commit saves
                throw Refused()
            }
        }
        #expect(fs.snapshot.fingerprint() == disk, "not one file changed")
        let (order, title) = (await s.pageIDs(), await s.title)
        #expect(order == [first] && title == "Untouched")
        try await s.close()
        let again = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        #expect(try await again.content(of: first).elements.count == 1)
        try await again.close()
    }
}
