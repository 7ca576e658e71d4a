// History in the API (docs/sync.md §12): every published state of a page, listed from what the
// rounds already read, read back from the remote, and restored as a new edit.

import Foundation
import LulucatInk
import LulucatStore

/// One published state of a page (docs/sync.md §12.1): which device published it, when, and how
/// many strokes it held.
public struct PageVersion: Sendable, Hashable, Identifiable {
    /// The version's blob (64 lowercase hex): the same on every device. `lnote` shows its first 12 characters.
    public let id: String
    /// The document the page belongs to.
    public let document: UUID
    /// The page this is a version of (the page's id, which stays the same when pages move).
    public let page: UUID
    /// When it was published, on its device's clock.
    public let time: Date
    /// The device that published it first (its `LibrarySync.device`).
    public let device: UUID
    /// The device's name as it published it ("" when it gave none).
    public let deviceName: String
    /// Stroke elements on the page in that state.
    public let strokes: Int
    /// Whether this device's last synced state of the page is this version.
    public let isCurrent: Bool
    /// Whether the page is in the document here now (false: removed, or the document is gone).
    public let pageIsLive: Bool
}

/// What a restore did: the page it wrote and how to take it back.
public struct PageRestore: Sendable {
    /// The page restored: the same page, or a new one when the version's page is no longer in the document.
    public let page: UUID
    /// Whether `page` is a new page (the version's page was removed).
    public let isNewPage: Bool
    /// The changes that undo the restore on `page` (for an app's undo manager; a new page is
    /// undone by removing it).
    public let undo: [PageChange]
}

extension LibrarySync {
    /// The versions of a document's pages (of `page` alone when given), newest first, merged from
    /// every device's history as this device's rounds read it: no request. One state published by
    /// several devices is one version (its first publication). Versions retention let go are not
    /// listed. `refreshHistory(of:)` reads the remote's again.
    public func history(of document: UUID, page: UUID? = nil, options: HistoryOptions = HistoryOptions()) -> [PageVersion] {
        let local = store.history(document)
        let now = options.nowMilliseconds
        let base = store.baseHead(document)
        var live = Set<UUID>()
        if let meta = try? DocumentMetadata.read(library.package(document), fileSystem: library.fileSystem) { live = Set(meta.pages.map(\.id)) }
        // One version per (page, blob): the earliest publication.
        var first: [String: (device: String, entry: LocalHistory.Entry)] = [:]
        for (d, e) in local.all where page == nil || e.page == page!.uuidString {
            let k = e.page + e.blob
            if let f = first[k], (f.entry.time, f.device) <= (e.time, d) { continue }
            first[k] = (d, e)
        }
        let sorted = first.values.sorted { ($0.entry.time, $0.entry.page, $0.entry.blob) < ($1.entry.time, $1.entry.page, $1.entry.blob) }
        let kept = options.retention.kept(sorted, now: now, page: \.entry.page, time: \.entry.time)
        return kept.reversed().compactMap { (dev, e) in
            guard let p = UUID(strictString: e.page), let d = UUID(strictString: dev), BlobName(hex: e.blob) != nil else { return nil }
            return PageVersion(id: e.blob, document: document, page: p, time: Date(timeIntervalSince1970: Double(e.time) / 1000),
                               device: d, deviceName: local.devices[dev]?.name ?? "", strokes: e.strokes,
                               isCurrent: base?.pages[p]?.blob.hex == e.blob, pageIsLive: live.contains(p))
        }
    }

    /// The documents this library's sync knows (synced here at least once, or with history read
    /// here), whether or not they are still in the library: what `history(of:)` and
    /// `restoreDocument(_:)` can be asked about. No request.
    public static func knownDocuments(in library: Library) -> Set<UUID> {
        let store = SyncStateStore(library: library)
        var ids = Set(store.baseIDs())
        for name in (try? store.fs.contentsOfDirectory(store.historyFolder)) ?? [] {
            if let id = UUID(strictString: name) { ids.insert(id) }
        }
        return ids
    }

    /// Reads the document's history from the remote again (docs/sync.md §12.5): one listing of
    /// `heads/`, each head of the document and each history chunk they name that this device does
    /// not hold. For a device whose `.sync/history/` was lost or rolled back. Takes the round lock.
    /// - Returns: how many requests it made.
    @discardableResult
    public func refreshHistory(of document: UUID) async throws(SyncError) -> Int {
        let lock = try await store.lockRounds(waiting: SyncOptions().waitForOtherRound)
        defer { store.unlockRounds(lock) }
        let remote = try historyRemote(document)
        let start = remote.statistics.requests
        let entries: [RemoteEntry]
        do { entries = try await remote.list(Self.headsFolder) } catch { throw .remote(error) }
        var h = store.history(document)
        let before = h
        for e in entries where !e.isFolder {
            guard let (doc, dev) = Head.parseFileName(e.name), doc == document else { continue }
            let bytes: [UInt8]
            switch await remote.getResult(Self.headsFolder + "/" + e.name, maxBytes: Head.maxBytes) {
            case .success(let b): bytes = b
            case .failure(.notFound): continue
            case .failure(let error): throw .remote(error)
            }
            let head: Head
            do { head = try Head.decode(bytes) } catch { throw .damaged(object: "head \(e.name)", reason: "\(error)") }
            guard head.document == doc, head.device == dev else { throw .damaged(object: "head \(e.name)", reason: "names another document or device") }
            for chunk in h.setHead(device: dev, head.history) {
                h.setChunk(chunk, try await historyBlob(chunk, of: document, device: dev).entries)
            }
        }
        if h != before { try store.saveHistory(document, h, before: before) }
        return remote.statistics.requests - start
    }

