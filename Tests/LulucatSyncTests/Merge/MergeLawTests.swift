// The merge is a join: commutative, associative, idempotent; and a simulated crowd of devices
// editing and syncing at random converges with no lost element and no resurrection.

import Foundation
import LulucatInk
import LulucatSyncTesting
import Testing
@testable import LulucatSync

/// A device of the simulation: its local document (pages of (id, fingerprint)) and its base.
private struct SimDevice {
    var id: UUID
    var title = "t"
    var pages: [(UUID, [(UUID, UInt64)])] = []
    var base: DocumentState?
    var published: DocumentState?
}

private let docID = UUID(uuidString: "00000000-0000-0000-0000-0000000000D0")!
private let origin = DocumentOrigin(created: 0, engine: "snapshot", codec: "compact")

private func localDocument(_ d: SimDevice) -> LocalDocument {
    LocalDocument(id: docID, title: d.title, origin: origin,
                  pages: d.pages.map { LocalPage(id: $0.0, canvas: .letter, elements: $0.1.map { (id: $0.0, fingerprint: $0.1) }) })
}

/// Materializes a merged state as the local document.
private func materialize(_ s: DocumentState) -> [(UUID, [(UUID, UInt64)])] {
    s.orderedLivePageIDs.map { pid in
        let st = s.pages[pid]!.state
        return (pid, st.orderedIDs.map { ($0, st.elements[$0]!.fingerprint) })
    }
}

private struct Ledger {
    var added = Set<UUID>()
    var erased = Set<UUID>()
    var removedPages = Set<UUID>()
    var pageOf: [UUID: UUID] = [:]
    /// Elements on a page when a device removed it: they may go with it.
    var removedWithPage = Set<UUID>()
}

private func randomEdit(_ d: inout SimDevice, _ rng: inout TestRandom, _ ledger: inout Ledger) {
    switch Int.random(in: 0..<10, using: &rng) {
    case 0...3:  // add a stroke
        if d.pages.isEmpty { d.pages.append((rng.uuid(), [])) }
        let p = Int.random(in: 0..<d.pages.count, using: &rng)
        let id = rng.uuid()
        ledger.added.insert(id)
        ledger.pageOf[id] = d.pages[p].0
        let at = Int.random(in: 0...d.pages[p].1.count, using: &rng)
        d.pages[p].1.insert((id, rng.next()), at: at)
    case 4:  // erase: the stroke goes, pieces with new ids come
        guard let p = d.pages.indices.randomElement(using: &rng), !d.pages[p].1.isEmpty else { return }
        let i = Int.random(in: 0..<d.pages[p].1.count, using: &rng)
        ledger.erased.insert(d.pages[p].1[i].0)
        var pieces: [(UUID, UInt64)] = []
        for _ in 0..<Int.random(in: 0...2, using: &rng) {
            let id = rng.uuid()
            ledger.added.insert(id)
            ledger.pageOf[id] = d.pages[p].0
            pieces.append((id, rng.next()))
        }
        d.pages[p].1.replaceSubrange(i...i, with: pieces)
    case 5:  // transform: same id, new bytes
        guard let p = d.pages.indices.randomElement(using: &rng), !d.pages[p].1.isEmpty else { return }
        let i = Int.random(in: 0..<d.pages[p].1.count, using: &rng)
        d.pages[p].1[i].1 = rng.next()
    case 6:  // move in z-order
        guard let p = d.pages.indices.randomElement(using: &rng), d.pages[p].1.count > 1 else { return }
        let e = d.pages[p].1.remove(at: Int.random(in: 0..<d.pages[p].1.count, using: &rng))
        d.pages[p].1.insert(e, at: Int.random(in: 0...d.pages[p].1.count, using: &rng))
    case 7:  // add a page
        d.pages.insert((rng.uuid(), []), at: Int.random(in: 0...d.pages.count, using: &rng))
    case 8:  // reorder pages
        guard d.pages.count > 1 else { return }
        let p = d.pages.remove(at: Int.random(in: 0..<d.pages.count, using: &rng))
        d.pages.insert(p, at: Int.random(in: 0...d.pages.count, using: &rng))
    default:  // retitle, or now and then remove a page (sometimes erasing on it first)
        if Int.random(in: 0..<4, using: &rng) == 0, d.pages.count > 1 {
            let i = Int.random(in: 0..<d.pages.count, using: &rng)
            if Bool.random(using: &rng), !d.pages[i].1.isEmpty {
                ledger.erased.insert(d.pages[i].1.remove(at: Int.random(in: 0..<d.pages[i].1.count, using: &rng)).0)
            }
            let p = d.pages.remove(at: i)
            ledger.removedPages.insert(p.0)
            ledger.removedWithPage.formUnion(p.1.map(\.0))
        } else {
            d.title = "title \(rng.next() % 100)"
        }
    }
}

