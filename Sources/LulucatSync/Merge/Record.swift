// Recording what changed on this device since the last merge, as new stamps on the base state
// (docs/sync.md §5.3 and §6 step 2). Pure values: the round supplies what it read from the store.

import Foundation
import LulucatInk

/// One local page as the round read it.
package struct LocalPage: Sendable, Equatable {
    package var id: UUID
    package var canvas: QuantizedSize
    /// The elements in z-order as (id, fingerprint); nil when the page has not changed since the
    /// base (its base state is taken as it is).
    package var elements: [(id: UUID, fingerprint: UInt64)]?
    /// The page was salvaged from damage since the base (`lnote repair`, or a session that met
    /// the damage): an element of the base it lacks was lost to the damage, not erased, so it is
    /// kept (not tombstoned) and comes back from the blobs; docs/sync.md §6 step 5.3.
    package var salvaged: Bool

    package init(id: UUID, canvas: QuantizedSize, elements: [(id: UUID, fingerprint: UInt64)]?, salvaged: Bool = false) {
        self.id = id
        self.canvas = canvas
        self.elements = elements
        self.salvaged = salvaged
    }

    package static func == (a: LocalPage, b: LocalPage) -> Bool {
        a.id == b.id && a.canvas == b.canvas && a.elements?.map(\.id) == b.elements?.map(\.id)
            && a.elements?.map(\.fingerprint) == b.elements?.map(\.fingerprint)
    }
}

/// One local document as the round read it.
package struct LocalDocument: Sendable, Equatable {
    package var id: UUID
    package var title: String
    package var origin: DocumentOrigin
    /// In reading order.
    package var pages: [LocalPage]
    package var assets: [UUID: AssetRef]

    package init(id: UUID, title: String, origin: DocumentOrigin, pages: [LocalPage], assets: [UUID: AssetRef] = [:]) {
        self.id = id
        self.title = title
        self.origin = origin
        self.pages = pages
        self.assets = assets
    }
}

