// A document round's apply (docs/sync.md §6 step 5.3): the local document made what the join says,
// through a session; the app's own session keeps what was edited in it meanwhile.

import Foundation
import LulucatInk
import LulucatStore

/// Of an app's session, what the apply knows of its pages afterwards.
struct AppliedPages {
    /// The pages whose `modified` is known to match the merged state after the apply.
    var modified: [UUID: Int64] = [:]
    /// The pages edited in the app meanwhile (read again next round).
    var uncertain: Set<UUID> = []
}

extension DocumentRound {
    /// Makes the local document what the join says; returns how many pages it wrote.
    mutating func apply(_ merged: DocumentState, localDoc: LocalDocument, to s: DocumentSession) async throws(SyncError) -> Int {
        var written = 0
        let order = merged.orderedLivePageIDs
        let live = Set(order)
        let localPages = Dictionary(localDoc.pages.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        /// A page as this round read it (what the merge took as this device's), as ids and fingerprints.
        func seen(_ lp: LocalPage) -> [(id: UUID, fingerprint: UInt64)] {
            lp.elements ?? base?.states[lp.id].map { st in st.orderedIDs.map { ($0, st.elements[$0]!.fingerprint) } } ?? []
        }
        for p in await s.pageIDs() where !live.contains(p) {
            if appHeld {
                // Only a page this round read, and unchanged since: one added or edited in the
                // app meanwhile stays (an edit wins over a removal; the next round publishes it).
                guard let lp = localPages[p] else { continue }
                let asRead = SeenPage(elements: seen(lp), canvas: lp.canvas)
                let (removable, _) = try await SyncError.store { () async throws(StoreError) in 
                    try await s.updatePage(p) { current in
                        PageMerge.mayRemove(current: current, seen: asRead) ? (.remove, true) : (.keep, false)
                    }
                }
                if removable { written += 1 } else { applied.uncertain.insert(p) }
            } else {
try await SyncError.store { () async throws(StoreError) in try await s.removePageUnrecorded(p) }
                written += 1
            }
        }
        // New pages of a session the round holds alone go in by batches, one document.json write
        // each (`insertSyncedPages`); the batch is written before anything else touches the session.
        var pending: [(id: UUID, content: PageContent, index: Int)] = []
        var pendingElements = 0
        func insertPending() async throws(SyncError) {
            guard !pending.isEmpty else { return }
            let batch = pending
            pending = []
            pendingElements = 0
            try await SyncError.store { () async throws(StoreError) in try await s.insertSyncedPages(batch) }
        }
        for (i, pid) in order.enumerated() {
            let rec = merged.pages[pid]!
            let canvas = QuantizedSize(width: rec.fields.value.width, height: rec.fields.value.height)
            let wanted = rec.state.orderedIDs.map { ($0, rec.state.elements[$0]!.fingerprint) }
            if let lp = localPages[pid] {
                let have = seen(lp)
                if lp.canvas == canvas && have.map(\.0) == wanted.map(\.0) && have.map(\.1) == wanted.map(\.1) { continue }
                try await insertPending()
                let content = try await self.content(of: pid, in: merged)
                try await ensureAssets(content, merged, s)
                if appHeld {
                    guard await s.pageIDs().contains(pid) else { continue }  // removed in the app meanwhile
                    let asRead = SeenPage(elements: have, canvas: lp.canvas)
                    let (editedSince, modified) = try await SyncError.store { () async throws(StoreError) in 
                        try await s.updatePage(pid) { current in
                            let m = PageMerge.changes(current: current, seen: asRead, merged: content)
                            return (.change(m.changes), m.editedSince)
                        }
                    }
                    if !editedSince, let modified { applied.modified[pid] = modified.milliseconds } else { applied.uncertain.insert(pid) }
                } else {
                    _ = try await SyncError.store { () async throws(StoreError) in 
                        try await s.updatePage(pid) { current in (.change(PageMerge.changes(current: current, seen: nil, merged: content).changes), ()) }
                    }
                }
            } else {
                let content = try await self.content(of: pid, in: merged)
                try await ensureAssets(content, merged, s)
                if appHeld {
                    let at = min(i, await s.pageIDs().count)
                    try await SyncError.store { () async throws(StoreError) in try await s.insertSyncedPage(id: pid, content: content, at: at) }
                    applied.uncertain.insert(pid)
                } else {
                    pending.append((pid, content, min(i, await s.pageIDs().count + pending.count)))
                    pendingElements += content.elements.count
                    if pending.count >= Self.insertBatch || pendingElements >= Self.insertBatchElements { try await insertPending() }
                }
            }
            written += 1
        }
        try await insertPending()
        if appHeld {
            // Pages added in the app meanwhile keep their places; the merged pages take the
            // places merged pages hold, in the merged order.
            let ids = await s.pageIDs()
            let slots = ids.indices.filter { live.contains(ids[$0]) }
            let placed = order.filter { Set(ids).contains($0) }
            var want = ids
            for (k, slot) in slots.enumerated() where k < placed.count { want[slot] = placed[k] }
            for (i, pid) in want.enumerated() {
                let now = await s.pageIDs()
                if i < now.count, now[i] != pid, now.contains(pid) { try await SyncError.store { () async throws(StoreError) in try await s.movePageUnrecorded(pid, to: i) } }
            }
            let title = await s.title
            if title != merged.title.value && title == localDoc.title { try await SyncError.store { () async throws(StoreError) in try await s.rename(to: merged.title.value) } }
        } else {
            for (i, pid) in order.enumerated() {
                let ids = await s.pageIDs()
                if ids[i] != pid { try await SyncError.store { () async throws(StoreError) in try await s.movePageUnrecorded(pid, to: i) } }
            }
            if await s.title != merged.title.value { try await SyncError.store { () async throws(StoreError) in try await s.rename(to: merged.title.value) } }
        }
        return written
    }

    /// New pages inserted with one document.json write at most (`apply`), and their elements at most.
    static let insertBatch = 64
    static let insertBatchElements = 200_000

    /// How many bytes of image assets `prefetchAssets` holds at most; beyond, an asset's blob is
    /// fetched when its page is applied, as before.
    static let prefetchedAssetBytes = 64 << 20

    /// Fetches the blobs of the image assets this device lacks that the pages fetched this round
    /// show, before the document is locked, so that no lock waits on the server for them
    /// (docs/sync.md §6 step 1). Best effort: an asset it could not fetch (missing, damaged, over
    /// the budget) is fetched, and its failure reported, when its page is applied.
    mutating func prefetchAssets(_ remoteStates: [(Head, DocumentState)]) async {
        var shown = Set<UUID>()
        for snapshot in snapshots.values {
            for e in snapshot.elements.values { if case .image(let image) = e { shown.insert(image.assetID) } }
        }
        guard !shown.isEmpty else { return }
        let package = library.package(id)
        var held = 0
        for (head, _) in remoteStates {
            for (aid, ref) in head.assets.sorted(by: { $0.key.precedesInBytes($1.key) }) where shown.contains(aid) && fetchedAssets[aid] == nil {
                guard Self.lacksAsset(aid, ext: ref.ext, of: package, in: library),
                      let bytes = try? await fetchBlob(ref.blob) else { continue }
                // The first is kept whatever its size (it is bounded by the blob cap): fetched
                // again under the lock it would cost the same.
                guard held == 0 || held + bytes.count <= Self.prefetchedAssetBytes else { continue }
                fetchedAssets[aid] = bytes
                held += bytes.count
            }
        }
    }

    /// Writes the assets a page shows and this device lacks, from their blobs, before the page:
    /// those fetched before the lock (`prefetchAssets`), else fetched now.
    func ensureAssets(_ content: PageContent, _ merged: DocumentState, _ s: DocumentSession) async throws(SyncError) {
        for aid in content.assetIDs {
            guard let ref = merged.assets[aid] else { continue }
            guard Self.lacksAsset(aid, ext: ref.ext, of: s.package, in: library) else { continue }
            let bytes: [UInt8]
            if let fetched = fetchedAssets[aid], BlobName(of: fetched) == ref.blob {
                bytes = fetched
            } else {
                do { bytes = try await fetchBlob(ref.blob) } catch {
                    guard case .remote(.notFound) = error else { throw error }
                    throw .damaged(object: "document \(id)", reason: await requestLostBlob(ref.blob, of: "image \(aid)"))
                }
            }
            try await SyncError.store { () async throws(StoreError) in try await s.importSyncedAsset(Data(bytes), id: aid, fileExtension: ref.ext) }
        }
    }
}
