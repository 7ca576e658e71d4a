// A document round's publication (docs/sync.md §6 steps 5.4 to 5.6): our head for the merged state
// and the blobs it needs, then the base durably, the blobs, the head, the base marked published.

import Foundation
import LulucatInk
import LulucatStore

/// What a document round publishes.
struct Publication {
    /// Our head for the merged state.
    var head: Head
    /// The page states the base keeps.
    var states: [UUID: PageState]
    /// The blobs that no head we know names (assets, then pages), to upload before the head.
    var uploads: [(path: String, bytes: [UInt8])]
    /// The paths of `uploads` that are page blobs.
    var pagePaths: [String]
    /// How many of `uploads` are page blobs.
    var pageBlobs: Int { pagePaths.count }
}

/// The `modified` times (ms) the base records for the document and its pages after a round (-1:
/// unknown, read again next round).
struct ModifiedTimes {
    var pages: [UUID: Int64] = [:]
    var document: Int64 = 0
}

extension DocumentRound {
    /// What to publish for the merged state: blobs that no head we know names are coded (a page
    /// whose state a known head has keeps that head's blob).
    mutating func publication(for merged: DocumentState, remoteStates: [(Head, DocumentState)]) async throws(SyncError) -> Publication {
        var known = Set<BlobName>()
        if let b = base, b.published {
            for p in b.head.pages.values { known.insert(p.blob) }
            for a in b.head.assets.values { known.insert(a.blob) }
        }
        for (h, _) in remoteStates {
            for p in h.pages.values { known.insert(p.blob) }
            for a in h.assets.values { known.insert(a.blob) }
        }
        // Lost on the server: uploaded again from what this device holds.
        known.subtract(context.lost[id] ?? [])
        var pages: [UUID: HeadPage] = [:]
        var states: [UUID: PageState] = [:]
        var pageUploads: [(path: String, bytes: [UInt8])] = []
        // Pages coded here, with their stroke counts: the versions this device publishes (§12.1).
        var coded: [UUID: (BlobName, Int)] = [:]
        for (pid, rec) in merged.pages {
            states[pid] = rec.state
            var name: BlobName?
            if let b = base, let bp = b.head.pages[pid], b.states[pid] == rec.state { name = bp.blob }
            if name == nil {
                for (h, s) in remoteStates where s.pages[pid]?.state == rec.state { name = h.pages[pid]!.blob; break }
            }
            if name == nil || !known.contains(name!) {
                // New, or named only by an unpublished base of ours (uploaded again from what we hold).
                let namedBefore = name != nil
                let blob = try await pageBlob(pid, rec, in: merged)
                states[pid] = blob.state
                name = blob.name
                // A removed page's blob is not a state anybody saw (what no source holds is left
                // out of it): its last version is the one before the removal.
                if rec.isLive { coded[pid] = (blob.name, blob.strokes) }
                if namedBefore || !known.contains(blob.name) {
                    pageUploads.append((LibrarySync.blobsFolder + "/" + blob.name.hex, blob.bytes))
                    known.insert(blob.name)
                }
            }
            pages[pid] = HeadPage(fields: rec.fields, removed: rec.removed, blob: name!)
        }
        var uploads: [(path: String, bytes: [UInt8])] = []
        if let package = localPresentPackage {
            for (aid, ref) in merged.assets where !known.contains(ref.blob) {
                let path = package.assetPath(aid, ext: ref.ext)
                guard let bytes = try? library.fileSystem.readFile(path), BlobName(of: bytes) == ref.blob else { continue }
                uploads.append((LibrarySync.blobsFolder + "/" + ref.blob.hex, bytes))
                known.insert(ref.blob)
            }
        }
        var head = Head(device: sync.device, of: merged, pages: pages)
        var historyUpload: [(path: String, bytes: [UInt8])] = []
        head.history = try await history(coded: coded, known: known, named: Set(pages.values.map(\.blob)), upload: &historyUpload)
        return Publication(head: head, states: states, uploads: uploads + pageUploads + historyUpload, pagePaths: pageUploads.map(\.path))
    }

