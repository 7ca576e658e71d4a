// What LulucatSync needs of the store and cannot do through the app's API: make a document and
// its pages under ids another device chose, put a merged page in place, and hash bytes.

import Foundation
import LulucatInk

/// SHA-256 for names that must agree across devices (sync's content-addressed blobs).
public enum ContentDigest {
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] { SHA256.hash(bytes) }
}

extension Library {
    /// Creates an empty document (no pages) under an id another device made. It appears whole or
    /// not at all, like `createDocument`.
    /// - Throws: `StoreError.invalidArgument` when the document already exists or the title is too long.
    @discardableResult
    public func createSyncedDocument(id: UUID, title: String, created: Date, engine: EngineKind,
                                     codec: SampleCodecID) throws(StoreError) -> DocumentPackage {
        guard title.utf8.count <= PackageJSON.maxTitleLength else {
            throw .invalidArgument("a title may be at most \(PackageJSON.maxTitleLength) bytes")
        }
        try prepare()
        let fs = fileSystem
        let target = package(id)
        if try fs.checked.info(target.path) != nil {
            throw .invalidArgument("document \(id) exists already")
        }
        let doc = DocumentMetadata(id: id, title: title, created: created, modified: Date.storeNow(), engine: engine, codec: codec)
        try buildPackage(id: id, document: doc) { (package) throws(StoreError) in
            try engine.createPages([], in: package, codec: codec, fileSystem: fs)
        }
        return target
    }
}

extension DocumentSession {
    /// Inserts a page under an id another device made, with its content; the content is durable
    /// before document.json lists it.
    public func insertSyncedPage(id: UUID, content: PageContent, at index: Int) throws(StoreError) {
        try checkOpen()
        guard index >= 0 && index <= metadata.pages.count else {
            throw .invalidArgument("page index \(index) is outside 0...\(metadata.pages.count)")
        }
        guard !metadata.pages.contains(where: { $0.id == id }) else { throw .invalidArgument("page \(id) exists already") }
        try engine.createPage(id, content: content)
        let now = Date.storeNow()
        var updated = metadata
        let assets = content.assetIDs.sorted { $0.uuidString < $1.uuidString }
        updated.pages.insert(PageEntry(id: id, canvas: content.canvasSize, created: now, modified: now,
                                       elementCount: content.elements.count, assets: assets), at: index)
        updated.modified = now
        try commitMetadata(updated)
        loaded[id] = LoadedPage(content: content, lastUse: useClock)
        evictCleanPages(keeping: id)
    }

    /// Makes a page hold `content` (a merged page), as ordinary edits every engine saves: the new
    /// elements appended when the old ones are a prefix of the new, else all replaced.
    public func replaceSyncedContent(of page: UUID, with content: PageContent) throws(StoreError) {
        let old = try self.content(of: page)
        if old == content { return }
        if old.canvasSize != content.canvasSize { try edit(page, .resize(content.canvasSize)) }
        if old.elements.count <= content.elements.count && Array(content.elements.prefix(old.elements.count)) == old.elements {
            let added = Array(content.elements.dropFirst(old.elements.count))
            if !added.isEmpty { try edit(page, .append(added)) }
            return
        }
        if !old.elements.isEmpty { try edit(page, .delete(old.elements.map(\.id))) }
        if !content.elements.isEmpty { try edit(page, .append(content.elements)) }
    }

    /// A page's content and, when the engine keeps them, its coded strokes: a sync copies the
    /// unchanged strokes into its blob instead of coding the page again.
    public func contentForSync(of page: UUID) throws(StoreError) -> (PageContent, EncodedStrokes?) {
        try checkOpen()
        let p = try load(page)
        return (p.content, p.encoded)
    }

    /// Writes an asset another device made, under its id, before any page shows it.
    public func importSyncedAsset(_ data: Data, id: UUID, fileExtension ext: String) throws(StoreError) {
        try checkOpen()
        guard DocumentPackage.assetExtensions.contains(ext) else {
            throw .invalidArgument("image type '\(ext)' is not one of \(DocumentPackage.assetExtensions.sorted())")
        }
        try writeAsset(data, id: id, ext: ext)
    }
}
