// The transaction record (`.transaction`, docs/package-format.md "The transaction record"): what a
// multi-page transaction leaves in the package between its commit and the end of its writes, so a
// crash in between is rolled forward at the next open, never left half done.

import Foundation
import LulucatInk

/// A committed transaction not yet (or not wholly) written to the package's files: document.json
/// as it is after it, every page it wrote, and the pages it removed.
package struct TransactionRecord: Equatable, Sendable {
    /// The file's first four bytes.
    package static let magic: [UInt8] = Array("LTXN".utf8)
    package static let version: UInt8 = 1
    package static let fileName = ".transaction"
    /// The largest record read: document.json's limit plus, for each page, a page file's.
    package static let maxPages = 4096
    /// The largest record read (the pages of a transaction are written whole into it).
    package static let maxFileSize = 1 << 30

    /// document.json after the transaction, byte for byte as it is to be written.
    package var document: [UInt8]
    /// Each page written by the transaction, whole, as a page file (page-format.md), in the order
    /// they are written.
    package var pages: [(id: UUID, file: [UInt8])]
    /// The pages the transaction removed; their files go after document.json stops listing them.
    package var removed: [UUID]

    package init(document: [UInt8], pages: [(id: UUID, file: [UInt8])], removed: [UUID]) {
        self.document = document
        self.pages = pages
        self.removed = removed
    }

    package static func == (a: TransactionRecord, b: TransactionRecord) -> Bool {
        a.document == b.document && a.removed == b.removed
            && a.pages.map(\.id) == b.pages.map(\.id) && a.pages.map(\.file) == b.pages.map(\.file)
    }

    /// The record's bytes: header, document.json, pages, removed ids, CRC32C of all before it.
    package func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 32 + document.count + pages.reduce(0) { $0 + 20 + $1.file.count } + 16 * removed.count)
        w.writeBytes(Self.magic)
        w.writeUInt8(Self.version)
        w.writeUInt8(0)
        w.writeUInt16(0)
        w.writeUInt32(UInt32(document.count))
        w.writeBytes(document)
        w.writeUInt32(UInt32(pages.count))
        for p in pages {
            w.writeUUID(p.id)
            w.writeUInt32(UInt32(p.file.count))
            w.writeBytes(p.file)
        }
        w.writeUInt32(UInt32(removed.count))
        for id in removed { w.writeUUID(id) }
        w.writeUInt32(CRC32C.checksum(w.bytes))
        return w.bytes
    }

    /// Reads a record, refusing any that is not whole and exactly of this form (a record is
    /// written by one atomic rename, so a damaged one is damage, not a crash).
    package static func decode(_ bytes: [UInt8]) throws(TransactionRecordError) -> TransactionRecord {
        guard bytes.count >= 24 else { throw .damaged("\(bytes.count) bytes is too short for a transaction record") }
        guard Array(bytes.prefix(4)) == magic else { throw .damaged("it does not start with LTXN") }
        let stored = bytes.suffix(4).withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
        guard CRC32C.checksum(Array(bytes.dropLast(4))) == stored else { throw .damaged("its checksum does not match") }
        guard bytes[4] <= version else { throw .newerVersion(Int(bytes[4])) }
        guard bytes[4] == version, bytes[5] == 0, bytes[6] == 0, bytes[7] == 0 else {
            throw .damaged("version \(bytes[4]) with flags \(bytes[5]) is not a record this build writes")
        }
        do throws(PageFormatError) {
            return try ByteReader.reading(bytes.dropLast(4)) { (r: inout ByteReader) throws(PageFormatError) -> TransactionRecord in
                try r.skip(8)
                let documentLength = Int(try r.readUInt32())
                guard documentLength <= PackageJSON.maxFileSize else { throw .invalidField(offset: r.fileOffset, "document.json of \(documentLength) bytes") }
                let document = [UInt8](try r.readData(documentLength))
                let pageCount = Int(try r.readUInt32())
                guard pageCount <= maxPages else { throw .invalidField(offset: r.fileOffset, "\(pageCount) pages") }
                var pages: [(id: UUID, file: [UInt8])] = []
                for _ in 0..<pageCount {
                    let id = try r.readUUID()
                    let length = Int(try r.readUInt32())
                    guard length <= PackageLimits.maxPageFileSize else { throw .invalidField(offset: r.fileOffset, "a page of \(length) bytes") }
                    pages.append((id, [UInt8](try r.readData(length))))
                }
                let removedCount = Int(try r.readUInt32())
                guard removedCount <= maxPages else { throw .invalidField(offset: r.fileOffset, "\(removedCount) removed pages") }
                var removed: [UUID] = []
                for _ in 0..<removedCount { removed.append(try r.readUUID()) }
                guard r.isAtEnd else { throw .invalidField(offset: r.fileOffset, "\(r.remaining) bytes after the removed pages") }
                return TransactionRecord(document: document, pages: pages, removed: removed)
            }
        } catch {
            throw .damaged("\(error)")
        }
    }
}

