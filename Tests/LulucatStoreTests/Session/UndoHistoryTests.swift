// The session's own undo history (issue 32, item 3): every kind of edit undone and redone gives
// back byte-identical content, over randomized sequences of 1,000 edits; groups, page-scoped undo,
// the events, a group that no longer fits, and merges from sync never recorded.

import Foundation
import Testing
import LulucatInk
import LulucatHandwriting
@testable import LulucatStore
import LulucatStoreTesting

/// Everything undo must give back: the title, the pages in order, each page's content.
private struct DocumentShot: Equatable {
    var title: String
    var pages: [UUID]
    var contents: [PageContent]
}

private func shot(_ s: DocumentSession) async throws -> DocumentShot {
    var contents: [PageContent] = []
    for p in await s.pageIDs() { contents.append(try await s.content(of: p)) }
    return DocumentShot(title: await s.title, pages: await s.pageIDs(), contents: contents)
}

/// A new document in the library at `tmp`, opened with an undo history of `levels` groups and
/// neither autosave nor thumbnails.
private func openWithUndo(_ tmp: TemporaryFolder, title: String, levels: Int) async throws -> DocumentSession {
    let library = Library(root: tmp.path)
    let package = try await library.createDocument(title: title)
    var options = SessionOptions(autosaveDelay: nil, thumbnails: nil)
    options.undoLevels = levels
    return try await library.open(package.id, options: options)
}

