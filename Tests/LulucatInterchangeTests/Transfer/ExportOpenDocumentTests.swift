// Export sees what the person sees (issue 32 item 2): a document open in a session of this
// process is exported with every edit the session accepted, on every engine, with no flush().

import Foundation
import Testing
import LulucatInk
import LulucatStore
import LulucatStoreTesting
import LulucatInterchange

@Suite struct ExportOpenDocumentTests {
    init() { Library.enableSQLiteEngine() }

    @Test(arguments: [EngineKind.snapshot, .journal, .sqlite])
    func anOpenDocumentIsExportedWithItsUnsavedEdits(_ engine: EngineKind) async throws {
        let tmp = (path: NSTemporaryDirectory() + "lnote-export-open-" + UUID().uuidString, ())
        defer { try? FileManager.default.removeItem(atPath: tmp.path) }
        let library = Library(root: tmp.path + "/lib")
        let package = try await library.createDocument(title: "Open", engine: engine)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let first = await session.pageIDs()[0]
        var drawn: [Stroke] = []
        for n in 0..<12 {
            let s = sampleStroke(20, seed: n)
            try await session.append(s, to: first)
            drawn.append(s)
        }
        let second = try await session.addPage()
        try await session.append(sampleStroke(30, seed: 99), to: second)
        try await session.delete([drawn[3].id], from: first)
        drawn.remove(at: 3)

        // No flush: the archive still holds every accepted edit, the page added and the erase.
        let zip = tmp.path + "/open.zip"
        try await DocumentTransfer.exportArchive(package.id, from: library, to: zip)
        let other = Library(root: tmp.path + "/other")
        let imported = try DocumentTransfer.importArchive(Data(contentsOf: URL(fileURLWithPath: zip)), into: other)
        let doc = try DocumentMetadata.read(imported.package)
        #expect(doc.pages.map { $0.id } == [first, second])
        let reader = try await other.open(imported.package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        #expect(try await reader.content(of: first).strokes.map { $0.id } == drawn.map { $0.id })
        #expect(try await reader.content(of: first).strokes == drawn)
        #expect(try await reader.content(of: second).strokes.count == 1)
        try await reader.close()

        // The session goes on as before: more edits, saved at close, all there.
        try await session.append(sampleStroke(10, seed: 7), to: first)
        try await session.close()
        let after = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        #expect(try await after.content(of: first).strokes.count == drawn.count + 1)
        try await after.close()
    }
}
