// A document open in this process receives merged changes through its session (docs/sync.md §6
// step 5.1): the canvas hears them, its own unsaved strokes stay, and edits made while the round
// runs are kept and published by the next round. No stroke is lost on either side.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreSQLite
import LulucatSyncTesting
import Testing
import LulucatStoreTesting
@testable import LulucatSync

/// The events a session sent, gathered for a test.
private final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [SessionEvent] = []
    func add(_ e: SessionEvent) { lock.withLock { events.append(e) } }
    var changedPages: Set<UUID> {
        lock.withLock { Set(events.compactMap { if case .elementsChanged(let p) = $0 { return p } else { return nil } }) }
    }
}

private final class IDBox: @unchecked Sendable {
    private let lock = NSLock()
    private var set = Set<UUID>()
    func add(_ ids: [UUID]) { lock.withLock { set.formUnion(ids) } }
    var ids: Set<UUID> { lock.withLock { set } }
}

private func follow(_ s: DocumentSession) async -> (EventLog, Task<Void, Never>) {
    let log = EventLog()
    let stream = await s.events()
    let task = Task { for await e in stream { log.add(e) } }
    return (log, task)
}

private func newDocument(_ lib: Library, engine: EngineKind, pages: Int, seed: UInt64) async throws -> UUID {
    var rng = TestRandom(seed: seed)
    let pkg = try await lib.createDocument(title: "Open \(engine)", engine: engine)
    try await edit(lib, pkg.id) { s in
        for i in 0..<pages {
            let page = i == 0 ? await s.pageIDs()[0] : try await s.addPage()
            for _ in 0..<3 { try await s.append(makeStroke(&rng), to: page) }
        }
    }
    return pkg.id
}

private func append(_ n: Int, to s: DocumentSession, page: Int, _ rng: inout TestRandom) async throws -> [UUID] {
    let pid = await s.pageIDs()[page]
    var ids: [UUID] = []
    for _ in 0..<n {
        let st = makeStroke(&rng)
        try await s.append(st, to: pid)
        ids.append(st.id)
    }
    return ids
}

private func elements(_ s: DocumentSession) async throws -> Set<UUID> {
    var out = Set<UUID>()
    for p in await s.pageIDs() { for e in try await s.content(of: p).elements { out.insert(e.id) } }
    return out
}

