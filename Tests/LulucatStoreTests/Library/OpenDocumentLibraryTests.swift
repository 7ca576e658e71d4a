// The library around documents open in this process: a second window shares the session
// (openShared), duplicate, rename and trash work on an open document with nothing accepted lost,
// and the async operations an app calls (issue 13, item 7).

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
@testable import LulucatStoreSQLite
import LulucatStoreTesting

@Suite struct OpenDocumentLibraryTests {
    init() { Library.enableSQLiteEngine() }
    let noAutosave = SessionOptions(autosaveDelay: nil)

    @Test func aSecondWindowSharesTheSessionAndTheLastCloseCloses() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Two windows")
        let first = try await library.openSharedSession(package.id, options: noAutosave)
        let second = try await library.openSharedSession(package.id, options: noAutosave)
        #expect(first === second)
        #expect(await first.holderCount == 2)
        // A plain open still says in use: it asks for the document to itself.
        await #expect { _ = try await library.open(package.id) } throws: { error in
            if case StoreError.documentInUse = error { return true } else { return false }
        }
        let events = Task { () -> Bool in
            var closed = false
            for await e in await second.events() { if case .closed = e { closed = true } }
            return closed
        }
        let page = await first.pageIDs()[0]
        let a = sampleStroke(seed: 1)
        try await first.append(a, to: page)
        try await first.close()
        // The first window's close saved its stroke; the second window goes on.
        #expect(try PageFile.decode(readBytes(package.pagePath(page))!).elements == [.stroke(a)])
        #expect(await second.holderCount == 1)
        #expect(await !second.closing)
        let b = sampleStroke(seed: 2)
        try await second.append(b, to: page)
        try await second.close()
        #expect(await events.value)
        await #expect(throws: StoreError.self) { try await second.append(sampleStroke(seed: 3), to: page) }

        let reopened = try await library.open(package.id, options: noAutosave)
        #expect(try await reopened.content(of: page).elements == [.stroke(a), .stroke(b)])
        try await reopened.close()
        // Closed for good: the next openShared opens a new session.
        let third = try await library.openSharedSession(package.id, options: noAutosave)
        #expect(third !== first)
        #expect(await third.holderCount == 1)
        try await third.close()
    }

    /// `openSessions` answers what `openSession` answers for every document, in one look: this
    /// library's open sessions only (not another library's, not a closed one's), through a root
    /// spelled with a trailing slash and a `.` too.
    @Test func openSessionsListsThisLibrarysSessionsOnly() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path + "/a")
        let other = Library(root: tmp.path + "/b")
        let a = try await library.createDocument(title: "A"), b = try await library.createDocument(title: "B")
        let c = try await library.createDocument(title: "C"), elsewhere = try await other.createDocument(title: "D")
        #expect(library.openSessions().isEmpty)
        let sa = try await library.open(a.id, options: noAutosave)
        let sb = try await library.openSharedSession(b.id, options: noAutosave)
        let sd = try await other.open(elsewhere.id, options: noAutosave)
        let open = library.openSessions()
        #expect(Set(open.keys) == [a.id, b.id])
        #expect(open[a.id] === sa && open[b.id] === sb)
        for id in [a.id, b.id, c.id] { #expect(open[id] === library.openSession(id)) }
        #expect(Set(Library(root: tmp.path + "/./a/").openSessions().keys) == [a.id, b.id])
        #expect(Set(other.openSessions().keys) == [elsewhere.id])
        try await sa.close()
        #expect(Set(library.openSessions().keys) == [b.id])
        try await sb.close()
        try await sd.close()
        #expect(library.openSessions().isEmpty)
    }

    @Test func manyTasksOpeningAtOnceGetOneSession() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Race")
        let sessions = try await withThrowingTaskGroup(of: DocumentSession.self) { group in
            for _ in 0..<16 { group.addTask { try await library.openSharedSession(package.id, options: self.noAutosave) } }
            var all: [DocumentSession] = []
            for try await s in group { all.append(s) }
            return all
        }
        #expect(sessions.allSatisfy { $0 === sessions[0] })
        #expect(await sessions[0].holderCount == 16)
        for s in sessions { try await s.close() }
        #expect(await sessions[0].holderCount == 1)
        await #expect(throws: StoreError.self) { _ = try await sessions[0].addPage() }
        let again = try await library.open(package.id, options: noAutosave)
        try await again.close()
    }

    @Test(arguments: EngineKind.allCases)
    func duplicateCopiesAnOpenDocumentWithItsUnsavedEdits(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Open", engine: engine)
        let session = try await library.open(package.id, options: noAutosave)
        let page = await session.pageIDs()[0]
        let strokes = (0..<20).map { sampleStroke(30, seed: $0) }
        for s in strokes { try await session.append(s, to: page) }
        #expect(await session.dirtyPageIDs == [page])

        let copy = try await library.duplicate(package.id, title: "Copy")
        #expect(copy.id != package.id)
        // The original session goes on.
        let late = sampleStroke(seed: 99)
        try await session.append(late, to: page)
        let copied = try await library.open(copy.id, options: noAutosave)
        #expect(await copied.title == "Copy")
        #expect(try await copied.content(of: copied.pageIDs()[0]).elements == strokes.map { .stroke($0) })
        try await copied.close()
        try await session.close()
        let reopened = try await library.open(package.id, options: noAutosave)
        #expect(try await reopened.content(of: page).elements == (strokes + [late]).map { .stroke($0) })
        try await reopened.close()
        for p in [package, copy] {
            #expect(DocumentVerifier().verify(p).filter { $0.severity == .error }.isEmpty)
        }
        // A closed document copies as before.
        let second = try await library.duplicate(package.id)
        #expect(try await library.documents().count == 3 && second.id != copy.id)
    }

    @Test func renameGoesThroughTheOpenSession() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Before")
        let session = try await library.open(package.id, options: noAutosave)
        try await library.rename(package.id, to: "After")
        #expect(await session.title == "After")
        #expect(try await library.documents().map(\.title) == ["After"])
        #expect(await session.holderCount == 1)
        #expect(await !session.closing)
        try await session.append(sampleStroke(), to: await session.pageIDs()[0])
        try await session.close()
        #expect(try PackageReader.readDocument(package, fileSystem: PosixFileSystem()).title == "After")
    }

    @Test func trashingAnOpenDocumentSavesAndClosesItFirst() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Doomed")
        let session = try await library.openSharedSession(package.id, options: noAutosave)
        _ = try await library.openSharedSession(package.id, options: noAutosave)
        let page = await session.pageIDs()[0]
        let stroke = sampleStroke(seed: 5)
        try await session.append(stroke, to: page)
        try await library.moveToTrash(package.id)
        #expect(await session.holderCount == 1)
        await #expect { try await session.append(sampleStroke(seed: 6), to: page) } throws: { error in
            if case StoreError.sessionClosed = error { return true } else { return false }
        }
        #expect(try await library.documents().isEmpty)
        #expect(try await library.trashedDocuments().map(\.id) == [package.id])

        try await library.restoreFromTrash(package.id)
        let back = try await library.open(package.id, options: noAutosave)
        #expect(try await back.content(of: page).elements == [.stroke(stroke)])
        try await back.close()
        try await library.moveToTrash(package.id)
        try await library.emptyTrash()
        #expect(try await library.trashedDocuments().isEmpty)
    }
}
