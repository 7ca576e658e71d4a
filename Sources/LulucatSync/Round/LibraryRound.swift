// One round of a library with its remote (docs/sync.md §6): list the heads while the local side is
// read and the documents that changed only here are prepared, read the changed heads, stop before a
// mass deletion, then each document that needs work, one at a time, and the index saved.

import Foundation
import LulucatInk
import LulucatStore

/// A flag one task sets and another reads.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// A remote's counters at the start of a round.
struct RemoteCounts {
    var requests: Int
    var bytesSent: Int
    var bytesReceived: Int

    init(_ s: RemoteStatistics) { (requests, bytesSent, bytesReceived) = (s.requests, s.bytesSent, s.bytesReceived) }
}

/// One round of a library: what `LibrarySync.sync` runs.
struct LibraryRound {
    var context: RoundContext
    let start: RemoteCounts
    var report = SyncReport()
    /// The ETags of the heads last read, by name (`seen.json`).
    var seen: [String: String]
    /// The local side (step 2): the library's documents, the trash, the bases and which documents
    /// need work for a local reason.
    var local: [UUID: LibraryEntry] = [:]
    var trashed: Set<UUID> = []
    var baseIDs: Set<UUID> = []
    var localWork: Set<UUID> = []
    var bases: [UUID: Base] = [:]
    var index: [UUID: SyncStateStore.IndexEntry]
    var indexChanged = false
    /// Documents prepared under their lock before the listing was in.
    var prepared: [UUID: DocumentRound] = [:]
    /// Whether the remote is the one `.sync/plain-remote` names (read once a round).
    let knownPlain: Bool
    /// The server's name `.sync/server` recorded for this remote (WebDAV only).
    let recordedServer: String?

    /// Documents prepared before the listing at most (each holds its coded page; none holds its lock).
    static let speculationLimit = 4

    var sync: LibrarySync { context.sync }
    var store: SyncStateStore { context.sync.store }

    init(_ sync: LibrarySync, options: SyncOptions) {
        context = RoundContext(sync: sync, options: options)
        start = RemoteCounts(sync.remote.statistics)
        seen = sync.store.seen()
        index = sync.store.index()
        knownPlain = sync.store.isKnownPlain(sync.remote.identity)
        // A new WebDAVRemote (the first round of a process) knows its server only from a reply:
        // the name recorded by an earlier round lets a blob sent before the listing answers take
        // the one-PUT `create` on Apache or lighttpd instead of a PUT and a MOVE (docs/sync.md §9).
        if let dav = sync.remote as? WebDAVRemote {
            recordedServer = sync.store.serverName(sync.remote.identity)
            if knownPlain, let name = recordedServer { dav.assumeServer(name) }
        } else {
            recordedServer = nil
        }
    }

    mutating func run(progress: @escaping @Sendable (SyncProgress) -> Void) async throws(SyncError) -> SyncReport {
        context.progress.start(progress)
        defer { context.progress.stop() }
        // 1. The heads: one PROPFIND, on its way while the local side is read (2) and while the
        //    documents that changed only here are prepared (speculation, below).
        let remote = sync.remote
        let listingAnswered = Flag()
        async let listedAhead = LibrarySync.attempt { () async throws(RemoteError) in
            defer { listingAnswered.set() }
            return try await remote.list(LibrarySync.headsFolder, maxBytes: RemoteLimits.listingBytes)
        }
        do {
            try await readLocalSide()
            await speculate(listingAnswered)
        } catch {
            _ = await listedAhead
            await discardPrepared()
            throw error
        }
        let listed = await listedAhead
        do {
            return try await finish(listed)
        } catch {
            await discardPrepared()
            throw error
        }
    }