@Suite struct UndoHistoryTests {
    static let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<64).map { UInt8($0) })

    /// 1,000 random edits of every kind, each checked: undone one by one back to the start, each
    /// state byte-identical to the one before its edit; redone one by one to the end, each state
    /// the one after. Then the same after a close and reopen of nothing (the history is the session's).
    @Test(arguments: [EngineKind.snapshot, .journal])
    func everyEditUndoesAndRedoesExactly(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Undo", engine: engine)
        var options = SessionOptions(autosaveDelay: nil, thumbnails: nil)
        options.undoLevels = 2000
        let s = try await library.open(package.id, options: options)
        var rng = SeededRandom(seed: 3203)
        let gen = HandwritingGenerator(seed: 3204)
        var pool = gen.page(strokes: 400, canvas: .letter).strokes
        var shots = [try await shot(s)]
        var kinds: [String: Int] = [:]
        for _ in 0..<1000 {
            let pages = await s.pageIDs()
            let page = pages[Int(rng.next() % UInt64(pages.count))]
            let elements = try await s.content(of: page).elements
            let strokes = elements.compactMap(\.stroke)
            let kind: String
            switch rng.next() % 14 {  // 12 kinds; the batch twice as often
            case 0, 1, 2:
                kind = "append"
                if pool.isEmpty { pool = gen.page(strokes: 100, canvas: .letter).strokes.map { var t = $0; t.id = UUID(); return t } }
                try await s.append(pool.removeLast(), to: page)
            case 3 where strokes.first(where: { $0.samples.count > 4 }) != nil:
                kind = "erase"
                let st = strokes.first(where: { $0.samples.count > 4 })!
                try await s.erase(stroke: st.id, keeping: [0..<2, 3..<st.samples.count], on: page)
            case 4 where !elements.isEmpty:
                kind = "transform"
                let ids = Array(elements.prefix(3).map(\.id))
                try await s.transform(ids, by: QuantizedTransform(dx: Int32(rng.next() % 50), dy: -7, scale: 1100, rotation: 450, centerX: 2000, centerY: 3000), on: page)
            case 5 where !elements.isEmpty:
                kind = "delete"
                try await s.delete([elements[Int(rng.next() % UInt64(elements.count))].id], from: page)
            case 6 where elements.count > 1:
                kind = "move"
                try await s.move([elements[0].id], to: .front, on: page)
            case 7:
                kind = "resize"
                let now = try await s.content(of: page).canvasSize
                try await s.resizeCanvas(of: page, to: QuantizedSize(width: now.width + 1 + Int32(rng.next() % 300), height: 7000))
            case 8:
                kind = "image"
                _ = try await s.insertImage(Self.png, fileExtension: "png", frame: QuantizedRect(x: 10, y: 20, width: 300, height: 200), on: page)
            case 9 where pages.count < 6:
                kind = "add page"
                try await s.addPage(at: Int(rng.next() % UInt64(pages.count + 1)))
            case 10 where pages.count > 1:
                kind = "remove page"
                try await s.removePage(page)
            case 11 where pages.count > 1:
                kind = "move page"
                let from = pages.firstIndex(of: page)!
                try await s.movePage(page, to: (from + 1 + Int(rng.next() % UInt64(pages.count - 1))) % pages.count)
            case 12:
                kind = "rename"
                try await s.rename(to: "Undo \(shots.count)")
            default:
                kind = "batch"
                if pool.count < 2 { pool = gen.page(strokes: 100, canvas: .letter).strokes.map { var t = $0; t.id = UUID(); return t } }
                var batch: [PageChange] = [.append([.stroke(pool.removeLast()), .stroke(pool.removeLast())])]
                if let e = elements.first { batch.append(.delete([e.id])) }
                try await s.apply(batch, to: page)
            }
            kinds[kind, default: 0] += 1
            shots.append(try await shot(s))
        }
        print("undo edits: \(kinds.sorted { $0.key < $1.key })")
        #expect(kinds.count == 12, "every kind of edit: \(kinds)")
        let state = await s.undoState
        #expect(state.canUndo && !state.canRedo)
        var mismatches = 0
        for k in stride(from: shots.count - 2, through: 0, by: -1) {
            #expect(try await s.undo())
            if try await shot(s) != shots[k] { mismatches += 1 }
        }
        #expect(try await s.undo() == false, "nothing more")
        for k in 1..<shots.count {
            #expect(try await s.redo())
            if try await shot(s) != shots[k] { mismatches += 1 }
        }
        print("undo figures (\(engine)): 1000 edits of \(kinds.count) kinds, undone and redone: \(mismatches) states not byte-identical")
        #expect(mismatches == 0)
        #expect(try await s.redo() == false)
        // What was saved is what the session shows.
        let last = try await shot(s)
        try await s.close()
        let reopened = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        #expect(try await shot(reopened) == last)
        try await reopened.close()
    }

    /// Groups gather a gesture's edits; undo of one page leaves another page's newer edits; the
    /// events say what undo can do; a new edit clears the redo; the history keeps `undoLevels`.
    @Test func groupsPagesEventsAndLimits() async throws {
        let tmp = TemporaryFolder()
        let s = try await openWithUndo(tmp, title: "Groups", levels: 3)
        let events = await s.events()
        let p1 = await s.pageIDs()[0]
        let p2 = try await s.addPage()
        let strokes = HandwritingGenerator(seed: 3205).page(strokes: 10, canvas: .letter).strokes
        await s.beginUndoGroup("Lasso")
        try await s.append(strokes[0], to: p1)
        try await s.append(strokes[1], to: p1)
        await s.endUndoGroup()
        try await s.append(strokes[2], to: p2)
        #expect(await s.undoState.undoName == "Draw")
        // Page-scoped: p1's group goes, p2's newer stroke stays.
        #expect(try await s.undo(page: p1))
        let onP1 = try await s.content(of: p1).elements, onP2 = try await s.content(of: p2).elements
        #expect(onP1.isEmpty && onP2.count == 1)
        let afterUndo = await s.undoState
        #expect(afterUndo.canRedo && afterUndo.redoName == "Lasso")
        try await s.redo(page: p1)
        #expect(try await s.content(of: p1).elements.map(\.id) == [strokes[0].id, strokes[1].id])
        // A new edit clears the redo.
        try await s.undo(page: p2)
        try await s.append(strokes[3], to: p1)
        let cleared = await s.undoState
        #expect(!cleared.canRedo)
        // At most 3 levels.
        for k in 4..<9 { try await s.append(strokes[k], to: p1) }
        var undone = 0
        while try await s.undo() { undone += 1 }
        #expect(undone == 3)
        try await s.close()
        var sawUndo = false
        for await e in events { if case .undoChanged = e { sawUndo = true } }
        #expect(sawUndo)
    }

    /// Undo, redo and group bounds take what was submitted before them (`submit`, which applies
    /// in a task of its own): an undo asked for right after a pen-up undoes that stroke, and
    /// batches submitted between `beginUndoGroup` and `endUndoGroup` land in that group.
    /// Repeated 50 times, since without the rule the order depends on which task runs first.
    @Test func undoAndGroupsTakeWhatWasSubmittedBeforeThem() async throws {
        let tmp = TemporaryFolder()
        let s = try await openWithUndo(tmp, title: "Submitted", levels: 1000)
        let page = await s.pageIDs()[0]
        let strokes = HandwritingGenerator(seed: 3206).page(strokes: 150, canvas: .letter).strokes
        var kept: [UUID] = []
        for round in 0..<50 {
            let a = strokes[3 * round], b = strokes[3 * round + 1], c = strokes[3 * round + 2]
            // Submitted, then undone at once: the page is as before it; redone: it is back.
            let edit = s.submit([.append([.stroke(a)])], to: page)
            #expect(try await s.undo())
            #expect(edit.isDone)
            #expect(try await s.content(of: page).elements.map(\.id) == kept, "round \(round): the undo took the submitted stroke")
            #expect(try await s.redo())
            kept.append(a.id)
            // Two batches submitted inside a group: one undo step.
            await s.beginUndoGroup("Pair")
            s.submit([.append([.stroke(b)])], to: page)
            s.submit([.append([.stroke(c)])], to: page)
            await s.endUndoGroup()
            #expect(await s.undoState.undoName == "Pair")
            #expect(try await s.undo())
            #expect(try await s.content(of: page).elements.map(\.id) == kept, "round \(round): both submitted strokes in the group")
        }
        try await s.close()
    }

    /// A group that no longer fits (its element deleted by a merge from sync, which is not
    /// recorded) fails, changes nothing and is dropped; the default keeps no history at all.
    @Test func aGroupThatNoLongerFitsIsDroppedAndMergesAreNotRecorded() async throws {
        let tmp = TemporaryFolder()
        let s = try await openWithUndo(tmp, title: "Merges", levels: 10)
        let p = await s.pageIDs()[0]
        let strokes = HandwritingGenerator(seed: 3206).page(strokes: 3, canvas: .letter).strokes
        try await s.append(strokes[0], to: p)
        try await s.transform([strokes[0].id], by: QuantizedTransform(dx: 10), on: p)
        // A merge removes the stroke (sync's path: not the user's edit, not recorded).
        try await s.replaceSyncedContent(of: p, with: PageContent(canvasSize: .letter, elements: [.stroke(strokes[1])]))
        try await s.removePageUnrecorded(try await s.addPage())
        let before = try await shot(s)
        // The page added (recorded) was removed by the merge; the transform and the append name a
        // stroke the merge removed: each fails, changes nothing and is dropped.
        for _ in 0..<3 {
            await #expect(throws: StoreError.self) { try await s.undo() }
            #expect(try await shot(s) == before)
        }
        #expect(try await s.undo() == false)
        #expect(await s.undoState == .empty)
        try await s.close()

        let plain = try await Library(root: tmp.path).open(s.package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        try await plain.append(strokes[2], to: p)
        #expect(await plain.undoState == .empty)
        #expect(try await plain.undo() == false)
        try await plain.close()
    }
}