@Suite(.serialized) struct OpenSessionSyncTests {
    init() { Library.enableSQLiteEngine() }
    @Test(arguments: [EngineKind.snapshot, .journal, .sqlite])
    func anOpenDocumentReceivesMergedStrokesThroughItsSessionAndKeepsItsOwn(engine: EngineKind) async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let doc = try await newDocument(h.libraries[0], engine: engine, pages: 2, seed: 31)
        try await h.converge()
        var rng = TestRandom(seed: 32)
        // A has the document open, with strokes not saved yet.
        let a = try await h.libraries[0].open(doc, options: quietSession)
        let (log, follower) = await follow(a)
        let mine = try await append(2, to: a, page: 0, &rng)
        #expect(await !a.dirtyPageIDs.isEmpty)
        // B edits both pages and publishes.
        let theirs = try await edit(h.libraries[1], doc) { s in
            var r = TestRandom(seed: 33)
            return try await append(3, to: s, page: 0, &r) + append(1, to: s, page: 1, &r)
        }
        try await h.sync(1)
        // A's round merges into the open session instead of skipping it.
        let r = try await h.sync(0)
        #expect(r.skipped.isEmpty && r.documentsMerged == 1, "\(r)")
        let held = try await elements(a)
        #expect(held.isSuperset(of: mine), "the session's own unsaved strokes must stay")
        #expect(held.isSuperset(of: theirs), "the merged strokes must reach the open session")
        #expect(await a.dirtyPageIDs.isEmpty, "the merged page is saved through the session")
        let pages = await a.pageIDs()
        // Events arrive a few milliseconds later, in batches: a bounded wait.
        await eventually { log.changedPages.isSuperset(of: pages) }
        #expect(log.changedPages.isSuperset(of: pages), "the canvas hears of every merged page: \(log.changedPages)")
        // Strokes drawn after the round go out with the next one, while the session stays open.
        let later = try await append(2, to: a, page: 1, &rng)
        try await h.sync(0)
        try await h.sync(1)
        let b = try await contents(of: h.libraries[1])
        #expect(b.documents[doc]!.allElements.isSuperset(of: mine + theirs + later))
        // Nothing new anywhere: A's next round is one request even with the session open.
        try await h.sync(0)
        #expect(try await h.sync(0).requests == 1)
        try await a.close()
        _ = await follower.value
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents[doc]!.allElements.isSuperset(of: mine + theirs + later))
    }

    /// The app draws on a page the merge changes and on one it does not, erases a stroke and
    /// edits a page another device removed, all between the round's read and its apply.
    @Test func editsBetweenTheReadAndTheApplyAreKept() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let doc = try await newDocument(h.libraries[0], engine: .journal, pages: 3, seed: 41)
        try await h.converge()
        let a = try await h.libraries[0].open(doc, options: quietSession)
        let pages = await a.pageIDs()
        // B draws on page 0 and removes page 2.
        let theirs = try await edit(h.libraries[1], doc) { s in
            var r = TestRandom(seed: 42)
            let ids = try await append(2, to: s, page: 0, &r)
            try await s.removePage(pages[2])
            return ids
        }
        try await h.sync(1)
        let victim = try await a.content(of: pages[1]).elements[0].id
        let drawn = IDBox()
        var options = testSyncOptions
        options.beforeApplyingToOpenSession = { _ in
            var r = TestRandom(seed: 43)
            do {
                for p in pages { drawn.add(try await append(1, to: a, page: pages.firstIndex(of: p)!, &r)) }
                try await a.apply([.delete([victim])], to: pages[1])
            } catch { Issue.record("the app's edit failed: \(error)") }
        }
        let r = try await h.libraries[0].sync(with: h.remotes[0], options: options)
        #expect(r.skipped.isEmpty && r.problems.isEmpty, "\(r)")
        let held = try await elements(a)
        #expect(held.isSuperset(of: drawn.ids), "strokes drawn during the round were lost: \(drawn.ids.subtracting(held).count)")
        #expect(held.isSuperset(of: theirs))
        #expect(!held.contains(victim), "a stroke erased during the round came back")
        #expect(await a.pageIDs().contains(pages[2]), "a page edited here while another device removed it stays (edit wins)")
        try await a.close()
        try await h.converge()
        let c = try await h.checkConverged()
        let all = c.documents[doc]!.allElements
        #expect(all.isSuperset(of: drawn.ids.union(theirs)))
        #expect(!all.contains(victim))
        #expect(c.documents[doc]!.pages.contains(pages[2]))
    }

    /// Strokes drawn and erased in the app while the round runs, over seeded interleavings: none is
    /// lost, none erased comes back, and the libraries converge once the session closes.
    @Test(arguments: [UInt64(1), 2, 3, 4])
    func editsMadeWhileTheRoundRunsAreKeptAndPublishedNextRound(seed: UInt64) async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let doc = try await newDocument(h.libraries[0], engine: .snapshot, pages: 3, seed: seed * 10)
        try await h.converge()
        var rng = TestRandom(seed: seed)
        var added = Set<UUID>(), erased = Set<UUID>()
        let a = try await h.libraries[0].open(doc, options: quietSession)
        for _ in 0..<4 {
            let theirs = try await edit(h.libraries[1], doc) { s in
                var r = TestRandom(seed: rng.next())
                return try await append(Int.random(in: 1...4, using: &r), to: s, page: Int.random(in: 0..<3, using: &r), &r)
            }
            added.formUnion(theirs)
            try await h.sync(1)
            // The app draws and erases while A's round runs.
            let drawSeed = rng.next()
            let drawing = Task { () async throws -> (Set<UUID>, Set<UUID>) in
                var r = TestRandom(seed: drawSeed)
                var add = Set<UUID>(), gone = Set<UUID>()
                for _ in 0..<6 {
                    let page = await a.pageIDs()[Int.random(in: 0..<3, using: &r)]
                    let st = makeStroke(&r)
                    try await a.append(st, to: page)
                    add.insert(st.id)
                    if Bool.random(using: &r), let victim = try await a.content(of: page).elements.randomElement(using: &r) {
                        try await a.apply([.delete([victim.id])], to: page)
                        gone.insert(victim.id)
                    }
                    await Task.yield()
                }
                return (add, gone)
            }
            let r = try await h.libraries[0].sync(with: h.remotes[0], options: testSyncOptions)
            #expect(r.skipped.isEmpty && r.problems.isEmpty, "\(r)")
            let (add, gone) = try await drawing.value
            added.formUnion(add)
            erased.formUnion(gone)
            added.subtract(gone)
            let held = try await elements(a)
            #expect(held.isSuperset(of: added.subtracting(erased)), "lost in the open session: \(added.subtracting(erased).subtracting(held).count)")
            #expect(held.isDisjoint(with: erased), "erased strokes came back in the open session")
        }
        try await a.close()
        try await h.converge()
        let c = try await h.checkConverged()
        let all = c.documents[doc]!.allElements
        #expect(all.isSuperset(of: added.subtracting(erased)), "lost: \(added.subtracting(erased).subtracting(all).count)")
        #expect(all.isDisjoint(with: erased), "resurrected: \(all.intersection(erased).count)")
    }
}
