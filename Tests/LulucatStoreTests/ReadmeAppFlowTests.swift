// README's app flow, as written there, with `import LulucatStore` (no LulucatInk): the model, the
// PencilKit-shaped points, the quantizers and the JSON form all come with it; LulucatStoreSQLite
// only for the SQLite engine the flow migrates a copy to.

import Foundation
import Testing
import LulucatStore
import LulucatStoreMaintenance
import LulucatStoreSQLite

@Suite struct ReadmeAppFlowTests {
    init() { Library.enableSQLiteEngine() }
    @Test func theWholeAppFlowWithOneImport() async throws {
        let tmp = TemporaryFolder()
        let points = (0..<50).map { i in
            PencilPoint(location: InkPoint(x: 100 + Double(i) * 1.5, y: 200 + Double(i % 7) * 0.33), timeOffset: Double(i) / 240,
                        size: InkSize(width: 2.4, height: 2.4), opacity: 1, force: 0.4 + Double(i) / 100,
                        azimuth: 0.7, altitude: 1.1)
        }
        let jpeg = Data([0xFF, 0xD8, 0xFF, 0xD9])

        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Lecture notes")
        let window = try await library.openShared(package.id)
        let session = window.session
        let page = await session.pageIDs()[0]

        let stroke = try Stroke(ink: Ink(tool: .pen), pencilPoints: points)
        try await session.append(stroke, to: page)
        try await session.insertImage(jpeg, fileExtension: "jpg", frame: try Quantize.rect(x: 72, y: 72, width: 200, height: 150), on: page)
        for _ in 0..<360 {
            try await session.transform([stroke.id], by: QuantizedTransform(rotation: 100, centerX: 3060, centerY: 3960), on: page)
        }
        let clipboard = try InkJSON.encode(try await session.content(of: page))
        try await session.flush()
        try await window.close()

        let copy = try await library.duplicate(package.id)
        try await library.rename(copy.id, to: "Lecture notes (old)")
        try EngineMigration().migrate(copy, to: .sqlite)
        try await library.moveToTrash(copy.id)

        // What the flow left: the stroke where it was drawn, the clipboard reading back as the page.
        let pasted = try InkJSON.decode(PageContent.self, from: clipboard)
        #expect(pasted.strokes == [stroke])
        #expect(pasted.images.map(\.frame) == [QuantizedRect(x: 720, y: 720, width: 2000, height: 1500)])
        #expect(try await library.documents().map(\.title) == ["Lecture notes"])
        #expect(try await library.trashedDocuments().map(\.title) == ["Lecture notes (old)"])
        let reopened = try await library.open(package.id)
        #expect(try await reopened.content(of: page) == pasted)
        try await reopened.close()
        try await library.restoreFromTrash(copy.id)
        let migrated = try await library.open(copy.id)
        #expect(await migrated.engineKind == .sqlite)
        #expect(try await migrated.content(of: page) == pasted)
        try await migrated.close()
    }
}
