// A document round under the document's writer lock alone (docs/sync.md §6): a closed document that
// changed only here is read, joined with its base and coded without a session, possibly while the
// listing of heads is still on its way (LibraryRound's speculation).

import Foundation
import LulucatInk
import LulucatStore

extension DocumentRound {
    /// The round of a closed document that changed only here (no head of it changed): its writer
    /// lock while its changed pages are read and coded, no session (no open marker, no repair, no save).
    /// Returns false, having written nothing, when the document needs a session after all (it
    /// was not shut down cleanly, a page needs repair, or the join would change it).
    mutating func runUnderLock(_ report: inout SyncReport) async throws(SyncError) -> Bool {
        guard try await prepareUnderLock(&report, uploadEarly: false) else { return false }
        try await finishUnderLock(&report)
        return true
    }

    /// The first half of `runUnderLock`: takes the lock, reads, records, joins and codes, and lets
    /// the lock go before any network wait (the listing, the uploads, the head: an app saving the
    /// document meanwhile is not refused as "in use"; what it saves is newer than the times the
    /// base records, so the next round reads it). Writes nothing but, with `uploadEarly`, starts
    /// uploading the blobs (content-addressed: while the listing of heads is still on its way,
    /// LibraryRound's speculation; a blob no head comes to name is garbage, §8). Returns false
    /// when the document needs a session.
    mutating func prepareUnderLock(_ report: inout SyncReport, uploadEarly: Bool) async throws(SyncError) -> Bool {
        let (library, id) = (library, id)
        guard let base, let reader = try SyncError.store({ () throws(StoreError) in try library.lockForSyncRead(id) }) else { return false }
        lockedReader = reader
        defer {
            reader.release()
            lockedReader = nil
        }
        let baseState = base.documentState
        let stamp = try Self.nextStamp(after: baseState.clock, device: sync.device)
        let localDoc: LocalDocument
        do { localDoc = try await readLocal(reader) } catch {
            guard case .store = error, !error.isDocumentInUse else { throw error }
            return false  // a session reads it (and repairs what needs it)
        }
        guard let merged = LocalChanges.record(base: baseState, local: localDoc, stamp: stamp), merged.isLive,
              applyWritesNothing(merged, localDoc: localDoc, document: reader.document) else { return false }
        var times = ModifiedTimes(document: reader.document.modified.milliseconds)
        for e in reader.document.pages { times.pages[e.id] = e.modified.milliseconds }
        let publication = try await publication(for: merged, remoteStates: [])
        prepared = Prepared(publication: publication, times: times, pushed: merged != baseState)
        let uploads = publication.uploads
        if uploadEarly, !uploads.isEmpty, !base.published || base.head != publication.head || healing {
            let remote = self.remote
            earlyUploads = Self.uploadTask(remote, uploads, of: id, context: context)
        }
        return true
    }

    /// The second half, without the document's lock: the base, the blobs (or the wait for their
    /// early uploads), the head.
    mutating func finishUnderLock(_ report: inout SyncReport) async throws(SyncError) {
        guard let p = prepared else {
            assertionFailure("finishUnderLock without a prepared round")
            return
        }
        let uploading = earlyUploads
        earlyUploads = nil
        report.paths[id] = .underLock
        try await publish(p.publication, times: p.times, uploading: uploading, &report)
        if p.pushed { report.documentsPushed += 1 }
    }

    /// Lets a prepared round go without publishing anything: its early uploads awaited (whatever
    /// they did is garbage until a head names those blobs).
    mutating func discard() async {
        prepared = nil
        if let t = earlyUploads { _ = await t.value }
        earlyUploads = nil
    }

    /// Whether `apply` would leave the document as it is: the same pages in the same order, each
    /// read page holding the merged elements (ids and fingerprints) and canvas, the same title.
    func applyWritesNothing(_ merged: DocumentState, localDoc: LocalDocument, document: DocumentMetadata) -> Bool {
        let order = merged.orderedLivePageIDs
        guard document.pages.map(\.id) == order, document.title == merged.title.value else { return false }
        let localPages = Dictionary(localDoc.pages.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        for pid in order {
            guard let lp = localPages[pid], let rec = merged.pages[pid] else { return false }
            let canvas = QuantizedSize(width: rec.fields.value.width, height: rec.fields.value.height)
            guard lp.canvas == canvas else { return false }
            let have = lp.elements ?? base?.states[pid].map { st in st.orderedIDs.map { ($0, st.elements[$0]!.fingerprint) } } ?? []
            let wanted = rec.state.orderedIDs
            guard have.count == wanted.count else { return false }
            for (h, w) in zip(have, wanted) where h.id != w || h.fingerprint != rec.state.elements[w]!.fingerprint { return false }
        }
        return true
    }
}
