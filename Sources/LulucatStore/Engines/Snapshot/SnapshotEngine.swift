// Level 0: one `.content` snapshot per page, rewritten atomically and durably when the page is dirty.

import Foundation
import LulucatInk

/// The snapshot engine: `pages/<page-id>.content`, one file per page.
package final class SnapshotEngine: StorageEngine {
    let package: DocumentPackage
    let fileSystem: any FileSystem
    let codec: SampleCodecID
    package var kind: EngineKind { .snapshot }

    init(package: DocumentPackage, fileSystem: any FileSystem, codec: SampleCodecID) {
        self.package = package
        self.fileSystem = fileSystem
        self.codec = codec
    }

    package func loadPage(_ id: UUID) throws(StoreError) -> PageContent {
        try SnapshotEngine.readSnapshot(package.pagePath(id), page: id, fileSystem: fileSystem)
    }

    package func checkPage(_ id: UUID) throws(StoreError) -> PageSummary {
        try SnapshotEngine.checkSnapshot(package.pagePath(id), page: id, fileSystem: fileSystem)
    }

    package func loadPageForEditing(_ id: UUID) throws(StoreError) -> (PageContent, EncodedStrokes?) {
        let path = package.pagePath(id)
        let bytes = try SnapshotEngine.readBytes(path, page: id, fileSystem: fileSystem)
        do {
            let (content, strokes) = try PageFile.decodeKeepingStrokes(bytes)
            return (content, strokes)
        } catch { throw .corruptPage(page: id, path: path, error) }
    }

    package func loadPageForSync(_ id: UUID, hollowing: (UUID, UInt64, SampleCodecID) -> Bool) throws(StoreError)
        -> (PageContent, EncodedStrokes?, Set<UUID>) {
        let path = package.pagePath(id)
        let bytes = try SnapshotEngine.readBytes(path, page: id, fileSystem: fileSystem)
        do {
            let (content, strokes, hollow) = try PageFile.decodeKeepingStrokes(bytes, hollowing: hollowing)
            return (content, strokes, hollow)
        } catch { throw .corruptPage(page: id, path: path, error) }
    }

    static func readBytes(_ path: String, page: UUID, fileSystem: any FileSystem) throws(StoreError) -> [UInt8] {
        // A page file larger than the documented limit (a sparse 2 GB file from elsewhere) is
        // refused by its size, before a byte of it is read.
        do { return try fileSystem.readFile(path, limit: PackageLimits.maxPageFileSize) } catch {
            if error.isNotFound { throw .missingPage(page: page, path: path) }
            if error.errno == EFBIG {
                throw .corruptPage(page: page, path: path, .invalidField(offset: 0, "the file is larger than the limit of \(PackageLimits.maxPageFileSize) bytes"))
            }
            if error.errno == ELOOP { throw .unexpectedFileKind(path: error.found != nil ? error.path : path, found: .symlink) }
            throw .file(error)
        }
    }

    /// Reads and decodes one snapshot file.
    package static func readSnapshot(_ path: String, page: UUID, fileSystem: any FileSystem) throws(StoreError) -> PageContent {
        let bytes = try readBytes(path, page: page, fileSystem: fileSystem)
        do { return try PageFile.decode(bytes) } catch { throw .corruptPage(page: page, path: path, error) }
    }

    /// Reads and checks one snapshot file, keeping only its summary (`PageFile.check`).
    package static func checkSnapshot(_ path: String, page: UUID, fileSystem: any FileSystem) throws(StoreError) -> PageSummary {
        let bytes = try readBytes(path, page: page, fileSystem: fileSystem)
        do { return try PageFile.check(bytes) } catch { throw .corruptPage(page: page, path: path, error) }
    }

    package func createPage(_ id: UUID, content: PageContent) throws(StoreError) {
        _ = try writeSnapshot(id, content, reusing: nil)
    }

    package func savePage(_ id: UUID, content: PageContent, changes: [PageChange], reusing: EncodedStrokes?) throws(StoreError) -> EncodedStrokes? {
        // `reusing` is the file of the page before `changes` (what it was read or last written
        // as): when they only appended elements or resized the canvas, the file is extended.
        try writeSnapshot(id, content, reusing: reusing, onlyAppended: Self.onlyAppend(changes))
    }

    /// The session's save: when `changes` only appended, the page's file (in `reusing`, which
    /// nothing else holds then) grows in place: the save writes the file, having coded only the
    /// appended elements and copied nothing.
    package func savePage(_ id: UUID, content: PageContent, changes: [PageChange], takingOver reusing: inout EncodedStrokes?) throws(StoreError) -> EncodedStrokes? {
        guard Self.onlyAppend(changes), var strokes = reusing.take() else {
            return try writeSnapshot(id, content, reusing: reusing)
        }
        let extended: [UInt8]?
        do { extended = try PageFile.extend(&strokes, to: content, codec: codec) } catch {
            reusing = strokes
            throw .invalidArgument("page \(id): \(error)")
        }
        guard let bytes = extended else {
            reusing = strokes
            return try writeSnapshot(id, content, reusing: strokes)
        }
        // `strokes` are the page's now, written or not: the next save extends them again.
        do { try writePageFile(id, bytes) } catch {
            reusing = strokes
            throw error
        }
        return strokes
    }

    /// Whether `changes` leave every element where it was, unchanged (appends and resizes).
    static func onlyAppend(_ changes: [PageChange]) -> Bool {
        changes.allSatisfy {
            switch $0 {
            case .append, .resize: return true
            case .delete, .replace, .update, .move: return false
            }
        }
    }

    /// Encodes (copying unchanged strokes) and writes a snapshot atomically and durably. With
    /// `onlyAppended`, `content` is the page `reusing` holds plus appended elements, and the file
    /// is extended instead of coded again (`PageFile.encode(_:codec:appendingTo:)`).
    func writeSnapshot(_ id: UUID, _ content: PageContent, reusing: EncodedStrokes?, onlyAppended: Bool = false) throws(StoreError) -> EncodedStrokes {
        let encoded: (bytes: [UInt8], strokes: EncodedStrokes)
        do {
            if onlyAppended, let reusing, let extended = try PageFile.encode(content, codec: codec, appendingTo: reusing) {
                encoded = extended
            } else {
                encoded = try PageFile.encode(content, codec: codec, reusing: reusing)
            }
        } catch {
            throw .invalidArgument("page \(id): \(error)")
        }
        try writePageFile(id, encoded.bytes)
        return encoded.strokes
    }

    /// Writes a page's file atomically and durably, refusing one larger than a page may hold.
    func writePageFile(_ id: UUID, _ bytes: [UInt8]) throws(StoreError) {
        guard bytes.count <= PackageLimits.maxPageFileSize else {
            throw .invalidArgument("page \(id) would be \(bytes.count) bytes, more than a page may hold (\(PackageLimits.maxPageFileSize)); split it into pages")
        }
        try fileSystem.checked.writeAtomically(bytes, to: package.pagePath(id))
    }

    package func removePage(_ id: UUID) throws(StoreError) {
        try fileSystem.checked.removeIfPresent(package.pagePath(id))
        try fileSystem.checked.syncDirectory(package.pagesPath)
    }

    package func close() throws(StoreError) {}
}

/// Reading one page snapshot outside a session (verify, render, export, benchmarks).
extension SnapshotEngine {
    /// The files of the snapshot form in `package`: `pages/<id>.content`, as absolute paths.
    static func formFiles(in package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) -> Set<String> {
        guard try fs.checked.info(package.pagesPath)?.kind == .directory else { return [] }
        return Set(try PackageReader.scanPages(package, fileSystem: fs).pageFiles.map(package.pagePath))
    }
}
