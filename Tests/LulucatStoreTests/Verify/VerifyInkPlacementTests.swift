// Verify says when ink lies outside its page: nothing is lost, but part of it does not show.

import Foundation
import Testing
import LulucatInk
import LulucatStoreTesting
@testable import LulucatStore

@Suite struct VerifyInkPlacementTests {
    func stroke(_ points: [(Int32, Int32)]) -> Stroke {
        Stroke(samples: points.enumerated().map { i, p in Sample(x: p.0, y: p.1, radius: 20, pressure: 500, time: UInt32(i * 8)) })
    }

    @Test func inkWhollyOutsideThePageIsAWarningAndInkOnOrAcrossItsEdgeIsNot() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Placement")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil))
        let page = await session.pageIDs()[0]
        // On the page, centres on its very edges (the radius reaching past them is no matter).
        try await session.append(stroke([(0, 0), (6120, 7920)]), to: page)
        // Drawn past the edge: partly on the page, shown, no warning.
        try await session.append(stroke([(-600, 100), (400, 300)]), to: page)
        let second = try await session.addPage()
        try await session.append(stroke([(-600, 100), (-400, 300)]), to: second)
        try await session.append(stroke([(7000, 100), (9000, 300)]), to: second)
        try await session.append(stroke([(100, 100), (200, 300)]), to: second)
        try await session.close()

        let findings = DocumentVerifier().verify(package)
        #expect(!findings.contains { $0.severity == .error }, "\(findings)")
        let outside = findings.filter { $0.message.contains("outside the page") }
        #expect(outside.count == 1, "\(findings)")
        #expect(outside.first?.severity == .warning)
        #expect(outside.first?.message == "page 2: 2 strokes lie wholly outside the page (612.0 x 792.0 pt) and do not show", "\(outside)")
    }
}
