// The README's observation example, as written there (between the markers; the two `results.`
// lines are the test's, recording what the loops hold), run against a session and a library: the state it folds equals the session's, the canvas saw every stroke, and the
// entries it keeps equal the library's list. The example's loops end when the task is cancelled.

import Foundation
import Testing
import LulucatStore
import LulucatStoreTesting

@Suite struct ReadmeObservationTests {
    /// What the example calls on its views, recorded.
    final class Canvas: @unchecked Sendable {
        private let lock = NSLock()
        private var _added: [UUID] = []
        private var _shown: [PageContent] = []
        var added: [UUID] { lock.withLock { _added } }
        var shown: [PageContent] { lock.withLock { _shown } }
        func update(_ page: UUID, added: [UUID], removed: [UUID]) { lock.withLock { _added += added } }
        func show(_ content: PageContent) { lock.withLock { _shown.append(content) } }
    }

    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var _state: SessionState?
        private var _entries: [LibraryEntry] = []
        var state: SessionState? { get { lock.withLock { _state } } set { lock.withLock { _state = newValue } } }
        var entries: [LibraryEntry] { get { lock.withLock { _entries } } set { lock.withLock { _entries = newValue } } }
    }

    @Test func theExampleFoldsWhatTheSessionAndTheLibraryHold() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Observed")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        let canvas = Canvas(), results = Results()
        let example = Task {
            // --- README: observation with values ---
            var state: SessionState?
            for await event in try await session.observe() {   // .state first, then the changes
                if case .state(let first) = event { state = first } else { state?.apply(event) }
                if case .elementsEdited(let change) = event { canvas.update(change.page, added: change.added, removed: change.removed) }
                results.state = state
            }
            for await content in try await session.values(of: page) { canvas.show(content) }
            var entries: [LibraryEntry] = []
            for await change in try library.observe(polling: .seconds(2)) {   // .list first; polls for other processes
                change.apply(to: &entries)                                    // equal to library.documents()
                results.entries = entries
            }
            // --- end of the README's example ---
        }
        #expect(await eventually { results.state != nil }, "the example's first value did not come")
        var strokes: [UUID] = []
        for i in 0..<5 {
            let stroke = Stroke(samples: (0..<4).map { Sample(x: Int32(100 + i * 50 + $0 * 10), y: 200, radius: 10, pressure: 500, time: UInt32($0 * 4)) })
            try await session.append(stroke, to: page)
            strokes.append(stroke.id)
        }
        #expect(await eventually { canvas.added == strokes }, "the canvas saw \(canvas.added.count) of 5 strokes")
        #expect(results.state?.elementIDs[page] == strokes)
        #expect(results.state?.pageOrder == [page])
        example.cancel()
        _ = await example.result
        try await session.close()
        // The library's list as the third loop keeps it, run on its own (the others end at once).
        let listing = Task {
            var entries: [LibraryEntry] = []
            for await change in try library.observe() {
                change.apply(to: &entries)
                results.entries = entries
            }
        }
        _ = try await library.createDocument(title: "Second")
        let expected = try await library.documents().map(\.id)
        #expect(await eventually { results.entries.map(\.id) == expected }, "\(results.entries.map(\.title))")
        listing.cancel()
        _ = await listing.result
    }
}
