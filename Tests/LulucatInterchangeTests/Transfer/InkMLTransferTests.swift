// InkML import through the library: a file of our page groups becomes a document of as many pages.

import Foundation
import Testing
import LulucatInk
import LulucatStore
import LulucatInterchange

@Suite struct InkMLTransferTests {
    @Test func everyPageOfAWrittenDocumentIsImported() async throws {
        let root = NSTemporaryDirectory() + "lnote-inkml-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let library = Library(root: root)
        func stroke(_ x: Int32) -> Stroke {
            Stroke(samples: (0..<5).map { Sample(x: x + Int32($0) * 10, y: 100, radius: 10, pressure: 500, time: UInt32($0 * 4)) })
        }
        let pages = [PageContent(canvasSize: .letter, elements: [.stroke(stroke(100))]),
                     PageContent(canvasSize: .a4, elements: [.stroke(stroke(200)), .stroke(stroke(300))]),
                     PageContent(canvasSize: .letter, elements: [])]
        let file = InkMLWriter.write(pages: pages)
        let result = try await DocumentTransfer.importInkML(file.data, into: library, title: "Three pages")
        let doc = try DocumentMetadata.read(result.package)
        #expect(doc.pages.count == 3)
        #expect(doc.pages.map { QuantizedSize(width: $0.width, height: $0.height) } == [QuantizedSize.letter, .a4, .letter])
        for (entry, page) in zip(doc.pages, pages) {
            let stored = try StoredPage.read(result.package, page: entry.id)
            #expect(stored.strokes.map(\.samples) == page.strokes.map(\.samples))
        }
        #expect(result.strokes == 3 && result.samples == 15)
    }
}
