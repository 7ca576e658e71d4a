// A server that acknowledges and does not keep is noticed (docs/sync.md §6, step 1): the round's
// one listing must show every head this device published, at the size it was written.

import Foundation
import LulucatStore

extension LibraryRound {
    /// The paths of our published heads that `listed` (the round's listing of heads; empty when
    /// `heads/` is missing) lacks or lists at another size than written. Their bases are marked
    /// unpublished (durably) and their documents join this round's work, so they are written again
    /// now. On a remote this library has listed before (`knownPlain`) the server lost them: the
    /// paths are returned and the round then fails with `SyncError.notKept`. On a remote it has not
    /// (another remote set up with `lnote remote add`), what the bases say was published was
    /// published elsewhere: written here, no alarm, nothing returned. An entry without a size is
    /// checked for presence only; an index entry of an older version (no size) is not checked.
    mutating func headsNotKept(_ listed: [RemoteEntry]) async throws(SyncError) -> [String] {
        var published: [UUID: Int] = [:]
        for (id, entry) in index { if let size = entry.publishedHeadBytes, baseIDs.contains(id) { published[id] = size } }
        let lost = LibrarySync.headsNotKept(listed, published: published, device: sync.device)
        for (id, _) in lost.sorted(by: { $0.0.precedesInBytes($1.0) }) {
            if var round = prepared.removeValue(forKey: id) { await round.discard() }
            guard var b = bases[id] ?? store.base(id), b.published else { continue }
            let previous = b
            b.published = false
            try store.save(b, previous: previous, durable: true)
            bases[id] = b
            index[id] = store.indexEntry(for: b)
            indexChanged = true
            localWork.insert(id)
        }
        return knownPlain ? lost.map { LibrarySync.headsFolder + "/" + $0.1 }.sorted() : []
    }
}

extension LibrarySync {
    /// Of our published heads (document → size written), those `listed` lacks or lists at another
    /// size, with their names.
    static func headsNotKept(_ listed: [RemoteEntry], published: [UUID: Int], device: UUID) -> [(UUID, String)] {
        guard !published.isEmpty else { return [] }
        // Our heads in the listing: parsed from the names that end with our device's part (the
        // listing is parsed, not a name formatted per document: an idle round of 10,000 documents
        // does this for every one of them).
        let suffix = Array(("." + device.uuidString + ".head").utf8)
        var found: [UUID: Int?] = [:]
        found.reserveCapacity(published.count)
        for e in listed where !e.isFolder {
            let u = e.name.utf8
            guard u.count == 36 + suffix.count, u.suffix(suffix.count).elementsEqual(suffix),
                  let (doc, _) = Head.parseFileName(e.name) else { continue }
            found[doc] = e.size
        }
        var lost: [(UUID, String)] = []
        for (id, written) in published {
            switch found[id] {
            case .none: lost.append((id, Head.fileName(document: id, device: device)))
            case .some(let size?) where size != written: lost.append((id, Head.fileName(document: id, device: device)))
            default: break
            }
        }
        return lost
    }
}

extension SyncStateStore.IndexEntry {
    /// The size of our head as published, when the entry knows it.
    var publishedHeadBytes: Int? { published ? headBytes : nil }
}
