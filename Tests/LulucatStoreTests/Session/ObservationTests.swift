// Observation with values: `observe()`'s first state and the events after it give the session's
// real state after a randomized run (no edit missed or doubled, also for a subscriber that joins
// halfway), `values(of:)` gives the page itself, merged events keep every edit, and a library's
// observers get the entries `list()` gives, also for another process's change (the poll).

import Foundation
import Testing
import LulucatInk
import LulucatHandwriting
@testable import LulucatStore
import LulucatStoreTesting

/// Folds a session's `observe()` stream: the state from its first event and every event after
/// it, until the stream ends.
private func fold(_ stream: AsyncStream<SessionEvent>) -> Task<(state: SessionState?, firstWasState: Bool, edits: Int, events: Int), Never> {
    Task {
        var state: SessionState?
        var firstWasState = false
        var edits = 0, events = 0
        for await e in stream {
            events += 1
            if state == nil, case .state(let s) = e { state = s; firstWasState = events == 1; continue }
            if case .elementsEdited(let c) = e { edits += c.edits.count }
            state?.apply(e)
        }
        return (state, firstWasState, edits, events)
    }
}

/// A library observer's list, folded as its changes arrive.
private final class FoldedList: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [LibraryEntry] = []
    private var changes: [LibraryChange] = []
    var entries: [LibraryEntry] { lock.withLock { list } }
    var received: [LibraryChange] { lock.withLock { changes } }

    init(_ stream: AsyncStream<LibraryChange>) {
        Task { [self] in
            for await c in stream {
                lock.withLock {
                    changes.append(c)
                    c.apply(to: &list)
                }
            }
        }
    }
}

/// The session's real state, read from it.
private func realState(_ s: DocumentSession) async throws -> SessionState {
    var elements: [UUID: [UUID]] = [:]
    for p in await s.pageIDs() { elements[p] = try await s.content(of: p).elements.map(\.id) }
    return SessionState(title: await s.title, pageOrder: await s.pageIDs(), elementIDs: elements, undo: await s.undoState)
}

private func stroke(_ k: UInt32) -> Stroke { SampleContent.stroke(seed: k, samples: 6 + Int(k % 10)) }

@Suite struct ObservationTests {
    /// 600 seeded edits of every kind (appends, erases, transforms, images, deletes, z-order
    /// moves, page adds, moves and removes, renames, undo and redo, bursts in one transaction):
    /// the first state plus the events gives the session's state exactly (titles, page order,
    /// every page's element ids in z-order, the undo state), for a subscriber from the start
    /// and one that joined halfway with edits still pending; `values(of:)` ends with the page's
    /// content itself.
    @Test(arguments: [UInt64(7), 2026])
    func firstStateAndDeltasGiveTheSessionsState(seed: UInt64) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try library.createDocument(title: "Observed")
        var options = SessionOptions(autosaveDelay: nil, maxLoadedPages: 3, thumbnails: nil)
        options.undoLevels = 40
        let session = try await library.open(package.id, options: options)
        let pinned = await session.pageIDs()[0]  // never removed: its values stream runs to the end
        for k in 0..<5 { try await session.append(stroke(UInt32(k)), to: pinned) }
        _ = try await session.addPage()

