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

    @Test func anImportReportsItsTracesThenTheDocumentInOrder() async throws {
        let root = NSTemporaryDirectory() + "lnote-inkml-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let library = Library(root: root)
        var text = "<ink xmlns=\"http://www.w3.org/2003/InkML\">\n"
        for t in 0..<40 { text += "<trace>\(t) 0, \(t + 5) 5, \(t + 9) 9</trace>\n" }
        let data = Data((text + "</ink>\n").utf8)
        // A new document, then a new last page of an existing one.
        for existing in [nil, try library.createDocument(title: "Existing").id] {
            let reports = Reports()
            let result = try await DocumentTransfer.importInkML(data, into: library, title: "Forty", document: existing) { reports.add($0) }
            #expect(result.strokes == 40)
            let seen = reports.all
            // 40 traces and one step that makes the document or page appear: 0 of 41 first,
            // 41 of 41 last, each report above the one before it.
            #expect(seen.first == OperationProgress(.importing, completed: 0, total: 41))
            #expect(seen.last == OperationProgress(.importing, completed: 41, total: 41))
            #expect(seen.count == 42 && Set(seen.map(\.total)) == [41])
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.completed < $1.completed })
        }
    }
}

/// Progress reports gathered from a callback that may run on another thread.
final class Reports: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [OperationProgress] = []
    func add(_ p: OperationProgress) { lock.withLock { items.append(p) } }
    var all: [OperationProgress] { lock.withLock { items } }
}
