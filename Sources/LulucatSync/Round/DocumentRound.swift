// One document's part of a round: read what changed here, join it with the heads that changed
// there, apply the join under the document's lock, then upload its blobs and its head.

import Foundation
import LulucatInk
import LulucatStore

/// A head of another device that changed since this device last read it.
struct ChangedHead {
    var name: String
    var etag: String?
    var head: Head
}

/// What every document round of one library round shares.
struct RoundContext {
    let sync: LibrarySync
    let options: SyncOptions
    /// Blobs the remote lost that this device uploads again this round, by document
    /// (`LibraryRound.lostBlobRequests`): left out of what the remote is known to hold.
    var lost: [UUID: Set<BlobName>] = [:]
    /// Requests for lost blobs listed or written this round (`DocumentRound.requestLostBlob`).
    let requested = LostBlobRequests()
    /// The blobs whose upload failed this round: not sent again within it.
    let failedUploads = FailedUploads()
    /// What the progress callback is told (the document at work, its pages moved).
    let progress = RoundProgress()
}

/// One document's round. It is a small state machine: made fresh (`run` takes it through the
/// session or the lock alone), or prepared under the lock before the listing is in
/// (`prepareUnderLock`), then finished (`finishUnderLock`) or let go (`discard`).
struct DocumentRound {
    let context: RoundContext
    let id: UUID
    let base: Base?
    let heads: [ChangedHead]
    /// Where the document is here: in the library (`localPresent`), in the trash, or nowhere.
    let localPresent: Bool
    let inTrash: Bool
    /// The heads that went into the join (their ETags are recorded as seen).
    var joinedHeads: [(name: String, etag: String?)] = []

    var sync: LibrarySync { context.sync }
    var options: SyncOptions { context.options }
    /// The remote as this document's round sees it (an encrypted remote needs the document).
    var remote: any Remote { (sync.remote as? any DocumentScopedRemote)?.scoped(to: id) ?? sync.remote }
    var library: Library { sync.library }

    init(_ context: RoundContext, id: UUID, base: Base?, heads: [ChangedHead], localPresent: Bool, inTrash: Bool) {
        self.context = context
        self.id = id
        self.base = base
        self.heads = heads
        self.localPresent = localPresent
        self.inTrash = inTrash
    }

    /// Page contents by blob name, decoded once per round.
    var snapshots: [BlobName: PageSnapshot] = [:]
    /// What each decoded page blob would take here at least (`DocumentLimits.pageBytes`).
    var pageBytes: [BlobName: UInt64] = [:]
    /// The page blob a head named that the server did not have (`state(of:name:)`).
    var missingBlob: (page: UUID, blob: BlobName)?
    /// What this round read of the document here.
    var read = LocalRead()
    /// The document's session while the round holds it.
    var session: DocumentSession?
    /// The session is the app's (the document was open in this process): the round merges into
    /// it, keeps what is edited there meanwhile, and never closes it.
    var appHeld = false
    /// Of an app's session, what the apply knows of its pages.
    var applied = AppliedPages()
    /// The base this round saved last (for the index).
    var savedBase: Base?
    /// The document read under its lock alone (`runUnderLock`), while the round holds it.
    var lockedReader: LockedDocumentReader?
    /// What `prepareUnderLock` made, and the uploads of its blobs it started.
    var prepared: Prepared?
    var earlyUploads: Task<Result<Int, SyncError>, Never>?
    /// The history chunks this round's publication made (docs/sync.md §12.2), by name.
    var ownHistoryChunks: [BlobName: HistoryBlob] = [:]
    /// Image assets this device lacks, fetched with the page blobs that show them, before the
    /// document is locked (`prefetchAssets`), by asset id.
    var fetchedAssets: [UUID: [UInt8]] = [:]