        let early = fold(try await session.observe())
        let values = try await session.values(of: pinned)
        let pinnedValues = Task { () -> PageContent? in
            var last: PageContent?
            for await c in values { last = c }
            return last
        }
        var late: Task<(state: SessionState?, firstWasState: Bool, edits: Int, events: Int), Never>?
        var rng = SeededRandom(seed: seed)
        var next: UInt32 = 100
        var done = 0, attempts = 0
        func pick<T>(_ a: [T]) -> T? { a.isEmpty ? nil : a[Int(rng.next() % UInt64(a.count))] }
        while done < 500 && attempts < 2000 {
            attempts += 1
            if done == 250 && late == nil {
                // Edits of this moment are still pending (handed over a frame later): the late
                // subscriber must get none of them, and every one after.
                late = fold(try await session.observe())
            }
            let pages = await session.pageIDs()
            guard let page = (rng.next() % 3 == 0 ? pinned : pick(pages)) else { continue }
            let ids = try await session.content(of: page).elements.map(\.id)
            let roll = rng.next() % 100
            do {
                switch roll {
                case 0..<28:
                    next += 1
                    try await session.append(stroke(next), to: page)
                case 28..<33:
                    // A burst: ten strokes without a suspension, merged into one event.
                    let strokes = (0..<10).map { _ in next += 1; return stroke(next) }
                    try await session.transaction("Burst") { s in for st in strokes { try s.append(st, to: page) } }
                case 33..<41:
                    let content = try await session.content(of: page)
                    guard let s = pick(content.elements.compactMap { if case .stroke(let s) = $0 { s } else { nil } }), s.samples.count > 3
                    else { continue }
                    let cut = 1 + Int(rng.next() % UInt64(s.samples.count - 2))
                    try await session.erase(stroke: s.id, keeping: [0..<cut, (cut + 1)..<s.samples.count], on: page)
                case 41..<50:
                    guard !ids.isEmpty else { continue }
                    let chosen = Array(Set((0..<3).compactMap { _ in pick(ids) }))
                    try await session.transform(chosen, by: .rotation(degrees: rng.uniform(-20...20), aboutX: 300, y: 400), on: page)
                case 50..<54:
                    next += 1
                    try await session.insertImage(Data(SampleContent.assetBytes(seed: next)), fileExtension: "jpg",
                                                  frame: QuantizedRect(x: 10, y: 20, width: 300, height: 200), on: page)
                case 54..<59:
                    guard let gone = pick(ids) else { continue }
                    try await session.delete([gone], from: page)
                case 59..<63:
                    guard let moved = pick(ids) else { continue }
                    let to: ZPosition = rng.next() % 3 == 0 ? .front : rng.next() % 2 == 0 ? .back : .index(Int(rng.next() % UInt64(ids.count)))
                    try await session.move([moved], to: to, on: page)
                case 63..<68:
                    try await session.addPage(at: Int(rng.next() % UInt64(pages.count + 1)))
                case 68..<72:
                    try await session.movePage(page, to: Int(rng.next() % UInt64(pages.count)))
                case 72..<76:
                    guard pages.count > 2, page != pinned else { continue }
                    try await session.removePage(page)
                case 76..<79:
                    next += 1
                    try await session.rename(to: "Observed \(next)")
                case 79..<92:
                    try await session.undo()
                default:
                    try await session.redo()
                }
                done += 1
            } catch {
                // An undo whose group no longer fits, a z-order index past the end: refused with
                // nothing changed, which the observers must see as nothing.
            }
        }
        #expect(done >= 500, "only \(done) edits of \(attempts) attempts were made")
        let real = try await realState(session)
        let pinnedContent = try await session.content(of: pinned)
        try await session.close()  // `.closed` ends the streams: everything sent was handed over

        for (name, task) in [("early", early), ("late", late!)] {
            let result = await task.value
            #expect(result.firstWasState, "\(name): the first event is not the state")
            #expect(result.state?.pageOrder == real.pageOrder, "\(name): page order")
            #expect(result.state?.title == real.title, "\(name): title")
            #expect(result.state?.undo == real.undo, "\(name): undo state")
            for p in real.pageOrder {
                #expect(result.state?.elementIDs[p] == real.elementIDs[p], "\(name): the elements of page \(p)")
            }
            #expect(result.state == real)
            // Merged: fewer events than edits (a burst of ten strokes is one event), none lost.
            if name == "early" { #expect(result.edits >= done / 2) }
        }
        #expect(await pinnedValues.value == pinnedContent)
    }

