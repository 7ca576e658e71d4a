// Level 0: one `.content` snapshot per page, rewritten atomically and durably when the page is dirty.

import Foundation
import LulucatInk

/// The snapshot engine: `pages/<page-id>.content`, one file per page.
final class SnapshotEngine: StorageEngine {
    let package: DocumentPackage
    let fileSystem: any FileSystem
    let codec: SampleCodecID
    var kind: EngineKind { .snapshot }

    init(package: DocumentPackage, fileSystem: any FileSystem, codec: SampleCodecID) {
        self.package = package
        self.fileSystem = fileSystem
        self.codec = codec
    }

    func loadPage(_ id: UUID) throws(StoreError) -> PageContent {
        try SnapshotEngine.readSnapshot(package.pagePath(id), page: id, fileSystem: fileSystem)
    }

    /// Reads and decodes one snapshot file.
    static func readSnapshot(_ path: String, page: UUID, fileSystem: any FileSystem) throws(StoreError) -> PageContent {
        let bytes: [UInt8]
        do { bytes = try fileSystem.readFile(path) } catch {
            if error.isNotFound { throw .missingPage(page: page, path: path) }
            if error.errno == ELOOP { throw .unexpectedFileKind(path: path, found: .symlink) }
            throw .file(error)
        }
        do { return try PageFile.decode(bytes) } catch { throw .corruptPage(page: page, path: path, error) }
    }

    func createPage(_ id: UUID, content: PageContent) throws(StoreError) {
        try writeSnapshot(id, content)
    }

    func savePage(_ id: UUID, content: PageContent, changes: [PageChange]) throws(StoreError) {
        try writeSnapshot(id, content)
    }

    func writeSnapshot(_ id: UUID, _ content: PageContent) throws(StoreError) {
        let bytes: [UInt8]
        do { bytes = try PageFile.encode(content, codec: codec) } catch {
            throw .invalidArgument("page \(id): \(error)")
        }
        try StoreError.io { () throws(FileError) in try fileSystem.writeAtomically(bytes, to: package.pagePath(id)) }
    }

    func removePage(_ id: UUID) throws(StoreError) {
        try StoreError.io { () throws(FileError) in
            try fileSystem.removeIfPresent(package.pagePath(id))
            try fileSystem.syncDirectory(package.pagesPath)
        }
    }

    func close() throws(StoreError) {}
}
