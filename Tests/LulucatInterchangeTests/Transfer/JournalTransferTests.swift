// A journal document with strokes only in its journals survives a one-file export and import.

import Foundation
import Testing
import LulucatInk
import LulucatStore
import LulucatInterchange

@Suite struct JournalTransferTests {
    @Test func framesInTheJournalTravelWithTheDocument() async throws {
        let root = NSTemporaryDirectory() + "lnote-journal-transfer-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let library = Library(root: root + "/a")
        let package = try await library.createDocument(title: "Ledger", engine: .journal)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        var generator = SystemRandomNumberGenerator()
        for i in 0..<4 {
            let samples = (0..<30).map { k in
                Sample(x: Int32(1000 + k * 9 + i), y: Int32(2000 + Int.random(in: 0..<50, using: &generator)), radius: 12, pressure: 500, time: UInt32(k * 4))
            }
            try await session.append(Stroke(samples: samples), to: page)
            try await session.save()
        }
        let expected = try await session.content(of: page)
        try await session.flush()  // document.json up to date (the app went to the background)
        await session.abandon()  // then killed: the strokes are only in the journal
        #expect(try JournalFile.summary(package, page: page).frames == 4)

        let zip = root + "/ledger.zip"
        try await DocumentTransfer.exportArchive(package.id, from: library, to: zip)
        let other = Library(root: root + "/b")
        let imported = try DocumentTransfer.importArchive(try Data(contentsOf: URL(fileURLWithPath: zip)), into: other)
        #expect(try StoredPage.read(imported.package, page: page) == expected)
        let reopened = try await other.open(imported.package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        #expect(try await reopened.content(of: page) == expected)
        try await reopened.close()
    }
}
