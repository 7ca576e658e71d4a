// How a document round assembles a merged page: each element from this device's page as read, a
// blob fetched this round, the page as it is here now, or our last published blob of it.

import Foundation
import LulucatInk
import LulucatStore

/// Holds a missing element's place while the other sources are asked (a valid element: kind 0, a
/// 16-byte payload, which `UnknownElement` accepts).
private let placeholder: Element = .unknown(try! UnknownElement(kind: 0, payload: Data(count: 16)))

extension DocumentRound {
    /// A head as a state: its pages' states from their blobs (fetched unless the base has them).
    /// Its counts are checked against a document's limits before any blob is fetched, and each
    /// page it would bring here before the page is decoded (`DocumentLimits`); over them, the
    /// head is refused (`overLimit`) with nothing written.
    mutating func state(of head: Head, name: String) async throws(SyncError) -> DocumentState {
        try DocumentLimits.check(head, name: name)
        let codec = SampleCodecID(name: head.origin.codec) ?? .compact
        var bytes: UInt64 = 0
        var pages: [UUID: PageRecord] = [:]
        let sorted = head.pages.sorted(by: { $0.key.precedesInBytes($1.key) })
        // The blobs to fetch, in page order, each once.
        var toFetch: [BlobName] = []
        var listed = Set<BlobName>()
        for (pid, p) in sorted where Self.knownState(of: pid, in: head, base: base) == nil && snapshots[p.blob] == nil {
            if listed.insert(p.blob).inserted { toFetch.append(p.blob) }
        }
        context.progress.willMove(toFetch.map { LibrarySync.blobsFolder + "/" + $0.hex }, of: id)
        // Fetched a window at a time (`Remote.concurrentTransfers` blobs at once), each decoded
        // in page order: the raw bytes of one window at most are held besides the pages decoded.
        var fetched: [BlobName: Result<[UInt8], SyncError>] = [:]
        var nextFetch = 0
        for (pid, p) in sorted {
            var st = Self.knownState(of: pid, in: head, base: base)
            if st == nil {
                if snapshots[p.blob] == nil, fetched[p.blob] == nil, nextFetch < toFetch.count {
                    let window = Array(toFetch[nextFetch..<min(nextFetch + max(1, remote.concurrentTransfers), toFetch.count)])
                    nextFetch += window.count
                    fetched = await fetchBlobs(window)
                }
                do { st = try await snapshot(p.blob, codec: codec, fetched: fetched.removeValue(forKey: p.blob)).state } catch {
                    if case .remote(.notFound) = error { missingBlob = (pid, p.blob) }
                    throw error
                }
                bytes += pageBytes[p.blob] ?? 0
                try DocumentLimits.checkDocument(bytes, name: name)
            }
            pages[pid] = PageRecord(fields: p.fields, removed: p.removed, state: st!)
        }
        return DocumentState(id: head.document, title: head.title, origin: head.origin, deleted: head.deleted,
                             assets: head.assets, pages: pages)
    }

    /// A page's state in `head` when the base holds it (the same blob), so its blob is not read.
    /// The encrypted round's checks ask the same question of every head before the round runs.
    static func knownState(of page: UUID, in head: Head, base: Base?) -> PageState? {
        guard let b = base, let p = head.pages[page], b.head.pages[page]?.blob == p.blob else { return nil }
        return b.states[page]
    }

    /// Whether this device lacks an asset of the document (the round fetches its blob).
    static func lacksAsset(_ id: UUID, ext: String, of package: DocumentPackage, in library: Library) -> Bool {
        (try? library.fileSystem.info(package.assetPath(id, ext: ext))) == nil
    }

    /// A page blob, fetched, checked against its name and decoded once per round. Before it is
    /// decoded, its page is counted (`PageFile.check`) and refused over a page's limit here in
    /// `codec` (`DocumentLimits`), so such a page never takes its memory; what it takes is kept
    /// in `pageBytes`.
    mutating func snapshot(_ name: BlobName, codec: SampleCodecID = .compact,
                           fetched: Result<[UInt8], SyncError>? = nil) async throws(SyncError) -> PageSnapshot {
        if let s = snapshots[name] { return s }
        let bytes: [UInt8]
        if let fetched { bytes = try fetched.get() } else { bytes = try await fetchBlob(name) }
        let snap: PageSnapshot
        var size: UInt64 = 0
        var over: String?
        do {
            snap = try PageBlob.decode(bytes) { (summary, fileBytes) throws(SyncFormatError) in
                size = DocumentLimits.pageBytes(summary, fileBytes: fileBytes, codec: codec)
                over = DocumentLimits.pageOverLimit(size, samples: summary.sampleCount)
                if let over { throw .invalid(0, over) }
            }
        } catch {
            if let over { throw .overLimit(object: "blob \(name.hex)", reason: over) }
            throw .damaged(object: "blob \(name.hex)", reason: "\(error)")
        }
        snapshots[name] = snap
        pageBytes[name] = size
        return snap
    }

    func fetchBlob(_ name: BlobName) async throws(SyncError) -> [UInt8] {
        try await Self.fetchBlob(name, from: remote, of: id, progress: context.progress)
    }