    /// Pending events of one page merge into one event that holds every edit, in order, past
    /// undo states (the newest of which wins); a subscriber that joins while events are pending
    /// gets none of them and every later one, unmerged with them; `events()` hands the notices.
    @Test func pendingEditsMergeWithoutLosingAnyAndASubscriberGetsOnlyLaterOnes() async throws {
        // A day's delay: the hub hands events over only when the test says so.
        let hub = EventHub<SessionEvent>(delay: .seconds(86_400), merge: SessionEvent.merge, commutes: SessionEvent.commutes)
        let page = UUID(), other = UUID()
        let early = fold(hub.subscribe(first: { [.state(SessionState(title: "", pageOrder: [page, other], elementIDs: [page: [], other: []], undo: .empty))] },
                                       endsOnOverflow: true, transform: { $0 }))
        let noticeStream = hub.subscribe(transform: SessionEvent.notice)
        let notices = Task { var all: [SessionEvent] = []; for await e in noticeStream { all.append(e) }; return all }
        var late: Task<(state: SessionState?, firstWasState: Bool, edits: Int, events: Int), Never>?
        var strokes: [UUID] = []
        for k in 0..<100 {
            if k == 60 {
                late = fold(hub.subscribe(first: { [.state(SessionState(title: "", pageOrder: [page, other], elementIDs: [page: Array(strokes), other: []], undo: .empty))] },
                                          endsOnOverflow: true, transform: { $0 }))
            }
            let s = stroke(UInt32(k))
            strokes.append(s.id)
            hub.send(.elementsEdited(ElementChanges(page: page, edits: [.append([.stroke(s)])])))
            hub.send(.undoChanged(UndoState(canUndo: true, canRedo: false, undoName: "\(k)", redoName: "")))
        }
        hub.send(.elementsEdited(ElementChanges(page: other, edits: [.append([.stroke(stroke(500))])])))
        hub.flush()
        hub.finish(with: .closed)
        let expected = SessionState(title: "", pageOrder: [page, other], elementIDs: [page: strokes, other: [stroke(500).id]],
                                    undo: UndoState(canUndo: true, canRedo: false, undoName: "99", redoName: ""))
        let a = await early.value, b = await late!.value
        #expect(a.state == expected && b.state == expected)
        // The early subscriber: 60 edits merged, the state, 40 merged, the state, the other page, closed.
        #expect(a.edits == 101 && a.events == 1 + 2 + 2 + 1 + 1)
        #expect(b.edits == 41 && b.events == 1 + 2 + 1 + 1)
        let names = await notices.value.map { e -> String in
            switch e {
            case .elementsChanged(let p): return p == page ? "page" : "other"
            case .undoChanged(let u): return "undo \(u.undoName)"
            case .closed: return "closed"
            default: return "?"
            }
        }
        #expect(names == ["page", "undo 59", "page", "undo 99", "other", "closed"])
    }

    /// `ElementChanges` says what its edits add up to: a stroke erased into pieces, one of
    /// them deleted, another moved; a stroke added and deleted again is in none of the lists.
    @Test func elementChangesAddUp() throws {
        let a = stroke(1), b = stroke(2), c = stroke(3)
        var before = PageContent(canvasSize: .letter, elements: [.stroke(a), .stroke(b)])
        let p1 = stroke(11), p2 = stroke(12)
        let change = ElementChanges(page: UUID(), edits: [
            .replace(a.id, with: [.stroke(p1), .stroke(p2)]), .delete([p1.id]), .move([b.id], to: .back),
            .append([.stroke(c)]), .delete([c.id]), .update([.stroke(b)]), .resize(QuantizedSize(width: 10, height: 20)),
        ])
        #expect(change.added == [p2.id])
        #expect(change.removed == [a.id])
        #expect(change.changed == [b.id])
        #expect(change.canvasSize == QuantizedSize(width: 10, height: 20))
        var ids = before.elements.map(\.id)
        change.apply(toIDs: &ids)
        try change.apply(to: &before)
        #expect(ids == before.elements.map(\.id))
        #expect(ids == [b.id, p2.id])
    }

