// Edits submitted in order (issue 32, item 4): strokes submitted one after the other, each awaited
// from a task of its own priority, land in submission order; a refused batch fails alone; close
// applies what was submitted before it.

import Foundation
import Testing
import LulucatInk
import LulucatHandwriting
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct SubmissionOrderTests {
    /// 300 strokes submitted from the calling thread, each awaited by a task of mixed priority:
    /// 0 out of order. The same strokes appended by tasks of mixed priority (what an app did
    /// before) are counted beside it, printed, not asserted (their order is the scheduler's).
    @Test func strokesSubmittedFromTasksOfMixedPriorityLandInSubmissionOrder() async throws {
        let strokes = HandwritingGenerator(seed: 34).page(strokes: 300, canvas: .letter).strokes
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Order")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil))
        let page = await session.pageIDs()[0]
        let priorities: [TaskPriority] = [.high, .low, .medium, .background, .userInitiated, .utility]
        var waits: [Task<Int, Never>] = []
        for (i, s) in strokes.enumerated() {
            let edit = session.submit([.append([.stroke(s)])], to: page)
            waits.append(Task(priority: priorities[i % priorities.count]) { ((try? await edit.value()) ?? []).count })
        }
        for w in waits { #expect(await w.value == 1, "each batch applied, with its undo") }
        let ids = try await session.content(of: page).elements.map(\.id)
        let outOfOrder = zip(ids, strokes.map(\.id)).filter { $0 != $1 }.count
        #expect(ids.count == 300 && outOfOrder == 0)

        // Before: a task per stroke at mixed priorities, each calling the actor.
        let other = try await library.open(try library.createDocument(title: "Tasks").id, options: SessionOptions(autosaveDelay: nil))
        let otherPage = await other.pageIDs()[0]
        var tasks: [Task<Void, Never>] = []
        for (i, s) in strokes.enumerated() {
            tasks.append(Task(priority: priorities[i % priorities.count]) { try? await other.append(s, to: otherPage) })
        }
        for t in tasks { await t.value }
        let landed = try await other.content(of: otherPage).elements.map(\.id)
        let before = zip(landed, strokes.map(\.id)).filter { $0 != $1 }.count
        print("submission order figures: 300 strokes submitted: \(outOfOrder) out of order; as a task per stroke at mixed priorities: \(before) out of order")
        try await other.close()
        try await session.close()
    }

    /// A batch that does not fit fails alone (its page unchanged) and the batches after it apply;
    /// `close()` applies everything submitted before it; a batch submitted after close fails.
    @Test func aRefusedBatchFailsAloneAndCloseAppliesWhatCameBefore() async throws {
        let strokes = HandwritingGenerator(seed: 35).page(strokes: 3, canvas: .letter).strokes
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Refusals")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil))
        let page = await session.pageIDs()[0]
        let a = session.submit([.append([.stroke(strokes[0])])], to: page)
        let bad = session.submit([.append([.stroke(strokes[1])]), .delete([UUID()])], to: page)
        let c = session.submit([.append([.stroke(strokes[2])])], to: page)
        try await session.close()
        #expect(a.isDone && bad.isDone && c.isDone, "close applied what was submitted before it")
        _ = try await a.value()
        _ = try await c.value()
        await #expect(throws: StoreError.self) { _ = try await bad.value() }
        let late = session.submit([.append([.stroke(strokes[1])])], to: page)
        await #expect(throws: StoreError.self) { _ = try await late.value() }
        let reopened = try await library.open(package.id)
        #expect(try await reopened.content(of: page).elements.map(\.id) == [strokes[0].id, strokes[2].id])
        try await reopened.close()
    }
}