    /// Page blobs fetched at once, each checked against its name; a failure is its blob's result
    /// (the caller meets it at that page, in page order).
    func fetchBlobs(_ names: [BlobName]) async -> [BlobName: Result<[UInt8], SyncError>] {
        let (remote, id, progress) = (remote, id, context.progress)
        let results = FetchedBlobs()
        @Sendable func fetch(_ name: BlobName) async {
            let result: Result<[UInt8], SyncError>
            do { result = .success(try await Self.fetchBlob(name, from: remote, of: id, progress: progress)) } catch { result = .failure(error) }
            results.set(name, result)
        }
        // The children return nothing: each result goes into `results` (a task group of tuples
        // holding a typed-throws `Result` crashed in a release build here, Swift 6.3).
        await withTaskGroup(of: Void.self) { group in
            for name in names { group.addTask { await fetch(name) } }
        }
        return results.all
    }

    static func fetchBlob(_ name: BlobName, from remote: any Remote, of document: UUID, progress: RoundProgress) async throws(SyncError) -> [UInt8] {
        let path = LibrarySync.blobsFolder + "/" + name.hex
        let (bytes, _) = try await SyncError.remote { () async throws(RemoteError) in try await remote.get(path, maxBytes: PageBlob.maxBytes) }
        guard BlobName(of: bytes) == name else { throw .damaged(object: "blob \(name.hex)", reason: "its SHA-256 is not its name") }
        progress.moved(path, of: document)
        return bytes
    }

    /// The content of a merged page, from what this device has or fetched.
    mutating func content(of pid: UUID, in merged: DocumentState) async throws(SyncError) -> PageContent {
        try await contentAndCodedStrokes(of: pid, in: merged, droppingMissing: false).0
    }

    /// The merged page's content, and the coded strokes of ours it may copy (only strokes taken
    /// from this device's page as read, whose samples are the merged ones). With
    /// `droppingMissing`, elements no source holds are left out and returned instead of failing
    /// (a removed page whose only copy was a blob of ours that never reached the remote).
    mutating func contentAndCodedStrokes(of pid: UUID, in merged: DocumentState, droppingMissing: Bool) async throws(SyncError)
        -> (PageContent, EncodedStrokes?, Set<UUID>) {
        let rec = merged.pages[pid]!
        var out = PageContent(canvasSize: QuantizedSize(width: rec.fields.value.width, height: rec.fields.value.height))
        var missing: Set<UUID> = []
        // One index per source, not a scan per element.
        var localIndex: [UUID: Element] = [:]
        localIndex.reserveCapacity(read.content[pid]?.elements.count ?? 0)
        for e in read.content[pid]?.elements ?? [] { localIndex[e.id] = e }
        let order = rec.state.orderedIDs
        var elements: [Element] = []
        elements.reserveCapacity(order.count)
        var fromLocal = Set<UUID>()
        fromLocal.reserveCapacity(localIndex.count)
        for eid in order {
            let entry = rec.state.elements[eid]!
            if let e = localIndex[eid], (read.prints[pid]?[eid] ?? PageBlob.fingerprint(e)) == entry.fingerprint {
                elements.append(e)
                fromLocal.insert(eid)
                continue
            }
            var found: Element?
            for s in snapshots.values where s.state.elements[eid]?.stamp == entry.stamp { found = s.elements[eid]; break }
            if let f = found { elements.append(f) } else { missing.insert(eid); elements.append(placeholder) }
        }
        var currentElements: [Element]?
        if !missing.isEmpty, let s = session, await s.pageIDs().contains(pid) {
            currentElements = try await SyncError.store { () async throws(StoreError) in try await s.content(of: pid).elements }
        } else if !missing.isEmpty, session == nil, let r = lockedReader, r.document.pages.contains(where: { $0.id == pid }) {
            currentElements = try SyncError.store { () throws(StoreError) in try r.contentForSync(of: pid).0.elements }
        }
        if let currentElements {
            // The page as it is here now (it was not read this round, or has been merged since).
            var current: [UUID: Element] = [:]
            for e in currentElements { current[e.id] = e }
            for (i, eid) in order.enumerated() where missing.contains(eid) {
                if let e = current[eid], PageBlob.fingerprint(e) == rec.state.elements[eid]!.fingerprint {
                    elements[i] = e
                    missing.remove(eid)
                }
            }
        }
        if !missing.isEmpty {
            // Elements we hold only in our last published blob of the page (removed here, say).
            if let b = base?.head.pages[pid]?.blob, base?.published == true { _ = try await snapshot(b) }
            for (i, eid) in order.enumerated() where missing.contains(eid) {
                let entry = rec.state.elements[eid]!
                guard let f = snapshots.values.lazy.compactMap({ $0.state.elements[eid]?.stamp == entry.stamp ? $0.elements[eid] : nil }).first else {
                    if droppingMissing { continue }
                    throw .elementMissing(page: pid, element: eid)
                }
                elements[i] = f
                missing.remove(eid)
            }
        }
        if droppingMissing && !missing.isEmpty { elements = zip(order, elements).filter { !missing.contains($0.0) }.map(\.1) }
        out.elements = elements
        var coded = read.encoded[pid]
        if coded != nil, let lc = read.content[pid] { coded!.forget(lc.elements.map(\.id).filter { !fromLocal.contains($0) }) }
        return (out, coded, droppingMissing ? missing : [])
    }
}

/// The results of the fetches of one window, set from their tasks.
final class FetchedBlobs: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [BlobName: Result<[UInt8], SyncError>] = [:]

    func set(_ name: BlobName, _ result: Result<[UInt8], SyncError>) { lock.withLock { results[name] = result } }
    var all: [BlobName: Result<[UInt8], SyncError>] { lock.withLock { results } }
}