/// Transactions (issue 32, item 4): edits on several pages and the page structure, all or none.
@Suite struct TransactionTests {
    /// A cut from one page and a paste on another, a page added and the title changed: all there
    /// after the transaction, one undo step; when the body throws halfway, none of it stays.
    @Test(arguments: [0, 10])
    func aTransactionIsAllOrNone(undoLevels: Int) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Transactions")
        var options = SessionOptions(autosaveDelay: nil, thumbnails: nil)
        options.undoLevels = undoLevels
        let s = try await library.open(package.id, options: options)
        let source = await s.pageIDs()[0]
        let target = try await s.addPage()
        let strokes = HandwritingGenerator(seed: 3220).page(strokes: 6, canvas: .letter).strokes
        try await s.append(strokes.map { .stroke($0) }, to: source)
        let before = try await shot(s)

        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await s.transaction("Cut and paste") { s in
                try s.delete([strokes[0].id, strokes[1].id], from: source)
                try s.append([.stroke(strokes[0]), .stroke(strokes[1])], to: target)
                let added = try s.addPage()
                try s.movePage(added, to: 0)
                try s.rename(to: "Moved")
                try s.removePage(target)
                throw Refused()
            }
        }
        #expect(try await shot(s) == before, "nothing of the failed transaction stays")

        let moved: Int = try await s.transaction("Cut and paste") { s in
            try s.delete([strokes[0].id, strokes[1].id], from: source)
            try s.append([.stroke(strokes[0]), .stroke(strokes[1])], to: target)
            try s.rename(to: "Moved")
            return 2
        }
        #expect(moved == 2)
        let after = try await shot(s)
        #expect(after.title == "Moved" && after.contents[1].elements.map(\.id) == [strokes[0].id, strokes[1].id])
        if undoLevels > 0 {
            #expect(await s.undoState.undoName == "Cut and paste")
            try await s.undo()
            #expect(try await shot(s) == before, "one undo step")
        }
        try await s.close()
    }
}