    mutating func run(_ report: inout SyncReport) async throws(SyncError) {
        // The heads that changed, as states, their page blobs fetched when new to us: before
        // the document is locked, so no lock is held while the server answers.
        let remoteStates = await remoteStates(&report)
        await prefetchAssets(remoteStates)
        if localPresent, let s = library.openSession(id), !(await s.closing) {
            // Open in this process: merged through its session, which stays the app's.
            session = s
            appHeld = true
            report.paths[id] = .appSession
            try await runLocked(&report, remoteStates: remoteStates)
            return
        }
        if heads.isEmpty, base != nil, localPresent, !inTrash {
            // Changed here only: read under the lock, without a session (nothing is written to
            // the document), unless the join asks for a write, which takes the session below.
            var attempt = self
            var r = report
            do {
                if try await attempt.runUnderLock(&r) {
                    self = attempt
                    report = r
                    return
                }
            } catch {
                report = r
                throw error
            }
        }
        if localPresent {
            let (library, id, options) = (library, id, options)
            session = try await SyncError.store { () async throws(StoreError) in try await library.open(id, options: options.session) }
        }
        report.paths[id] = .session
        do {
            try await runLocked(&report, remoteStates: remoteStates)
        } catch {
            if let s = session {
                // Whatever was applied is a merge result: keep it (the next round records it
                // again and joins to the same state).
                do { try await s.close() } catch { await s.abandon() }
            }
            throw error
        }
        if let s = session { try await SyncError.store { () async throws(StoreError) in try await s.close() } }
    }

    /// What `prepareUnderLock` made: the join of the document's local changes with its base,
    /// coded as blobs and a head, not yet published.
    struct Prepared {
        var publication: Publication
        var times: ModifiedTimes
        var pushed: Bool
    }

    /// The round through a session (the app's or one it opened), or of a document that is not
    /// here: join the changed heads (1, read before: `remoteStates`) with what changed here,
    /// apply the join, then publish it, a session the round opened closed first (its lock is not
    /// held while the blobs and the head go up).
    mutating func runLocked(_ report: inout SyncReport, remoteStates: [(Head, DocumentState)]) async throws(SyncError) {
        let baseState = base?.documentState
        // 2. What changed here, under one new stamp.
        var clock = baseState?.clock ?? 0
        for (h, s) in remoteStates { clock = max(clock, h.clock, s.clock) }
        let stamp = try Self.nextStamp(after: clock, device: sync.device)
        var localDoc: LocalDocument?
        if let s = session { localDoc = try await readLocal(s) }
        var recorded = LocalChanges.record(base: baseState, local: localDoc, stamp: stamp)
        if session == nil, inTrash, let b = baseState, b.isLive, let trashed = try await readTrashed() {
            // Deleted here since the last round, its copy in the trash: what was erased on it
            // before the deletion is recorded first, so that an edit elsewhere that brings the
            // document back brings no erased stroke back (docs/sync.md §5.4).
            recorded = LocalChanges.record(base: LocalChanges.record(base: b, local: trashed, stamp: stamp), local: nil, stamp: stamp)
        }
        // 3. The join.
        var merged = recorded
        for (_, s) in remoteStates { merged = merged.map { $0.joined(s) } ?? s }
        guard let merged else { return }
        let localChanged = recorded != baseState
        let remoteChanged = remoteStates.contains { merged != recorded && $0.1 != baseState }
        // 4. Apply here.
        try await applyHere(merged, localDoc: localDoc, &report)
        // 5. Blobs, then the head.
        let publication = try await publication(for: merged, remoteStates: remoteStates)
        let times = try await savedTimes()
        if !appHeld, let s = session {
            // Saved: closed before the network wait. What the app changes from now on is newer
            // than `times`, so the next round reads it.
            try await SyncError.store { () async throws(StoreError) in try await s.close() }
            session = nil
        }
        try await publish(publication, times: times, &report)
        if localChanged { report.documentsPushed += 1 }
        if remoteChanged || base == nil && !localPresent { report.documentsPulled += 1 }
        if localChanged && !remoteStates.isEmpty { report.documentsMerged += 1 }
    }

    /// The document's copy in the trash as it is, read under its lock (nil when it needs a
    /// session's repair: its deletion is then recorded from the base alone, as before).
    mutating func readTrashed() async throws(SyncError) -> LocalDocument? {
        let (library, id) = (library, id)
        guard let reader = try SyncError.store({ () throws(StoreError) in try library.lockForSyncRead(id, inTrash: true) }) else { return nil }
        defer { reader.release() }
        return try await readLocal(reader)
    }

