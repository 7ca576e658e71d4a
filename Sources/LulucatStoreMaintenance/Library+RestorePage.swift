// Putting a page back from a package's recovered/ folder (`lnote restore-page`): what repair or
// salvage kept of a damaged page becomes a page of the document again, with every element whose
// own bytes still check.

import Foundation
import LulucatInk
import LulucatStore

/// What `Library.restorePage` put back.
public struct RestoredPage: Sendable, Equatable {
    /// The page's id in the document (the file's own id, or a new one if that id is listed).
    public var page: UUID
    /// Where it was inserted in the page list.
    public var index: Int
    /// Elements put back.
    public var restored: Int
    /// Elements the file held that could not be put back (damaged bytes, or an image whose asset
    /// is gone), when the file says how many it held.
    public var lost: Int?
    /// The file in recovered/ it came from (left there: the original bytes are never removed).
    public var source: String
}

extension Library {
    /// The page files in a document's recovered/ folder that `restorePage` can read, by name.
    public func recoveredPages(_ id: UUID) throws(StoreError) -> [String] {
        let folder = package(id).recoveredPath
        guard try fileSystem.checked.info(folder)?.kind == .directory else { return [] }
        return try fileSystem.checked.contentsOfDirectory(folder).filter { Self.recoveredPageUUID($0) != nil }.sorted()
    }

    /// Inserts a page from `name` in the document's recovered/ folder (a page file repair moved
    /// aside or salvage kept: `<page UUID>.content`, or that name with a `.<suffix>` repair added
    /// when one was there already), at `index` (the end by default). Every element whose bytes
    /// still parse and check comes back, under a new id; an image whose asset is no longer in the package does
    /// not (no dangling reference). The page gets the file's id unless the document lists it
    /// already. Goes through a session (the document's one writer), so it waits for nobody and
    /// fails with `documentInUse` if another process has the document open.
    public func restorePage(_ id: UUID, from name: String, at index: Int? = nil) async throws(StoreError) -> RestoredPage {
        guard let fileID = Self.recoveredPageUUID(name) else {
            throw .invalidArgument("'\(name)' is not a page file of recovered/ (expected <page UUID>.content)")
        }
        let package = self.package(id)
        let path = package.recoveredPath + "/" + name
        let bytes: [UInt8]
        do { bytes = try fileSystem.readFile(path, limit: PackageLimits.maxPageFileSize) } catch {
            if error.isNotFound { throw .invalidArgument("recovered/\(name) does not exist in document \(id)") }
            throw .file(error)
        }
        let (assets, _) = try PackageReader.scanAssets(package, fileSystem: fileSystem)
        var salvage = PageFile.salvage(bytes, canvasSize: .letter)
        let before = salvage.content.elements.count
        salvage.content.elements.removeAll { element in
            if case .image(let image) = element { return assets[image.assetID] == nil }
            return false
        }
        let droppedImages = before - salvage.content.elements.count
        // Each element comes back under a new id: sync tombstones the ids of a page a round saw
        // removed (docs/sync.md §5.4), so under their old ids they would be dropped again by
        // the next round; under new ones they are new strokes, on every device.
        salvage.content.elements = salvage.content.elements.map(Self.withNewID)
        let session = try await open(id, options: SessionOptions(autosaveDelay: nil))
        do {
            let pages = await session.document.pages
            let page = pages.contains(where: { $0.id == fileID }) ? UUID() : fileID
            let at = index ?? pages.count
            try await session.insertSyncedPage(id: page, content: salvage.content, at: at)
            try await session.close()
            return RestoredPage(page: page, index: at, restored: salvage.content.elements.count,
                                lost: salvage.expected.map { max(0, $0 - salvage.content.elements.count) } ?? (droppedImages > 0 ? droppedImages : nil),
                                source: path)
        } catch {
            await session.abandon()
            throw error
        }
    }

    /// The element with a new random id, the rest as it was (an unknown element's payload
    /// begins with its id).
    static func withNewID(_ element: Element) -> Element {
        switch element {
        case .stroke(var s):
            s.id = UUID()
            return .stroke(s)
        case .image(var i):
            i.id = UUID()
            return .image(i)
        case .unknown(let u):
            var payload = u.payload
            withUnsafeBytes(of: UUID().uuid) { payload.replaceSubrange(payload.startIndex..<payload.startIndex + 16, with: $0) }
            return (try? UnknownElement(kind: u.kind, payload: payload)).map(Element.unknown) ?? element
        }
    }

    /// The page id of a recovered page file's name, or nil.
    static func recoveredPageUUID(_ name: String) -> UUID? {
        let parts = name.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[1] == "content", !name.contains("/"),
              let id = UUID(strictString: String(parts[0])) else { return nil }
        if parts.count == 3 { guard !parts[2].isEmpty, !parts[2].contains("/") else { return nil } }
        return id
    }
}