    /// Our head's history (docs/sync.md §12.2): the last acknowledged one, with an entry for each
    /// live page coded here into a blob it has no entry for; past `HeadHistory.inlineLimit`
    /// entries, the inline ones become a new chunk (retention applied), which joins the uploads,
    /// and a chunk that retention has thinned to less than half is rewritten into it (§12.4).
    ///
    /// After a round that failed (the base unpublished), an entry or chunk of the failed round is
    /// kept only when its blob is on the server (named by this round, or found by a `GET`), so a
    /// head never names a version whose blob may never have reached the server.
    mutating func history(coded: [UUID: (BlobName, Int)], known: Set<BlobName>, named: Set<BlobName>,
                          upload: inout [(path: String, bytes: [UInt8])]) async throws(SyncError) -> HeadHistory {
        let options = options.history
        guard !options.retention.keepsNothing else { return HeadHistory() }
        var history = base?.head.history ?? HeadHistory()
        // Our history as last acknowledged (`.sync/history/`): read only when needed, after a
        // failed round or when chunks are written, not in every round.
        var mirrorRead: (chunks: [BlobName], held: [BlobName: [HistoryEntry]], inline: [HistoryEntry])?
        func mirror() -> (chunks: [BlobName], held: [BlobName: [HistoryEntry]], inline: [HistoryEntry]) {
            if let m = mirrorRead { return m }
            let m = sync.store.history(id, only: [sync.device]).own(sync.device)
            mirrorRead = m
            return m
        }
        if let b = base, !b.published {
            let mirror = mirror()
            let acknowledgedChunks = Set(mirror.chunks)
            var chunks: [BlobName] = []
            for c in history.chunks {
                if acknowledgedChunks.contains(c) { chunks.append(c) } else if try await blobOnRemote(c) { chunks.append(c) }
            }
            history.chunks = chunks
            let acknowledged = Set(mirror.inline.map(\.blob))
            var kept: [HistoryEntry] = []
            for e in history.entries {
                if acknowledged.contains(e.blob) || known.contains(e.blob) || named.contains(e.blob) { kept.append(e); continue }
                if try await blobOnRemote(e.blob) { kept.append(e) }
            }
            history.entries = kept
        }
        history.deviceName = HeadHistory.clippedName(options.deviceName)
        let now = options.nowMilliseconds
        var has = Set(history.entries.map { $0.page.uuidString + $0.blob.hex })
        var added = false
        for (pid, (name, strokes)) in coded.sorted(by: { $0.key.precedesInBytes($1.key) }) {
            guard has.insert(pid.uuidString + name.hex).inserted else { continue }
            if let b = base, b.published, b.head.pages[pid]?.blob == name { continue }
            history.entries.append(HistoryEntry(page: pid, time: now, blob: name, strokes: strokes))
            added = true
        }
        history.entries.sort(by: HistoryEntry.precedes)
        // Retention thins the entries inline when the head changes anyway (a head is never
        // written only because time passed, §12.4).
        if added { history.entries = options.retention.kept(history.entries, now: now) }
        if history.entries.count > HeadHistory.inlineLimit {
            // Every entry of ours, to apply retention across chunks: the chunks held here, the
            // others read (ours: only after a lost `.sync/history`).
            var held = mirror().held
            for c in history.chunks where held[c] == nil {
                if let blob = try? await fetchHistoryBlob(c, device: sync.device) { held[c] = blob.entries }
            }
            let all = history.chunks.flatMap { held[$0] ?? [] } + history.entries
            let keep = Set(options.retention.kept(all.sorted(by: HistoryEntry.precedes), now: now))
            var fresh = history.entries.filter { keep.contains($0) }
            var chunks: [BlobName] = []
            for c in history.chunks {
                // A chunk that could not be read stays as it is (its versions are not let go
                // for a failed `GET`).
                guard let entries = held[c] else { chunks.append(c); continue }
                let still = entries.filter { keep.contains($0) }
                if still.count * 2 >= entries.count, !still.isEmpty { chunks.append(c) } else { fresh += still }
            }
            if !fresh.isEmpty {
                let blob = HistoryBlob(document: id, device: sync.device, entries: fresh)
                let bytes = blob.encode()
                let name = BlobName(of: bytes)
                if !known.contains(name) && !chunks.contains(name) { upload.append((LibrarySync.blobsFolder + "/" + name.hex, bytes)) }
                ownHistoryChunks[name] = blob
                if !chunks.contains(name) { chunks.append(name) }
            }
            history.chunks = chunks
            history.entries = []
        }
        return history
    }