    /// A library observer's first value is the list, and every change after it carries the
    /// entry: the folded list equals `list()` after documents are created, renamed, edited,
    /// duplicated, trashed and restored.
    @Test func libraryObserversGetTheEntriesListGives() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let before = try library.createDocument(title: "Before")
        let folded = FoldedList(try Library(root: tmp.path + "/").observe())
        let one = try library.createDocument(title: "One")
        try await library.rename(one.id, to: "Two")
        let session = try await library.open(one.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        try await session.append(stroke(1), to: session.pageIDs()[0])
        _ = try await session.addPage()
        try await session.close()
        let copy = try library.duplicate(one.id)
        try library.moveToTrash(before.id)
        try library.moveToTrash(copy.id)
        try library.restoreFromTrash(copy.id)
        let list = try library.list()
        #expect(await eventually { folded.entries == list }, "folded: \(folded.entries.map(\.title)); listed: \(list.map(\.title))")
        let received = folded.received
        guard case .list(let first)? = received.first else { Issue.record("the first value is not the list"); return }
        #expect(first.map(\.id) == [before.id])
        #expect(received.contains { if case .removed(before.id, .trashed) = $0 { true } else { false } })
        #expect(received.contains { if case .updated(let e, .renamed(one.id, title: "Two")) = $0 { e.title == "Two" } else { false } })
        // The entry of the last change of `one` is the one listed now (page count 2).
        let lastOfOne = received.last(where: { if case .updated(let e, _) = $0 { e.id == one.id } else { false } })
        if case .updated(let e, _)? = lastOfOne { #expect(e == list.first { $0.id == one.id } && e.pageCount == 2) }
    }

    /// Another process (the built `lnote`) renames a document and trashes another: an observer
    /// that polls sees both, with the entry `list()` gives.
    @Test(.enabled(if: builtLnote() != nil, "the lnote binary is not built next to the tests"))
    func thePollSeesAnotherProcesssChanges() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let renamed = try library.createDocument(title: "Here")
        let trashed = try library.createDocument(title: "Going")
        let folded = FoldedList(try library.observe(polling: .milliseconds(20)))
        #expect(await eventually { folded.entries.count == 2 })
        let rename = try await runLnote(["rename", renamed.id.uuidString, "Renamed elsewhere", "--library", tmp.path])
        #expect(rename.status == 0, "\(rename.stderr)")
        let delete = try await runLnote(["delete", trashed.id.uuidString, "--library", tmp.path])
        #expect(delete.status == 0, "\(delete.stderr)")
        let list = try library.list()
        #expect(list.map(\.title) == ["Renamed elsewhere"])
        #expect(await eventually { folded.entries == list }, "folded: \(folded.entries.map(\.title))")
        #expect(folded.received.contains { if case .removed(trashed.id, _) = $0 { true } else { false } })
    }

    /// `values(of:)` hands the page as it is, then after each change; the page removed, it ends.
    @Test func valuesOfAPageFollowItUntilItIsRemoved() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try library.createDocument(title: "Values")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = try await session.addPage()
        try await session.append(stroke(1), to: page)
        let values = try await session.values(of: page)
        let last = Task { () -> (first: PageContent?, last: PageContent?) in
            var first: PageContent?, last: PageContent?
            for await c in values { if first == nil { first = c }; last = c }
            return (first, last)
        }
        try await session.append(stroke(2), to: page)
        try await session.transform([stroke(1).id], by: .rotation(degrees: 30, aboutX: 100, y: 100), on: page)
        let final = try await session.content(of: page)
        try await session.removePage(page)
        let seen = await last.value  // ends with the removal, the session still open
        #expect(seen.first?.elements.map(\.id) == [stroke(1).id])
        #expect(seen.last == final)
        try await session.close()
    }

    /// An observer 4,096 events behind has its stream ended, without `.closed`, after the events
    /// it holds, with none missing in the middle.
    @Test func anObserverTooFarBehindIsEndedRatherThanMissAnEvent() async throws {
        let hub = EventHub<SessionEvent>(delay: .seconds(86_400), merge: SessionEvent.merge, commutes: SessionEvent.commutes)
        let stream = hub.subscribe(endsOnOverflow: true, transform: { $0 })
        let pages = (0..<(EventHub<SessionEvent>.bufferLimit + 100)).map { _ in UUID() }
        var order: [UUID] = []
        for p in pages {
            order.append(p)
            hub.send(.documentEdited(DocumentChanges(pageOrder: order, addedPages: [p], removedPages: [], title: nil)))
        }
        hub.flush()
        var received: [UUID] = []
        for await e in stream {
            guard case .documentEdited(let d) = e else { Issue.record("unexpected \(e)"); continue }
            received += d.addedPages
        }
        #expect(received == Array(pages.prefix(EventHub<SessionEvent>.bufferLimit)))
        hub.finish(with: .closed)
    }
}