    /// 2. The local side: manifests only. A document needs work for a local reason when it has no
    ///    base, or its index entry (or base) says it changed here or was not published.
    mutating func readLocalSide() async throws(SyncError) {
        let library = sync.library
        let entries = try SyncError.store { () throws(StoreError) in try library.documents() }
        local = Dictionary(entries.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        trashed = Set(((try? await sync.library.trashedDocuments()) ?? []).map(\.id))
        baseIDs = Set(store.baseIDs())
        // The index tells, without reading a base, whether its document needs work; a base is
        // read only when its entry is missing or describes another version of the file.
        let open = sync.library.openSessions()
        for id in Set(local.keys).union(baseIDs).sorted(by: { $0.precedesInBytes($1) }) {
            if !baseIDs.contains(id) { localWork.insert(id); continue }
            var summary = index[id]
            if summary == nil || summary!.file != store.baseFileIdentity(id) {
                guard let base = store.base(id) else { localWork.insert(id); continue }
                bases[id] = base
                summary = store.indexEntry(for: base)
                index[id] = summary
                indexChanged = true
                if summary == nil { localWork.insert(id); continue }
            }
            let entry = local[id]
            var modified = entry?.modified.milliseconds
            // Open in this process: its edits are in memory before the manifest has them.
            if entry != nil, let s = open[id] { modified = await s.document.modified.milliseconds }
            if !summary!.published || (entry == nil) == summary!.live || (entry != nil && modified != summary!.docModified) {
                localWork.insert(id)
            }
        }
    }

    /// Speculation: a closed document that changed here is read, joined with its base and coded
    /// under its lock, and its blobs start going up, before the listing says whether a head of it
    /// changed elsewhere. If none did (the usual case) the round goes on from there; if one did,
    /// the prepared work is let go (its blobs, if any went up, are garbage, §8) and the document
    /// is merged as usual. Nothing is written locally before the listing.
    mutating func speculate(_ listingAnswered: Flag) async {
        // Blobs go up before the listing only to a remote known to hold no encryption settings
        // (`knownPlain`): never, in clear, to one this library has not listed yet.
        for id in localWork.sorted(by: { $0.precedesInBytes($1) }) where prepared.count < Self.speculationLimit {
            guard baseIDs.contains(id), local[id] != nil, !trashed.contains(id), sync.library.openSession(id) == nil else { continue }
            if bases[id] == nil { bases[id] = store.base(id) }
            guard bases[id] != nil else { continue }
            var round = DocumentRound(context, id: id, base: bases[id], heads: [], localPresent: true, inTrash: false)
            // Whatever goes wrong here is met again, and reported, by the document's own round.
            // Its blobs start going up now only while the listing is still on its way: once it is
            // in, they wait for it to say no head of the document changed (otherwise they would be
            // sent for nothing), and go up while the base is written.
            if (try? await round.prepareUnderLock(&report, uploadEarly: knownPlain && !listingAnswered.isSet)) == true { prepared[id] = round }
        }
    }

    mutating func discardPrepared() async {
        for id in Array(prepared.keys) { await prepared[id]!.discard() }
        prepared = [:]
    }

    /// The round once the listing of heads is in: steps 1 (the listing's result) to 6.
    mutating func finish(_ listed: Result<[RemoteEntry], RemoteError>) async throws(SyncError) -> SyncReport {
        var entries: [RemoteEntry] = []
        // Our heads that the server acknowledged and did not keep: written again, then the round fails.
        var notKept: [String] = []
        // Requests for blobs the server lost that this device holds (served this round).
        var lostTaken: [UUID: [(name: String, blob: BlobName)]] = [:]
        switch listed {
        case .success(let e):
            // Plain objects never go into an encrypted remote (its key settings are in heads/;
            // an encrypted round's listing, opened, never shows them).
            if e.contains(where: { $0.name == EncryptedRemote.settingsName && !$0.isFolder }) { throw .encryption(.remoteEncrypted) }
            if !knownPlain { store.recordPlain(sync.remote.identity) }
            entries = e
            notKept = try await headsNotKept(e)
            lostTaken = await lostBlobRequests(e)
        case .failure(.notFound):
            // A remote without heads/ (new, or emptied): nothing prepared goes on.
            await discardPrepared()
            notKept = try await headsNotKept([])
            if !knownPlain { store.recordPlain(sync.remote.identity) }
            let remote = sync.remote
            try await SyncError.remote { () async throws(RemoteError) in
                try await remote.makeFolder(LibrarySync.headsFolder)
                try await remote.makeFolder(LibrarySync.blobsFolder)
            }
        case .failure(let e): throw .remote(e)
        }
        // The server's name as the listing's reply gave it, for the next process's first round.
        if let name = (sync.remote as? WebDAVRemote)?.serverName.flatMap(SyncStateStore.keptServerName), name != recordedServer {
            store.recordServerName(sync.remote.identity, name)
        }
        let changed = changedHeads(entries)
        var work: [UUID] = []
        for id in Set(local.keys).union(baseIDs).union(changed.keys).sorted(by: { $0.precedesInBytes($1) }) {
            report.documentsChecked += 1
            if changed[id] != nil || localWork.contains(id) { work.append(id) }
        }
        // Prepared, but a head of it changed: merged from the start instead.
        for id in Array(prepared.keys) where changed[id] != nil {
            await prepared[id]!.discard()
            prepared[id] = nil
        }
        if work.isEmpty {
            if indexChanged { try? store.saveIndex(index) }
            return sync.finish(report, start)
        }
        // The bases of the documents at work (those of changed heads too, for the deletion stop).
        for id in work where bases[id] == nil && baseIDs.contains(id) { bases[id] = store.base(id) }
        // 3. The changed heads.
        let heads = await readHeads(changed)
        // 4. The mass-deletion stop, before anything is applied.
        try checkMassDeletion(heads)
        // 5. Each document, one at a time.
        for (i, doc) in work.enumerated() {
            if Task.isCancelled { throw .cancelled }
            try LibrarySync.checkRoundDeadline()
            context.progress.document(done: i, total: work.count, document: doc)
            try await runDocument(doc, heads: heads[doc] ?? [])
        }
        context.progress.document(done: work.count, total: work.count, document: nil)
        await removeServedRequests(lostTaken)
        // Entries of documents skipped this round are dropped: their bases are read next time.
        for doc in report.skipped.keys { index[doc] = nil }
        if indexChanged || !report.skipped.isEmpty { try? store.saveIndex(index) }
        if !notKept.isEmpty { throw .notKept(paths: notKept) }
        // Garbage, once a day at most, only in a round that had work (a round where nothing
        // changed stays one request). Its failure leaves the blobs; the round stands.
        if let g = context.options.garbage, report.skipped.isEmpty, sync.garbageDue(g) {
            do { report.garbage = try await sync.collectGarbageInRound(g) } catch { report.problems.append("garbage collection: \(error)") }
        }
        return sync.finish(report, start)
    }

    /// The heads of other devices listed with an ETag other than the one last read, by document.
    func changedHeads(_ entries: [RemoteEntry]) -> [UUID: [(name: String, etag: String?)]] {
        var changed: [UUID: [(name: String, etag: String?)]] = [:]
        for e in entries where !e.isFolder {
            guard let (doc, dev) = Head.parseFileName(e.name) else { continue }
            if dev == sync.device { continue }
            let etag = RemotePath.normalizedETag(e.etag)
            if etag == nil || seen[e.name] != etag { changed[doc, default: []].append((e.name, etag)) }
        }
        return changed
    }

    /// The changed heads, read; one that cannot be read is left out (reported) until it can.
    mutating func readHeads(_ changed: [UUID: [(name: String, etag: String?)]]) async -> [UUID: [ChangedHead]] {
        let remote = sync.remote
        var heads: [UUID: [ChangedHead]] = [:]
        for (doc, list) in changed {
            for (name, etag) in list {
                let got: Result<(bytes: [UInt8], etag: String?), RemoteError> = await LibrarySync.attempt { () async throws(RemoteError) in
                    try await remote.get(LibrarySync.headsFolder + "/" + name, maxBytes: Head.maxBytes)
                }
                switch got {
                case .failure(.notFound): continue  // removed between the listing and now
                case .failure(let e): report.problems.append("head \(name): \(e)")
                case .success(let (bytes, getTag)):
                    guard let head = try? Head.decode(bytes) else {
                        report.problems.append("head \(name) cannot be read (damaged or newer); left out until it can")
                        continue
                    }
                    guard head.document == doc, Head.fileName(document: head.document, device: head.device) == name else {
                        report.problems.append("head \(name) names another document or device; left out")
                        continue
                    }
                    // The listing's token when it gave one: the next listing is compared with it
                    // (a server may list a token of another kind than its GET's ETag: nginx,
                    // docs/sync.md §9). The bytes read are at least as new as the listing, so a
                    // head changed in between is only read again.
                    heads[doc, default: []].append(ChangedHead(name: name, etag: etag ?? RemotePath.normalizedETag(getTag), head: head))
                }
            }
        }
        return heads
    }

    /// Documents here that a head now says are deleted, and that did not change here since the
    /// last round: more than the limit stops the round before anything is applied.
    func checkMassDeletion(_ heads: [UUID: [ChangedHead]]) throws(SyncError) {
        var doomed: [UUID] = []
        for (doc, hs) in heads where local[doc] != nil {
            guard hs.contains(where: { $0.head.deleted != nil }) else { continue }
            if let b = bases[doc], local[doc]!.modified.milliseconds != b.docModified { continue }
            var probe = bases[doc]?.documentState
            for h in hs {
                let s = DocumentState(id: doc, title: h.head.title, origin: h.head.origin, deleted: h.head.deleted,
                                      assets: [:], pages: h.head.pages.mapValues { PageRecord(fields: $0.fields, removed: $0.removed) })
                probe = probe.map { $0.joined(s) } ?? s
            }
            if let p = probe, p.deleted != nil, p.deleted!.covers(p.title.stamp) { doomed.append(doc) }
        }
        let limit = context.options.trashLimit
        if doomed.count > limit {
            throw .massDeletion(count: doomed.count, limit: limit, documents: doomed.sorted { $0.precedesInBytes($1) })
        }
    }

    /// One document's round (the prepared one when no head of it changed), then the heads it
    /// joined recorded as seen and its index entry. A document that cannot be synced now is
    /// skipped (reported), the others go on; what concerns the whole library (its sync state,
    /// encryption, a cancellation) stops the round.
    mutating func runDocument(_ doc: UUID, heads: [ChangedHead]) async throws(SyncError) {
        let speculated = prepared.removeValue(forKey: doc)
        let fresh = DocumentRound(context, id: doc, base: bases[doc], heads: heads,
                                  localPresent: local[doc] != nil, inTrash: trashed.contains(doc))
        var round = speculated ?? fresh
        do {
            if speculated != nil && heads.isEmpty { try await round.finishUnderLock(&report) } else {
                if speculated != nil {
                    // A head of it listed as changed but not read (gone, or damaged): merged as usual.
                    await round.discard()
                    round = fresh
                }
                try await round.run(&report)
            }
            await round.recordHistory(&report)
            var seenChanged = false
            for h in round.joinedHeads { if let e = h.etag, seen[h.name] != e { seen[h.name] = e; seenChanged = true } }
            // Unchanged (only this device changed the document): not written again.
            if seenChanged { try store.saveSeen(seen) }
            if let b = round.savedBase { index[doc] = store.indexEntry(for: b) } else { index[doc] = nil }
            indexChanged = true
        } catch {
            switch error {
            case .localState, .encryption, .cancelled: throw error
            case _ where error.isDocumentInUse: report.skipped[doc] = "open in a session; synced when it is closed"
            default: report.skipped[doc] = "\(error)"
            }
        }
    }
}