    /// Whether the server holds blob `name` (one `GET`; only after a round that failed, for what
    /// that round may or may not have uploaded). On an encrypted remote, whether it holds the
    /// sealed object of that name.
    func blobOnRemote(_ name: BlobName) async throws(SyncError) -> Bool {
        let path: String
        let target: any Remote
        if let sealed = remote as? EncryptedRemote {
            do { path = LibrarySync.blobsFolder + "/" + (try EncryptedRemote.sealedBlobName(key: sealed.key, document: id, blob: name)) } catch {
                throw .remote(error)
            }
            target = sealed.inner
        } else {
            path = LibrarySync.blobsFolder + "/" + name.hex
            target = remote
        }
        switch await target.getResult(path, maxBytes: PageBlob.maxBytes + 4096) {
        case .success(let bytes): return remote is EncryptedRemote || BlobName(of: bytes) == name
        case .failure(.notFound): return false
        case .failure(let error): throw .remote(error)
        }
    }


    /// A page's blob for its merged state. Of a removed page, what no source holds any more is
    /// left out (it was only here), and the state kept says so.
    mutating func pageBlob(_ pid: UUID, _ rec: PageRecord, in merged: DocumentState) async throws(SyncError)
        -> (name: BlobName, bytes: [UInt8], state: PageState, strokes: Int) {
        let (content, coded, lost) = try await contentAndCodedStrokes(of: pid, in: merged, droppingMissing: !rec.isLive)
        var byID: [UUID: Element] = [:]
        byID.reserveCapacity(content.elements.count)
        for e in content.elements { byID[e.id] = e }
        var st = rec.state
        for id in lost { st.elements[id] = nil }
        let bytes: [UInt8]
        do {
            bytes = try PageBlob.encode(state: st, canvas: content.canvasSize, elements: byID, reusing: coded, hollow: read.hollow[pid] ?? [])
        } catch {
            throw .damaged(object: "page \(pid) as merged", reason: "\(error)")
        }
        var strokes = 0
        for case .stroke in content.elements { strokes += 1 }
        return (BlobName(of: bytes), bytes, st, strokes)
    }

    /// Whether this round uploads blobs the remote lost (`RoundContext.lost`).
    var healing: Bool { !(context.lost[id] ?? []).isEmpty }

    var localPresentPackage: DocumentPackage? {
        let p = library.package(id)
        return (try? library.fileSystem.info(p.path)) != nil ? p : nil
    }

    /// Step 5 of a round once the document holds the join: the base durably (unpublished), the
    /// blobs, the head, then the base marked published.
    mutating func publish(_ publication: Publication, times: ModifiedTimes, uploading: Task<Result<Int, SyncError>, Never>? = nil,
                          _ report: inout SyncReport) async throws(SyncError) {
        let (head, newStates, uploads, pageBlobs) = (publication.head, publication.states, publication.uploads, publication.pageBlobs)
        var next = Base(head: head, states: newStates, docModified: times.document, pageModified: times.pages, published: false)
        next.headBytes = head.encode()
        // The tables of the pages read now; the others' as the base had them.
        for pid in newStates.keys {
            if var t = read.printTables[pid] {
                t.base64 = Data(t.encode()).base64EncodedString()
                next.prints[pid] = t
            } else if let t = base?.prints[pid] {
                next.prints[pid] = t
            }
        }
        report.fingerprinted += read.fingerprinted
        report.readHollow += read.hollow.values.reduce(0) { $0 + $1.count }
        let store = sync.store
        func save(_ b: Base, previous: Base?, durable: Bool) throws(SyncError) -> [UUID: (state: PageState, base64: String)] {
            try store.save(b, previous: previous, durable: durable)
        }
        let needsPublish = base == nil || !(base!.published) || base!.head != head || healing
        if needsPublish {
            // The base durably, unpublished, before the head: a head on the remote is never
            // ahead of the base its stamps came from (a crash after the head's PUT must not reuse
            // its stamp). The blobs go up while the base is written: they are content-addressed
            // and immutable, so one written before the base (and never named, after a crash or
            // a failure) is only garbage (§8). The head goes up only once both are done.
            // A failure leaves the base unpublished: the next round publishes it even if
            // nothing else changes.
            // Started before the listing was in (`prepareUnderLock`), or now.
            context.progress.willMove(publication.pagePaths, of: id)
            if let task = uploading ?? (uploads.isEmpty ? nil : Self.uploadTask(remote, uploads, of: id, context: context)) {
                do {
                    next.savedStates = try save(next, previous: base, durable: true)
                } catch {
                    _ = await task.value
                    throw error
                }
                report.blobsUploaded += try await task.value.get()
            } else {
                next.savedStates = try save(next, previous: base, durable: true)
            }
            try await put(LibrarySync.headsFolder + "/" + Head.fileName(document: id, device: sync.device), next.headBytes)
            report.pagesPushed += pageBlobs
            let unpublished = next
            next.published = true
            // Not synced: rolled back, the same head is published again.
            _ = try save(next, previous: unpublished, durable: false)
        } else {
            next.published = true
            // The same head as the base's: a rollback only makes the next round read the pages again.
            _ = try save(next, previous: base, durable: false)
        }
        savedBase = next
    }