    /// A past version's content, read from the remote (one `GET` of its page blob, checked
    /// against its name).
    /// - Throws: `SyncError.remote(.notFound)` when the server no longer has it (collected, or
    ///   lost), `.damaged` when its bytes are not the version.
    public func content(of document: UUID, page: UUID, at version: PageVersion) async throws(SyncError) -> PageContent {
        guard version.page == page, version.document == document, let name = BlobName(hex: version.id) else {
            throw .store(.invalidArgument("version \(version.id.prefix(12)) is not a version of page \(page) of document \(document)"))
        }
        return try await pageContent(name, of: document, what: "version \(name.hex.prefix(12)) of page \(page)")
    }

    /// A page blob of `document` read from the remote, as the page it holds (`what` names it in an error).
    func pageContent(_ name: BlobName, of document: UUID, what: String) async throws(SyncError) -> PageContent {
        let bytes = try await blobBytes(name, of: document)
        let snap: PageSnapshot
        do { snap = try PageBlob.decode(bytes) } catch { throw .damaged(object: what, reason: "\(error)") }
        return PageContent(canvasSize: snap.canvas, elements: snap.state.orderedIDs.compactMap { snap.elements[$0] })
    }

    /// A past version's thumbnail, on demand: JPEG bytes drawn as the document's thumbnails are
    /// (`ThumbnailOptions`; images from the document's assets here when present). One `GET`.
    /// - Throws: as `content(of:page:at:)`, and `SyncError.store(.invalidArgument)` when this build
    ///   draws no thumbnails (link LulucatStoreThumbnails and call `Library.enableThumbnails()`).
    public func thumbnail(of document: UUID, page: UUID, at version: PageVersion,
                          options: ThumbnailOptions = ThumbnailOptions()) async throws(SyncError) -> Data {
        let content = try await self.content(of: document, page: page, at: version)
        let package = library.package(document)
        let present = (try? library.fileSystem.info(package.path)) != nil
        let fs = library.fileSystem
        do { return try ThumbnailWriter.jpeg(content, images: present ? package : nil, options: options, fileSystem: fs).data } catch {
            if let e = error as? StoreError { throw .store(e) }
            throw .store(.invalidArgument("the thumbnail could not be drawn: \(error)"))
        }
    }

    /// Brings a version back **as a new edit** (docs/sync.md §12.6), through `session` when given,
    /// else the document's open session in this process, else one opened and closed here: the
    /// page's elements become the version's (kept ones keep their ids, re-added ones get new ids,
    /// the canvas takes the version's size). A version of a page no longer in the document is
    /// restored as a new page at the end. The next round syncs it like any edit.
    /// - Returns: the page written and the changes that undo it.
    @discardableResult
    public func restore(page: UUID, of document: UUID, to version: PageVersion, session: DocumentSession? = nil) async throws(SyncError) -> PageRestore {
        let content = try await self.content(of: document, page: page, at: version)
        let library = self.library
        return try await SyncError.store { () async throws(StoreError) in
            var opened = false
            let s: DocumentSession
            if let session { s = session } else if let open = library.openSession(document) { s = open } else {
                s = try await library.open(document)
                opened = true
            }
            do throws(StoreError) {
                let result: PageRestore
                if await s.pageIDs().contains(page) {
                    let current = try await s.content(of: page)
                    let undo = try await s.apply(Self.restoreChanges(from: current, to: content), to: page)
                    result = PageRestore(page: page, isNewPage: false, undo: undo)
                } else {
                    let added = try await s.addPage(canvas: content.canvasSize)
                    let undo = try await s.apply([.append(content.elements.map(Self.withNewID))], to: added)
                    result = PageRestore(page: added, isNewPage: true, undo: undo)
                }
                if opened { try await s.close() }
                return result
            } catch {
                if opened { await s.abandon() }
                throw error
            }
        }
    }

