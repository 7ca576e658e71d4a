// Events for the UI: every subscriber of a session hears of edits, saves, failed saves,
// thumbnails and the close; a library's subscribers hear of documents created, renamed, trashed,
// restored and changed.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
@testable import LulucatStoreThumbnails

/// Collects a stream's events until it ends.
private func collect<E: Sendable>(_ stream: AsyncStream<E>) -> Task<[E], Never> {
    Task { var all: [E] = []; for await e in stream { all.append(e) }; return all }
}

/// Collects a stream's events until `done` says the events so far are all that is awaited
/// (`complete`), the stream ends or `bound` passes (then `complete` is false): what arrived, to
/// wait for events themselves rather than sleep and look.
private func collect<E: Sendable>(_ stream: AsyncStream<E>, within bound: Duration = .seconds(30),
                                  until done: @escaping @Sendable ([E]) -> Bool) async -> (events: [E], complete: Bool) {
    await withTaskGroup(of: (events: [E], complete: Bool)?.self) { group in
        group.addTask {
            var all: [E] = []
            for await e in stream {
                all.append(e)
                if done(all) { return (all, true) }
            }
            return (all, false)  // ended, or cancelled when the bound passed
        }
        group.addTask { try? await Task.sleep(for: bound); return nil }
        // The first to finish stops the other; the collector always answers.
        for await result in group {
            group.cancelAll()
            if let result { return result }
        }
        return ([], false)
    }
}

private func stroke(_ k: Int) -> Stroke {
    Stroke(ink: Ink(tool: .pen, color: RGBA8(r: 1, g: 2, b: 3), width: 10),
           samples: [Sample(x: Int32(10 * k), y: 5, radius: 10, pressure: 500, time: 0),
                     Sample(x: Int32(10 * k + 5), y: 9, radius: 10, pressure: 500, time: 4)])
}

/// The event without its payload, to compare sequences of events.
private func name(_ e: SessionEvent) -> String {
    switch e {
    case .elementsChanged: return "elements"
    case .pagesChanged: return "pages"
    case .pageSaved: return "saved"
    case .saveFailed(_, let retry): return retry ? "failed, retrying" : "failed"
    case .thumbnailWritten: return "thumbnail"
    case .findings: return "findings"
    case .undoChanged: return "undo"
    case .closed: return "closed"
    case .state: return "state"
    case .elementsEdited: return "edited"
    case .documentEdited: return "document"
    }
}

@Suite struct SessionEventsTests {
    init() { Library.enableThumbnails() }
    @Test func everySubscriberHearsEditsSavesThumbnailsAndTheClose() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try library.createDocument(title: "Events")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: ThumbnailOptions(width: 8)))
        let page = await session.pageIDs()[0]
        let a = collect(await session.events()), b = collect(await session.events())
        try await session.append(stroke(1), to: page)
        try await session.append(stroke(2), to: page)
        try await session.save()
        await session.waitForThumbnails()
        let second = try await session.addPage()
        try await session.append(stroke(3), to: second)
        try await session.close()
        let (ea, eb) = (await a.value, await b.value)
        #expect(ea.map(name) == eb.map(name))
        // Thumbnails are written in the background: where they fall among the rest may vary.
        // Events a moment apart may come together: repeated "elements" of one page arrive once or twice.
        let names = ea.map(name).filter { $0 != "thumbnail" }.reduce(into: [String]()) { if $0.last != $1 || $1 != "elements" { $0.append($1) } }
        #expect(names == ["elements", "saved", "pages", "elements", "saved", "closed"])
        #expect(ea.map(name).filter { $0 == "thumbnail" }.count == 2)
        var sequences: [UInt64] = []
        var changedPages: [UUID] = []
        for e in ea {
            if case .pageSaved(let p, let s) = e { sequences.append(s); #expect(p == page || p == second) }
            if case .elementsChanged(let p) = e { changedPages.append(p) }
        }
        #expect(sequences.count == 2 && sequences[0] < sequences[1])
        #expect(changedPages == [page, second] || changedPages == [page, page, second])
        #expect(ea.last.map(name) == "closed")
        // A subscriber after the close gets an ended stream.
        #expect(await collect(await session.events()).value.isEmpty)
    }

    @Test func aFailedAutosaveIsAnEventAndSaysItWillRetry() async throws {
        let tmp = TemporaryFolder()
        let fs = InstrumentedFileSystem()
        let library = Library(root: tmp.path, fileSystem: fs)
        let package = try library.createDocument(title: "Failing")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: .milliseconds(10), thumbnails: nil))
        let page = await session.pageIDs()[0]
        let events = await session.events()
        fs.failPathContaining = ".content"
        try await session.append(stroke(1), to: page)
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next().map(name) == "elements")
        guard case .saveFailed(let error, let willRetry)? = await iterator.next() else { Issue.record("no saveFailed event"); return }
        #expect(error.isOutOfSpace && willRetry)
        fs.failPathContaining = nil
        while let e = await iterator.next() {
            if case .pageSaved(let p, _) = e { #expect(p == page); break }
        }
        try await session.close()
    }

    @Test func theOpenReportIsTheFirstEventAndADroppedSessionEndsItsStream() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try library.createDocument(title: "Report")
        try Data([1]).write(to: URL(fileURLWithPath: package.pagesPath + "/" + temporaryFilePrefix + "left-over"))
        var session: DocumentSession? = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let events = collect(await session!.events())
        try await session!.append(stroke(1), to: session!.pageIDs()[0])
        session = nil
        let all = await events.value
        #expect(all.map(name) == ["findings", "elements", "closed"])
        if case .findings(let f)? = all.first { #expect(f.contains { $0.message.contains("stale temporary") }) }
    }

    @Test func libraryEventsFollowDocuments() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path + "/lib/")
        try library.prepare()
        let events = Library(root: tmp.path + "/lib").events()
        let package = try library.createDocument(title: "One")
        try await library.rename(package.id, to: "Two")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        try await session.append(stroke(1), to: session.pageIDs()[0])
        try await session.close()
        // Another library's events stay apart (made before the last event awaited, so that one
        // sent here by mistake would be among those collected).
        _ = try Library(root: tmp.path + "/other").createDocument(title: "Elsewhere")
        let copy = try library.duplicate(package.id)
        try library.moveToTrash(package.id)
        try library.restoreFromTrash(package.id)
        // Events are handed over in the background: wait for the last one, however busy the machine.
        let id = package.id
        let (all, complete) = await collect(events) { $0.contains(.restored(id)) }
        #expect(complete, "the events did not all arrive within 30 s; arrived: \(all)")
        #expect(all.first == .created(id))
        #expect(all.contains(.renamed(id, title: "Two")))
        #expect(all.contains(.changed(id)))
        #expect(all.contains(.created(copy.id)))
        let tail = Array(all.suffix(2))
        #expect(tail == [.trashed(id), .restored(id)])
        #expect(Set(all.compactMap { if case .created(let d) = $0 { d } else { nil } }) == [id, copy.id])
    }

    /// A cancelled verification says it did not check everything (an error finding).
    @Test func cancelledVerifyIsNotOK() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try library.createDocument(title: "Verify")
        let findings = await Task { () -> [Finding] in
            withUnsafeCurrentTask { $0?.cancel() }
            return DocumentVerifier().verify(package)
        }.value
        #expect(findings.contains { $0.severity == .error && $0.message.contains("cancelled") })
        #expect(DocumentVerifier().verify(package).filter { $0.severity == .error }.isEmpty)
    }
}