    func put(_ path: String, _ bytes: [UInt8]) async throws(SyncError) {
        do { try await remote.put(path, bytes) } catch { throw SyncError.remote(error) }
    }

    /// `putAll` in a task of its own, which always finishes (its outcome a `Result`).
    static func uploadTask(_ remote: any Remote, _ uploads: [(path: String, bytes: [UInt8])], of document: UUID,
                           context: RoundContext) -> Task<Result<Int, SyncError>, Never> {
        let (failed, progress) = (context.failedUploads, context.progress)
        return Task {
            do throws(SyncError) { return .success(try await putAll(remote, uploads, of: document, failed: failed, progress: progress)) } catch {
                return .failure(error)
            }
        }
    }

    /// Uploads blobs (`Remote.create`: a blob already there is never written over); returns
    /// how many. The first goes alone, so that a server that refuses every write (full, wrong
    /// credentials) sees one request; the rest go `Remote.concurrentTransfers` at a time (the head,
    /// the commit point, is written by the caller only after all of them). Nothing is sent again
    /// once an upload of the round failed for the same blob or the same document (its early
    /// upload, before the listing, and then its publication once merged): that failure stands
    /// for the round (a full or refusing server answers the same; the next round tries again).
    /// Once one fails, no more start; those under way finish, and the first failure is thrown.
    static func putAll(_ remote: any Remote, _ uploads: [(path: String, bytes: [UInt8])], of document: UUID,
                       failed: FailedUploads, progress: RoundProgress? = nil) async throws(SyncError) -> Int {
        @Sendable func put(_ upload: (path: String, bytes: [UInt8])) async -> RemoteError? {
            if let earlier = failed.error(upload.path, of: document) { return earlier }
            do { try await remote.create(upload.path, upload.bytes) } catch {
                failed.record(upload.path, of: document, error)
                return error
            }
            progress?.moved(upload.path, of: document)
            return nil
        }
        guard let first = uploads.first else { return 0 }
        if let e = await put(first) { throw SyncError.remote(e) }
        let width = max(1, remote.concurrentTransfers)
        var failure: RemoteError?
        await withTaskGroup(of: RemoteError?.self) { group in
            var next = 1, underWay = 0
            repeat {
                while failure == nil, next < uploads.count, underWay < width {
                    let upload = uploads[next]
                    next += 1
                    underWay += 1
                    group.addTask { await put(upload) }
                }
                guard let result = await group.next() else { break }
                underWay -= 1
                if failure == nil, let e = result { failure = e }
            } while true
        }
        if let failure { throw SyncError.remote(failure) }
        return uploads.count
    }
}

/// The uploads that failed in a round, with their errors, by blob and by document, shared by the
/// round's documents and their early uploads: a speculative upload that failed is not followed
/// by the document's own publication's (whose blobs differ when a head of it changed: the
/// merge's stamp is newer), nor by another document's upload of the same blob.
final class FailedUploads: @unchecked Sendable {
    private let lock = NSLock()
    private var byPath: [String: RemoteError] = [:]
    private var byDocument: [UUID: RemoteError] = [:]

    /// The error an upload of `path`, or of `document`, ended in this round, if one failed.
    func error(_ path: String, of document: UUID) -> RemoteError? { lock.withLock { byPath[path] ?? byDocument[document] } }

    /// Records that the upload of `path`, a blob of `document`, failed with `error`.
    func record(_ path: String, of document: UUID, _ error: RemoteError) {
        lock.withLock {
            byPath[path] = error
            byDocument[document] = error
        }
    }
}