    /// A document deleted (here or on another device, its trash emptied) made again from what
    /// this device last synced of it (docs/sync.md §12.6): its title and its pages in order, each
    /// as it was last published, read from the remote. A new document (a new id): the old one's
    /// deletion stands. Images come back with their files, in their places.
    /// - Returns: the new document's id.
    public func restoreDocument(_ document: UUID) async throws(SyncError) -> UUID {
        guard let head = store.baseHead(document) else {
            throw .store(.invalidArgument("document \(document) was never synced on this device: nothing of it is known here"))
        }
        var pages: [PageContent] = []
        // Images, by page index: (their place on the page, the element, the asset's bytes and extension).
        var images: [Int: [(index: Int, image: ImageElement, data: Data, ext: String)]] = [:]
        let order = head.pages.filter { $0.value.removed == nil }.sorted { ($0.value.fields.value.key, $0.key.uuidString) < ($1.value.fields.value.key, $1.key.uuidString) }
        for (k, (pid, p)) in order.enumerated() {
            let page = try await pageContent(p.blob, of: document, what: "page \(pid) of document \(document)")
            let all = page.elements
            for (i, e) in all.enumerated() {
                guard let image = e.image, let ref = head.assets[image.assetID] else { continue }
                let data = try await blobBytes(ref.blob, of: document)
                images[k, default: []].append((i, image, Data(data), ref.ext))
            }
            pages.append(PageContent(canvasSize: page.canvasSize, elements: all.filter { $0.image == nil }))
        }
        let library = self.library
        let title = head.title.value
        let made = try SyncError.store { () throws(StoreError) in
            try library.createDocument(title: title, pages: pages, engine: EngineKind(rawValue: head.origin.engine) ?? .snapshot,
                                       codec: SampleCodecID(name: head.origin.codec) ?? .compact).id
        }
        guard !images.isEmpty else { return made }
        // The images through a session, which stores their files, each put back in its place.
        let placed = images
        try await SyncError.store { () async throws(StoreError) in
            let s = try await library.open(made, options: SessionOptions(autosaveDelay: nil))
            do throws(StoreError) {
                let ids = await s.pageIDs()
                for (k, list) in placed.sorted(by: { $0.key < $1.key }) {
                    for item in list.sorted(by: { $0.index < $1.index }) {
                        let inserted = try await s.insertImage(item.data, fileExtension: item.ext, frame: item.image.frame,
                                                               rotation: item.image.rotation, on: ids[k])
                        try await s.move([inserted.id], to: .index(item.index), on: ids[k])
                    }
                }
                try await s.close()
            } catch {
                await s.abandon()
                throw error
            }
        }
        return made
    }

    // MARK: Helpers

    /// The changes that make `current` the version's `target` (§12.6).
    static func restoreChanges(from current: PageContent, to target: PageContent) -> [PageChange] {
        var currentByID: [UUID: Element] = [:]
        for e in current.elements { currentByID[e.id] = e }
        let targetIDs = Set(target.elements.map(\.id))
        var changes: [PageChange] = []
        let deleted = current.elements.map(\.id).filter { !targetIDs.contains($0) }
        if !deleted.isEmpty { changes.append(.delete(deleted)) }
        let updated = target.elements.filter { currentByID[$0.id] != nil && currentByID[$0.id] != $0 }
        if !updated.isEmpty { changes.append(.update(updated)) }
        // Re-added elements get new ids (an erased id is a tombstone everywhere, §5.2).
        var wanted: [UUID] = []
        var appended: [Element] = []
        for e in target.elements {
            if currentByID[e.id] != nil { wanted.append(e.id) } else {
                let n = withNewID(e)
                appended.append(n)
                wanted.append(n.id)
            }
        }
        if !appended.isEmpty { changes.append(.append(appended)) }
        // The z-order of the version: moves only where the order differs.
        var order = current.elements.map(\.id).filter { targetIDs.contains($0) } + appended.map(\.id)
        for (i, id) in wanted.enumerated() where order[i] != id {
            order.removeAll { $0 == id }
            order.insert(id, at: i)
            changes.append(.move([id], to: .index(i)))
        }
        if current.canvasSize != target.canvasSize { changes.append(.resize(target.canvasSize)) }
        return changes
    }

    static func withNewID(_ e: Element) -> Element {
        switch e {
        case .stroke(var s): s.id = UUID(); return .stroke(s)
        case .image(var i): i.id = UUID(); return .image(i)
        case .unknown: return e  // its id is in its payload: kept
        }
    }

    /// The remote to read history from (an encrypted library's: its sealed objects opened).
    func historyRemote(_ document: UUID) throws(SyncError) -> any Remote {
        guard let key else { return remote }
        let local = try LocalEncryption.load(library)
        let round = EncryptionRound(highest: local.highest, written: local.written)
        return EncryptedRemote(inner: remote, key: key, round: round, document: document)
    }

    /// A blob of `document`, read and checked against its name.
    func blobBytes(_ name: BlobName, of document: UUID) async throws(SyncError) -> [UInt8] {
        let remote = try historyRemote(document)
        if let sealed = remote as? EncryptedRemote { return try await sealed.fetchBlob(document: document, blob: name) }
        let bytes: [UInt8]
        do { bytes = try await remote.get(Self.blobsFolder + "/" + name.hex, maxBytes: PageBlob.maxBytes).bytes } catch { throw .remote(error) }
        guard BlobName(of: bytes) == name else { throw .damaged(object: "blob \(name.hex)", reason: "its SHA-256 is not its name") }
        return bytes
    }

    func historyBlob(_ name: BlobName, of document: UUID, device: UUID) async throws(SyncError) -> HistoryBlob {
        try DocumentRound.decodeHistoryBlob(try await blobBytes(name, of: document), name: name, document: document, device: device)
    }
}