    /// This round's stamp: one past the largest clock known. Clocks read are at most
    /// `Stamp.maxClock`; one there already (pushed by a head at the bound) cannot go further, and a
    /// head beyond the bound would be refused by every device, so the document is left alone.
    static func nextStamp(after clock: UInt64, device: UUID) throws(SyncError) -> Stamp {
        guard clock < Stamp.maxClock else {
            throw .damaged(object: "the document's logical clock", reason: "a head from the remote pushed it to its maximum (\(Stamp.maxClock))")
        }
        return Stamp(clock: clock + 1, device: device)
    }

    /// The changed heads as states; a head whose blobs cannot be read is left out (reported).
    mutating func remoteStates(_ report: inout SyncReport) async -> [(Head, DocumentState)] {
        var out: [(Head, DocumentState)] = []
        for h in heads {
            do {
                out.append((h.head, try await state(of: h.head, name: h.name)))
                joinedHeads.append((h.name, h.etag))
            } catch {
                var why = "\(error)"
                if let (page, blob) = missingBlob { why = await requestLostBlob(blob, of: "page \(page)") }
                report.problems.append("document \(id): head \(h.name) left out of this round (both kept): \(why)")
            }
            missingBlob = nil
        }
        return out
    }

    /// Makes the document here what the join says: to the trash, restored, created, or merged.
    mutating func applyHere(_ merged: DocumentState, localDoc: LocalDocument?, _ report: inout SyncReport) async throws(SyncError) {
        if appHeld, let hook = options.beforeApplyingToOpenSession { await hook(id) }
        if !merged.isLive {
            if appHeld {
                // A document open in the app is not moved away under it: applied when it is closed.
                throw .deletedWhileOpen(id)
            }
            if let s = session {
                let (library, id) = (library, id)
                try await SyncError.store { () async throws(StoreError) in
                    try await s.close()
                    try await library.moveToTrash(id)
                }
                session = nil
                report.documentsTrashed += 1
            }
            return
        }
        var localDoc = localDoc
        if session == nil {
            let (library, id, options, inTrash) = (library, id, options, inTrash)
            let s = try await SyncError.store { () async throws(StoreError) in
                if inTrash {
                    try await library.restoreFromTrash(id)
                } else {
                    let created = Date(timeIntervalSince1970: Double(merged.origin.created) / 1000)
                    try library.createSyncedDocument(id: id, title: merged.title.value, created: created,
                                                     engine: EngineKind(rawValue: merged.origin.engine) ?? .snapshot,
                                                     codec: SampleCodecID(name: merged.origin.codec) ?? .compact)
                }
                return try await library.open(id, options: options.session)
            }
            if inTrash { report.documentsRestored += 1 } else { report.documentsCreated += 1 }
            session = s
            localDoc = try await readLocal(s)
        }
        report.pagesPulled += try await apply(merged, localDoc: localDoc!, to: session!)
    }

    /// The document saved, and the `modified` times its base records. The app's session: its one
    /// writer saves (with whatever was edited meanwhile); a page counts as unchanged since this
    /// state only when the apply said so or nothing was applied to it, and the others (and the
    /// document) are read again next round.
    func savedTimes() async throws(SyncError) -> ModifiedTimes {
        var times = ModifiedTimes()
        guard let s = session else { return times }
        if appHeld {
            try await SyncError.store { () async throws(StoreError) in try await s.flush() }
            let entries = await s.pageEntries()
            for e in entries {
                if applied.uncertain.contains(e.id) { times.pages[e.id] = -1 }
                else if let m = applied.modified[e.id] { times.pages[e.id] = m }
                else if let m = read.pageModified[e.id] { times.pages[e.id] = m }
                else { times.pages[e.id] = -1 }
            }
            let untouched = applied.uncertain.isEmpty && applied.modified.isEmpty && Set(entries.map(\.id)) == Set(read.pageModified.keys)
            times.document = untouched ? read.documentModified : -1
        } else {
            try await SyncError.store { () async throws(StoreError) in try await s.save() }
            for e in await s.pageEntries() { times.pages[e.id] = e.modified.milliseconds }
            times.document = await s.document.modified.milliseconds
        }
        return times
    }
}