package enum LocalChanges {
    /// The base with this device's changes recorded under `stamp`. `local` nil means the document
    /// was deleted here. With no base the whole document is new.
    package static func record(base: DocumentState?, local: LocalDocument?, stamp: Stamp) -> DocumentState? {
        guard let local else {
            guard var b = base else { return nil }
            if b.isLive { b.deleted = VersionVector.join(b.deleted, b.seen) }
            return b
        }
        var state = base ?? DocumentState(id: local.id, title: Register(local.title, stamp: stamp), origin: local.origin)
        if state.title.value != local.title || !state.isLive { state.title = Register(local.title, stamp: stamp) }
        for (id, a) in local.assets where state.assets[id] == nil { state.assets[id] = a }

        // Pages: what was removed here, what is new or changed, then the order.
        let localIDs = Set(local.pages.map(\.id))
        for (id, p) in state.pages where p.isLive && !localIDs.contains(id) { state.pages[id] = removing(p) }
        var keys: [PositionKey?] = []
        var tieIDs: [UUID] = []
        for lp in local.pages {
            tieIDs.append(lp.id)
            if var rec = state.pages[lp.id] {
                if let els = lp.elements { rec.state = diff(rec.state, els, stamp: stamp, keepingMissing: lp.salvaged) }
                if !rec.isLive || rec.fields.value.width != lp.canvas.width || rec.fields.value.height != lp.canvas.height {
                    rec.fields = Register(PageFields(key: rec.fields.value.key, width: lp.canvas.width, height: lp.canvas.height), stamp: stamp)
                }
                state.pages[lp.id] = rec
                keys.append(rec.fields.value.key)
            } else {
                let st = diff(PageState(), lp.elements ?? [], stamp: stamp)
                state.pages[lp.id] = PageRecord(fields: Register(PageFields(key: PositionKey([0]), width: lp.canvas.width,
                                                                             height: lp.canvas.height), stamp: stamp), state: st)
                keys.append(nil)
            }
        }
        let newKeys = assignKeys(keys, ids: tieIDs)
        for (i, lp) in local.pages.enumerated() where newKeys[i] != keys[i] {
            var f = state.pages[lp.id]!.fields.value
            f.key = newKeys[i]
            state.pages[lp.id]!.fields = Register(f, stamp: stamp)
        }
        return state
    }

    /// A page removed here (docs/sync.md §5.4): its removal is what this device had seen of it,
    /// and every element it knew of the page is tombstoned with it. The page's content is gone
    /// from the library by the time a round runs, so what was erased on it since the base cannot
    /// be told from what was not: tombstoning all of it is what keeps an erased stroke from
    /// coming back when another device's concurrent edit makes the page live again (edit wins:
    /// the page comes back with the edits its remover had not seen).
    static func removing(_ page: PageRecord) -> PageRecord {
        var p = page
        var vv = p.removed ?? VersionVector()
        p.include(into: &vv)
        p.removed = vv
        p.state.tombstones.formUnion(p.state.elements.keys)
        p.state.elements = [:]
        return p
    }

    /// The page state with the local elements recorded: tombstones for ids gone, new versions for
    /// changed fingerprints, new entries for new ids, new keys for what moved. With
    /// `keepingMissing` (a salvaged page) ids gone are kept as the base has them.
    static func diff(_ base: PageState, _ local: [(id: UUID, fingerprint: UInt64)], stamp: Stamp, keepingMissing: Bool = false) -> PageState {
        var state = base
        let ids = Set(local.map(\.id))
        for id in base.elements.keys where !ids.contains(id) && !keepingMissing {
            state.elements[id] = nil
            state.tombstones.insert(id)
        }
        var keys: [PositionKey?] = []
        for (id, fp) in local {
            if var e = state.elements[id] {
                if e.fingerprint != fp {
                    e.fingerprint = fp
                    e.stamp = stamp
                    state.elements[id] = e
                }
                keys.append(e.key)
            } else {
                keys.append(nil)
            }
        }
        let newKeys = assignKeys(keys, ids: local.map(\.id))
        for (i, (id, fp)) in local.enumerated() where newKeys[i] != keys[i] {
            // Ids tombstoned before cannot come back; they are dropped by the join.
            state.elements[id] = ElementEntry(stamp: stamp, key: newKeys[i], fingerprint: fp)
        }
        for id in state.tombstones { state.elements[id] = nil }
        return state
    }

    /// Keys for a sequence in its new order: the longest run whose old keys already increase keeps
    /// them; every other position (new or moved) gets a key between its neighbours.
    static func assignKeys(_ old: [PositionKey?], ids: [UUID]) -> [PositionKey] {
        let n = old.count
        // Longest strictly increasing subsequence by (key, id), patience sorting.
        func less(_ i: Int, _ j: Int) -> Bool {
            let a = old[i]!, b = old[j]!
            if a != b { return a < b }
            return ids[i].precedesInBytes(ids[j])
        }
        var tails: [Int] = []
        var previous = [Int](repeating: -1, count: n)
        for i in 0..<n where old[i] != nil {
            var lo = 0, hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if less(tails[mid], i) { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { previous[i] = tails[lo - 1] }
            if lo == tails.count { tails.append(i) } else { tails[lo] = i }
        }
        var kept = [Bool](repeating: false, count: n)
        var k = tails.last ?? -1
        while k >= 0 { kept[k] = true; k = previous[k] }

        var out: [PositionKey] = []
        out.reserveCapacity(n)
        var nextKept = [PositionKey?](repeating: nil, count: n + 1)
        for i in stride(from: n - 1, through: 0, by: -1) { nextKept[i] = kept[i] ? old[i] : nextKept[i + 1] }
        var prev: PositionKey? = nil
        for i in 0..<n {
            if kept[i] {
                out.append(old[i]!)
            } else {
                let upper = nextKept[i + 1]
                let key = PositionKey.between(prev, upper) ?? prev ?? upper ?? PositionKey([1])
                out.append(key)
            }
            prev = out[i]
        }
        return out
    }
}