/// One sync of a device: record, join with what some others published, apply, publish.
private func syncDevice(_ devices: inout [SimDevice], _ i: Int, with others: [Int]) {
    let clock = ([devices[i].base?.clock ?? 0] + others.compactMap { devices[$0].published?.clock }).max()!
    let recorded = LocalChanges.record(base: devices[i].base, local: localDocument(devices[i]),
                                       stamp: Stamp(clock: clock + 1, device: devices[i].id))!
    var merged = recorded
    for o in others { if let p = devices[o].published { merged = merged.joined(p) } }
    devices[i].base = merged
    devices[i].published = merged
    devices[i].pages = materialize(merged)
    devices[i].title = merged.title.value
}

@Suite struct MergeLawTests {
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func crowdConvergesWithNoLossAndNoResurrection(seed: UInt64) {
        var rng = TestRandom(seed: seed)
        var devices = (0..<3).map { _ in SimDevice(id: rng.uuid()) }
        var ledger = Ledger()
        for _ in 0..<60 {
            let i = Int.random(in: 0..<3, using: &rng)
            for _ in 0..<Int.random(in: 0...4, using: &rng) { randomEdit(&devices[i], &rng, &ledger) }
            let others = (0..<3).filter { $0 != i && Bool.random(using: &rng) }
            syncDevice(&devices, i, with: others)
        }
        // Two full rounds: everyone sees everyone.
        for _ in 0..<2 { for i in 0..<3 { syncDevice(&devices, i, with: [0, 1, 2].filter { $0 != i }) } }
        let final = devices[0].published!
        for d in devices {
            #expect(d.published == final)
            #expect(d.pages.map(\.0) == devices[0].pages.map(\.0))
            #expect(d.title == devices[0].title)
        }
        // No resurrection: no erased id is anywhere.
        let present = Set(devices[0].pages.flatMap { $0.1.map(\.0) })
        #expect(present.isDisjoint(with: ledger.erased))
        // No loss: every element added and never erased is present, unless it was on a page
        // when a device removed that page.
        let live = Set(final.orderedLivePageIDs)
        let expected = ledger.added.subtracting(ledger.erased).subtracting(ledger.removedWithPage)
        let lost = expected.subtracting(present)
        for e in lost {
            let p = ledger.pageOf[e]!
            Issue.record("lost \(e) on page \(p): removed here \(ledger.removedPages.contains(p)), known \(final.pages[p] != nil), live \(live.contains(p)), tombstoned \(final.pages[p]?.state.tombstones.contains(e) ?? false)")
        }
        // Every removed page whose removal lost to an edit is live; the rest are removed knowingly.
        for pid in live { #expect(final.pages[pid]!.isLive) }
    }

    @Test(arguments: [11, 12, 13, 14] as [UInt64])
    func joinIsCommutativeAssociativeIdempotent(seed: UInt64) {
        var rng = TestRandom(seed: seed)
        var devices = (0..<3).map { _ in SimDevice(id: rng.uuid()) }
        var ledger = Ledger()
        var states: [DocumentState] = []
        for round in 0..<30 {
            let i = round % 3
            for _ in 0..<3 { randomEdit(&devices[i], &rng, &ledger) }
            syncDevice(&devices, i, with: (0..<3).filter { $0 != i && Bool.random(using: &rng) })
            states.append(devices[i].published!)
        }
        for _ in 0..<40 {
            let a = states.randomElement(using: &rng)!, b = states.randomElement(using: &rng)!, c = states.randomElement(using: &rng)!
            #expect(a.joined(b) == b.joined(a))
            #expect(a.joined(b).joined(c) == a.joined(b.joined(c)))
            #expect(a.joined(a) == a)
            #expect(a.joined(b).joined(b) == a.joined(b))
        }
    }

    @Test func editWinsOverDelete() {
        let a = UUID(), b = UUID()
        var devA = SimDevice(id: a), devB = SimDevice(id: b)
        let page = UUID(), s1 = UUID(), s2 = UUID()
        devA.pages = [(page, [(s1, 1)]), (UUID(), [])]
        var devices = [devA, devB]
        syncDevice(&devices, 0, with: [])
        syncDevice(&devices, 1, with: [0])
        devA = devices[0]; devB = devices[1]
        // A removes the page; B, concurrently, draws on it.
        devices[0].pages.removeAll { $0.0 == page }
        devices[1].pages[devices[1].pages.firstIndex { $0.0 == page }!].1.append((s2, 2))
        syncDevice(&devices, 0, with: [])
        syncDevice(&devices, 1, with: [0])
        syncDevice(&devices, 0, with: [1])
        // The page comes back with the edit its remover had not seen; what the remover had seen
        // on it went with it (§5.4).
        #expect(devices[0].pages.contains { $0.0 == page && $0.1.map(\.0) == [s2] })
        #expect(devices[0].published == devices[1].published)
        // A removes it again, having seen B's stroke: now it goes.
        devices[0].pages.removeAll { $0.0 == page }
        syncDevice(&devices, 0, with: [1])
        syncDevice(&devices, 1, with: [0])
        #expect(!devices[1].pages.contains { $0.0 == page })
    }

    /// The resurrection of issue 31: A erases a stroke, then removes its page, before syncing,
    /// while B draws on the page. Whichever device joins first, the page comes back with B's
    /// stroke and the erased stroke is nowhere: not in the join, not in either device's page.
    @Test(arguments: [true, false])
    func eraseThenRemovePageWhileAnotherEditsResurrectsNothing(removerFirst: Bool) {
        let page = UUID(), other = UUID(), erased = UUID(), kept = UUID(), drawn = UUID()
        var devices = [SimDevice(id: UUID()), SimDevice(id: UUID())]
        devices[0].pages = [(page, [(erased, 1), (kept, 2)]), (other, [])]
        syncDevice(&devices, 0, with: [])
        syncDevice(&devices, 1, with: [0])
        devices[0].pages[devices[0].pages.firstIndex { $0.0 == page }!].1.removeAll { $0.0 == erased }
        devices[0].pages.removeAll { $0.0 == page }
        devices[1].pages[devices[1].pages.firstIndex { $0.0 == page }!].1.append((drawn, 3))
        let order = removerFirst ? [0, 1, 0, 1] : [1, 0, 1, 0]
        for i in order { syncDevice(&devices, i, with: [1 - i]) }
        #expect(devices[0].published == devices[1].published)
        let final = devices[0].published!
        #expect(final.pages[page]!.isLive)
        #expect(final.pages[page]!.state.elements[erased] == nil && final.pages[page]!.state.tombstones.contains(erased))
        for d in devices { #expect(d.pages.first { $0.0 == page }?.1.map(\.0) == [drawn]) }
    }

    @Test func positionKeysStayBetweenAndShort() {
        var rng = TestRandom(seed: 99)
        var keys: [PositionKey] = []
        var last: PositionKey? = nil
        for _ in 0..<1000 { last = PositionKey.between(last, nil); keys.append(last!) }
        #expect(keys.allSatisfy { $0.digits.count == 1 })
        for _ in 0..<2000 {
            let i = Int.random(in: 0..<keys.count - 1, using: &rng)
            guard let k = PositionKey.between(keys[i], keys[i + 1]) else { continue }
            #expect(keys[i] < k && k < keys[i + 1])
            keys.insert(k, at: i + 1)
        }
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 })
        #expect(PositionKey.between(nil, keys[0]).map { $0 < keys[0] } == true)
    }
}