/// Why a transaction record cannot be rolled forward.
package enum TransactionRecordError: Error, Equatable, CustomStringConvertible {
    /// Not a whole record of this form: damaged after it was written, or not written by a store.
    case damaged(String)
    /// Written by a newer version of the store.
    case newerVersion(Int)

    package var description: String {
        switch self {
        case .damaged(let why): return "the transaction record is damaged: \(why)"
        case .newerVersion(let v): return "the transaction record is of version \(v), newer than this build reads"
        }
    }
}

/// A transaction record as a reader without the lock sees it: the document after it and the pages
/// it wrote, to be read instead of the files (which its writes may not all have reached).
package struct TransactionOverlay: Sendable {
    package var document: DocumentMetadata
    package var pages: [UUID: PageContent]

    /// The package's record, read whole; nil when there is none or it does not read (a reader then
    /// reads the files, as a writer's open would leave them).
    package static func read(_ package: DocumentPackage, fileSystem fs: any FileSystem) -> TransactionOverlay? {
        guard let bytes = try? fs.readFile(package.transactionPath, limit: TransactionRecord.maxFileSize) else { return nil }
        return try? parse(bytes, of: package).overlay
    }

    /// A record's bytes checked whole, as a writer applies them and a reader reads them: the
    /// record, its document.json naming this package, every page it writes listed there and
    /// decoding, no page it removes listed.
    /// - Throws: `.unsupportedVersion` for a newer record, `.corruptFile` for any other.
    static func parse(_ bytes: [UInt8], of package: DocumentPackage) throws(StoreError) -> (record: TransactionRecord, overlay: TransactionOverlay) {
        let path = package.transactionPath
        let record: TransactionRecord
        do throws(TransactionRecordError) { record = try TransactionRecord.decode(bytes) } catch {
            if case .newerVersion(let v) = error {
                throw .unsupportedVersion(path: path, found: v, supported: Int(TransactionRecord.version))
            }
            throw .corruptFile(path: path, reason: "\(error)")
        }
        let document = try PackageJSON.decodeDocument(record.document, path: path)
        guard document.id == package.id else { throw .corruptFile(path: path, reason: "it names document \(document.id)") }
        let listed = Set(document.pages.map(\.id))
        var pages: [UUID: PageContent] = [:]
        for p in record.pages {
            guard listed.contains(p.id) else {
                throw .corruptFile(path: path, reason: "it writes page \(p.id), which its document.json does not list")
            }
            guard let content = try? PageFile.decode(p.file) else {
                throw .corruptFile(path: path, reason: "page \(p.id) in it cannot be read")
            }
            pages[p.id] = content
        }
        for p in record.removed where listed.contains(p) {
            throw .corruptFile(path: path, reason: "it removes page \(p), which its document.json lists")
        }
        return (record, TransactionOverlay(document: document, pages: pages))
    }
}

extension DocumentPackage {
    /// `.transaction`: a committed multi-page transaction whose writes may not all have happened.
    package var transactionPath: String { path + "/" + TransactionRecord.fileName }

    /// Finishes a transaction a crash interrupted (its record is there), under the writer lock the
    /// caller holds: every page of the record written whole, then document.json and the manifest,
    /// then the removed pages' files, then the record removed. Running it again after a crash
    /// halfway writes the same files again. A record that cannot be read is moved to `recovered/`
    /// and reported (an error finding); the package is left as it is.
    /// - Returns: whether a record was there.
    @discardableResult
    package func completeTransaction(fileSystem fs: any FileSystem, journal: JournalOptions = JournalOptions(),
                                     findings: inout [Finding]) throws(StoreError) -> Bool {
        let bytes: [UInt8]
        do { bytes = try fs.readFile(transactionPath, limit: TransactionRecord.maxFileSize) } catch {
            if error.isNotFound { return false }
            throw .file(error)
        }
        let record: TransactionRecord
        let read: TransactionOverlay
        do throws(StoreError) {
            (record, read) = try TransactionOverlay.parse(bytes, of: self)
        } catch {
            guard case .corruptFile = error else { throw error }
            // Kept, never applied: a record that does not read whole was not written by a commit.
            _ = try keepInRecovered(bytes, name: "transaction", fileSystem: fs)
            try fs.checked.removeIfPresent(transactionPath)
            try fs.checked.syncDirectory(path)
            findings.append(Finding(.error, transactionPath, "\(error); kept in recovered/ and not applied"))
            markNeedsRepair("the transaction record cannot be read", fileSystem: fs)
            return true
        }
        let metadata = read.document
        try metadata.engine.requireAvailable(self)
        let engine = try metadata.engine.makeEngine(self, codec: metadata.sampleCodec, fileSystem: fs, journal: journal, readOnly: false)
        do {
            try record.apply(to: self, engine: engine, manifest: PackageJSON.encode(Manifest(metadata)),
                             contents: read.pages, fileSystem: fs)
            try engine.close()
        } catch {
            engine.closeWithoutTidying()
            throw error
        }
        findings.append(Finding(.repaired, transactionPath, "a transaction interrupted by a crash was completed (\(record.pages.count) pages written, \(record.removed.count) removed)"))
        return true
    }
}
