// A close from synchronous code (issue 32, item 7): a deinit or a UIKit callback closes a session
// without `await`; the close takes its place in the line of submitted batches, every stroke
// accepted before it is durable when its handle returns, the lock is released, and batches
// submitted after it are refused.

import Foundation
import Testing
import LulucatInk
import LulucatHandwriting
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct SynchronousCloseTests {
    /// 20 strokes appended through the actor and 30 submitted, then `close()` with no `await`,
    /// then 10 more submitted: the 50 are durable and in order, the 10 are refused with
    /// `sessionClosed`, the lock is free (taken at once, as another process would take it), and
    /// the document reopens with the 50.
    @Test(arguments: [EngineKind.snapshot, .journal])
    func aSynchronousCloseKeepsEveryAcceptedStrokeAndReleasesTheLock(engine: EngineKind) async throws {
        let strokes = HandwritingGenerator(seed: 3214).page(strokes: 60, canvas: .letter).strokes
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let id = try await library.createDocument(title: "Closed without await", engine: engine).id
        let session = try await library.open(id, options: options)
        let page = await session.pageIDs()[0]
        for s in strokes[0..<20] { try await session.append(s, to: page) }
        let submitted = strokes[20..<50].map { session.submit([.append([.stroke($0)])], to: page) }
        let closing = closeWithoutAwait(session)
        let late = strokes[50..<60].map { session.submit([.append([.stroke($0)])], to: page) }
        try await closing.value()
        #expect(closing.isDone)
        #expect(await session.isClosed)
        for edit in submitted { #expect(try await edit.value().count == 1) }
        for edit in late {
            await #expect { try await edit.value() } throws: { e in
                if case StoreError.sessionClosed = e { return true } else { return false }
            }
        }
        try await expectReleasedAndReopened(library, id, page: page, holding: strokes[0..<50].map(\.id))
    }

    /// A window object that closes its session in its `deinit` (which cannot await): dropping it
    /// closes the session with every stroke it submitted, and the document opens again.
    @Test func aDeinitClosesTheSessionWithEverythingItSubmitted() async throws {
        let strokes = HandwritingGenerator(seed: 3215).page(strokes: 25, canvas: .letter).strokes
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let id = try await library.createDocument(title: "Dropped window").id
        let session = try await library.open(id, options: options)
        let page = await session.pageIDs()[0]
        var window: Window? = Window(session)
        for s in strokes { window!.penUp(s, on: page) }
        window = nil
        #expect(await eventually { await session.isClosed }, "the deinit's close ran")
        try await expectReleasedAndReopened(library, id, page: page, holding: strokes.map(\.id))
    }

    /// Two windows holding one session: one closes synchronously twice (its second close is done
    /// at once and closes nothing), the other's edits still go in; the last holder's synchronous
    /// close closes the session and frees the lock.
    @Test func aHolderClosedSynchronouslyTwiceLetsGoOnce() async throws {
        let strokes = HandwritingGenerator(seed: 3216).page(strokes: 2, canvas: .letter).strokes
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let id = try await library.createDocument(title: "Two windows").id
        let a = try await library.openShared(id, options: options)
        let b = try await library.openShared(id, options: options)
        let page = await a.session.pageIDs()[0]
        b.session.submit([.append([.stroke(strokes[0])])], to: page)
        let first = closeWithoutAwait(a), second = closeWithoutAwait(a)
        #expect(second.isDone)
        try await first.value()
        let bClosed = await b.session.isClosed, holders = await b.session.holderCount
        #expect(a.isClosed && !bClosed && holders == 1)
        try await b.session.append(strokes[1], to: page)
        try await closeWithoutAwait(b).value()
        #expect(await b.session.isClosed)
        try await expectReleasedAndReopened(library, id, page: page, holding: strokes.map(\.id))
    }

    let options = SessionOptions(autosaveDelay: nil, thumbnails: nil)

    /// The document's lock is free (taken at once, as another process would take it), and the
    /// document opens again holding `expected` on `page`, in that order.
    func expectReleasedAndReopened(_ library: Library, _ id: UUID, page: UUID, holding expected: [UUID]) async throws {
        let lock = try library.package(id).lockForWriting(library.fileSystem)
        library.fileSystem.unlock(lock)
        let again = try await library.open(id, options: options)
        #expect(try await again.content(of: page).elements.map(\.id) == expected)
        try await again.close()
    }
}

/// What a `deinit` or a UIKit callback does: it cannot `await`, so it gets the synchronous
/// `close()`.
private func closeWithoutAwait(_ session: DocumentSession) -> SubmittedClose { session.close() }
private func closeWithoutAwait(_ holder: SessionHolder) -> SubmittedClose { holder.close() }

/// A window of an app: pen-ups submitted, its session closed when it goes away.
private final class Window {
    let session: DocumentSession
    init(_ session: DocumentSession) { self.session = session }
    func penUp(_ stroke: Stroke, on page: UUID) { session.submit([.append([.stroke(stroke)])], to: page) }
    deinit { session.close() }
}
