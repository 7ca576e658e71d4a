// Every InkML fixture, real or imitated, imported into a library: each stroke on its page, one
// stroke per trace and one sample per point, a render that shows ink, and verify with nothing
// outside the page. The list is the folder itself, so a fixture added later is covered too.

import Foundation
import Testing
import LulucatInk
import LulucatRender
import LulucatStore
@testable import LulucatInterchange

@Suite struct InkMLOnThePageTests {
    /// Every `.inkml` under Tests/Fixtures/InkML, relative to it.
    static let fixtures: [String] = {
        let folder = InkMLFixtures.folder
        guard let e = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        return e.compactMap { $0 as? String }.filter { $0.hasSuffix(".inkml") }.sorted()
    }()

    @Test func theWalkFindsEveryProducer() {
        // The folder is found and holds the producers the other suites name (a wrong path would
        // make the walk below vacuous).
        #expect(Self.fixtures.count >= 26, "\(Self.fixtures)")
        for name in ["w3c-example.inkml", "iamondo-anoto-pen.inkml", "real/imadoc/ImadocSen-writer10-sentence1-excerpt.inkml",
                     "real/crohme/KAIST-TrainData2_23_sub_9.inkml", "neo-smartpen.inkml", "remarkable-rmc-onenote.inkml",
                     "mathwriting-human.inkml", "mathwriting-synthetic.inkml"] {
            #expect(Self.fixtures.contains(name), "\(name)")
        }
    }

    @Test(arguments: fixtures)
    func inkLiesOnItsPage(_ name: String) async throws {
        let data = try Data(contentsOf: InkMLFixtures.folder.appendingPathComponent(name))
        let root = NSTemporaryDirectory() + "lnote-inkml-page-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let library = Library(root: root)
        let result = try await DocumentTransfer.importInkML(data, into: library, title: name)
        let metadata = try DocumentMetadata.read(result.package)
        var pages: [PageContent] = []
        for entry in metadata.pages { pages.append(try StoredPage.read(result.package, page: entry.id)) }

        // One stroke per trace, one sample per point, counted from the XML by the real-fixture
        // suite's own decoder (none of these files draws a trace twice or in part).
        let traces = RealInkML.traceTexts(String(decoding: data, as: UTF8.self))
        let strokes = pages.flatMap(\.strokes)
        #expect(strokes.count == traces.count, "\(name): \(strokes.count) strokes for \(traces.count) traces")
        #expect(strokes.map(\.samples.count) == traces.map(RealInkML.pointCount), "\(name)")

        for (n, page) in pages.enumerated() {
            let size = page.canvasSize
            let canvas = QuantizedRect(x: 0, y: 0, width: size.width, height: size.height)
            for (i, stroke) in page.strokes.enumerated() {
                let pen = try #require(stroke.centreBounds), ink = try #require(stroke.bounds)
                // Where the pen went is on the page, and so is the ink around it.
                #expect(Self.contains(canvas, pen), "\(name) page \(n + 1) stroke \(i + 1): pen \(pen) on \(size)")
                #expect(Self.contains(canvas, ink), "\(name) page \(n + 1) stroke \(i + 1): ink \(ink) on \(size)")
            }
            // A page the importer sized keeps 36 pt around the ink where it grew it.
            guard let all = page.strokes.compactMap(\.bounds).reduce(nil, { $0?.union($1) ?? $1 }) else { continue }
            if size.width > QuantizedSize.letter.width {
                #expect(Int64(size.width) - (Int64(all.x) + Int64(all.width)) >= 360, "\(name): \(all) on \(size)")
            }
            if size.height > QuantizedSize.letter.height {
                #expect(Int64(size.height) - (Int64(all.y) + Int64(all.height)) >= 360, "\(name): \(all) on \(size)")
            }
            // Ink moved onto the page has its left or top edge 36 pt inside it when the pen went
            // off the page, on its edge when only a width passed it.
            if result.warnings.contains(where: { $0.contains("it was moved") }) {
                #expect([0, 360].contains(all.x) || [0, 360].contains(all.y), "\(name): \(all)")
            }
            // Drawn: the page's render is not blank.
            let image = try PageRenderer.render(page, fitting: 1, assets: { _ in nil }).image
            #expect(Self.inkPixels(image) > 0, "\(name) page \(n + 1) renders blank")
        }
        let findings = DocumentVerifier().verify(result.package)
        #expect(!findings.contains { $0.message.contains("outside the page") }, "\(name): \(findings)")
        #expect(findings.allSatisfy { $0.severity != .error }, "\(name): \(findings)")
    }

    /// A stroke whose width passes the top edge is moved down by that width; beside ink at the
    /// far end of the model's range (where a union of bounds is clamped) it stays, and nothing
    /// overflows (found by InkMLFuzzTests).
    @Test func edgeInkIsMovedByItsWidthUnlessTheModelEndsFirst() throws {
        func read(_ far: String) throws -> InkMLDocument {
            try InkMLReader.read(Data("""
                <ink><definitions><brush xml:id="b"><brushProperty name="width" value="2" units="pt"/></brush>
                <context xml:id="c" brushRef="#b"><traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/></traceFormat></context></definitions>
                <trace contextRef="#c">10 0, 20 5</trace><trace contextRef="#c">30 \(far)</trace></ink>
                """.utf8))
        }
        let near = try read("40")
        #expect(near.strokes[0].samples.map(\.y) == [10, 60])
        #expect(near.warnings.contains { $0.contains("moved 0 pt right and 1 pt down") }, "\(near.warnings)")
        let far = try read("214748364.5")
        #expect(far.strokes[0].samples.map(\.y) == [0, 50])
        #expect(far.strokes[1].samples[0].y == 2_147_483_645)
        #expect(!far.warnings.contains { $0.contains("moved") }, "\(far.warnings)")
    }

    /// A page grown for its ink keeps 36 pt beyond the farthest stroke, not beyond the first
    /// that passed Letter (grown stroke by stroke, Wacom's pages converted to InkML kept 13 to
    /// 24 pt).
    @Test func aPageGrowsToItsFarthestInk() throws {
        let doc = try InkMLReader.read(Data("""
            <ink><definitions><brush xml:id="b"><brushProperty name="width" value="2" units="pt"/></brush>
            <context xml:id="c" brushRef="#b"><traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/></traceFormat></context></definitions>
            <trace contextRef="#c">100 100, 700 800</trace><trace contextRef="#c">720 810</trace></ink>
            """.utf8))
        #expect(doc.page.canvasSize == QuantizedSize(width: 7200 + 10 + 360, height: 8100 + 10 + 360))
    }

    static func contains(_ outer: QuantizedRect, _ inner: QuantizedRect) -> Bool {
        Int64(inner.x) >= Int64(outer.x) && Int64(inner.y) >= Int64(outer.y)
            && Int64(inner.x) + Int64(inner.width) <= Int64(outer.x) + Int64(outer.width)
            && Int64(inner.y) + Int64(inner.height) <= Int64(outer.y) + Int64(outer.height)
    }

    /// Pixels that are not the white of the page.
    static func inkPixels(_ image: RGBAImage) -> Int {
        var n = 0
        for i in stride(from: 0, to: image.pixels.count, by: 4)
        where image.pixels[i] != 255 || image.pixels[i + 1] != 255 || image.pixels[i + 2] != 255 { n += 1 }
        return n
    }
}

/// What each producer added with these fixtures writes that others do not (sources in
/// real/README.md and SOURCES.md).
@Suite struct InkMLMoreProducersTests {
    /// IAMonDo (a Logitech io2 Anoto pen): the context's canvas transform is an affine mapping of
    /// X Y T F, bound by `<bind>`s, as a 4 x 5 matrix ending in a comma, that turns the pen's
    /// coordinates half a turn (X' = -X, Y' = -Y). Read as written, the page showed the writing
    /// upside down; applied, "ok" reads left to right with its underline below it.
    @Test func iamondoCanvasTransformIsApplied() throws {
        let doc = try InkMLFixtures.read("iamondo-anoto-pen.inkml")
        #expect(!doc.warnings.contains { $0.contains("not applied") }, "\(doc.warnings)")
        #expect(doc.strokes.map(\.samples.count) == [15, 12, 14, 16, 1])
        let o = doc.strokes[0].samples, underline = doc.strokes[3].samples, dot = doc.strokes[4].samples[0]
        // The file's X decreases as the word goes on; on the page x grows: the dot (X 560) lies
        // 70.875 pt right of the o's first point (X 630.875).
        #expect(abs(Int(dot.x) - Int(o[0].x) - 709) <= 1, "\(dot.x) \(o[0].x)")
        // The o's second point is 2.125 left of its first in the page (the file says +2.125).
        #expect(abs(Int(o[1].x) - Int(o[0].x) + 21) <= 1, "\(o[1].x) \(o[0].x)")
        // The underline (Y 896 in the file) is below the o (Y about 930).
        #expect(underline.map(\.y).min()! > o.map(\.y).max()!)
        // T without units, in seconds since 1970: 13 ms between samples (read as milliseconds,
        // the stroke lasted a fifth of a millisecond).
        #expect(o[1].time == 13 && o.last!.time == 13 * 14, "\(o.map(\.time))")
        #expect(doc.warnings.contains { $0.contains("in seconds") }, "\(doc.warnings)")
        // Small relative values stay milliseconds.
        let relative = try InkMLReader.read(Data("<ink><traceFormat><channel name=\"X\"/><channel name=\"Y\"/><channel name=\"T\"/></traceFormat><trace>1 2 0, 3 4 13</trace></ink>".utf8))
        #expect(relative.strokes[0].samples.map(\.time) == [0, 13])
        #expect(relative.warnings.contains { $0.contains("read as milliseconds") }, "\(relative.warnings)")
        // Negative after the transform, so moved onto the page as a whole.
        #expect(doc.warnings.contains { $0.contains("no units") }, "\(doc.warnings)")
        #expect(doc.strokes.flatMap(\.samples).allSatisfy { $0.x >= 360 && $0.y >= 360 })
    }

    /// Bound affine mappings: columns follow the `<bind source>`s (and one more is added), rows
    /// the `<bind target>`s; X and Y depending on another channel are not applied.
    @Test func boundAffineMappings() throws {
        // Sources Y X (swapped columns), a translation column, a third row for T.
        let swapped = InkMLInterpreter.boundAffine(
            rows: [[0, 2, 5], [3, 0, -1], [0, 0, 1]], sources: ["Y", "X"], targets: ["X", "Y", "T"])
        #expect(swapped == PlaneMap(a: 2, b: 0, c: 5, d: 0, e: 3, f: -1))
        // Targets in another order than the sources; no translation column.
        let rows: [[Double?]] = [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
        #expect(InkMLInterpreter.boundAffine(rows: rows, sources: ["X", "Y", "T"], targets: ["Y", "X", "T"])
                == PlaneMap(a: 1, b: 0, c: 0, d: 0, e: 1, f: 0))
        // X from T: refused; a row too short, a value not a number, no Y: refused.
        #expect(InkMLInterpreter.boundAffine(rows: [[1, 0, 0.5], [0, 1, 0]], sources: ["X", "Y", "T"], targets: ["X", "Y"]) == nil)
        #expect(InkMLInterpreter.boundAffine(rows: [[1, 0], [0]], sources: ["X", "Y", "T"], targets: ["X", "Y"]) == nil)
        #expect(InkMLInterpreter.boundAffine(rows: [[1, nil], [0, 1]], sources: ["X", "Y"], targets: ["X", "Y"]) == nil)
        #expect(InkMLInterpreter.boundAffine(rows: [[1, 0], [0, 1]], sources: ["X", "T"], targets: ["X", "T"]) == nil)

        // In a file: the same matrix but X taken from T is said and not applied.
        let file = """
            <ink><definitions><canvasTransform xml:id="m"><mapping type="affine">
            <bind source="X"/><bind target="X"/><bind source="Y"/><bind target="Y"/><bind source="T"/><bind target="T"/>
            <matrix>1 0 0.001 0,0 1 0 0,0 0 1 0,</matrix></mapping></canvasTransform>
            <traceFormat xml:id="f"><channel name="X" units="pt"/><channel name="Y" units="pt"/><channel name="T" units="ms"/></traceFormat>
            <context xml:id="c" canvasTransformRef="#m" traceFormatRef="#f"/></definitions>
            <trace contextRef="#c">10 20 0, 30 40 1000</trace></ink>
            """
        let doc = try InkMLReader.read(Data(file.utf8))
        #expect(doc.strokes[0].samples.map(\.x) == [100, 300])
        #expect(doc.warnings.contains { $0.contains("X Y T") && $0.contains("not applied") }, "\(doc.warnings)")
        // Applied: X' = -X + 50 with the binds listed targets first.
        let applied = try InkMLReader.read(Data(file.replacingOccurrences(of: "1 0 0.001 0,", with: "-1 0 0 50,").utf8))
        #expect(applied.strokes[0].samples.map(\.x) == [400, 200])
        #expect(!applied.warnings.contains { $0.contains("not applied") }, "\(applied.warnings)")
    }

    /// ImadocSen-OnDB (IRISA, Fujitsu Siemens Tablet PCs): `<ink>` without a namespace, `id`
    /// instead of `xml:id`, the trace format inside the ink source, units "ink", CRLF lines.
    @Test func imadocTabletPC() throws {
        let doc = try InkMLFixtures.read("real/imadoc/ImadocSen-writer10-sentence1-excerpt.inkml")
        #expect(doc.strokes.map(\.samples.count) == [96, 101, 41, 13])
        #expect(doc.warnings.contains { $0.contains("\"ink\"") }, "\(doc.warnings)")
        // Blue, from the brush the context names by reference.
        #expect(doc.strokes.allSatisfy { $0.ink.color.b == 255 && $0.ink.color.r == 0 })
    }

    /// Neo smartpen (through neo-pen): no definitions at all, decimals of the pen's own units,
    /// some with a float's binary noise printed whole.
    @Test func neoSmartpen() throws {
        let doc = try InkMLFixtures.read("neo-smartpen.inkml")
        #expect(doc.strokes.count == 9)
        // On the page as they are (the ink spans about 29 x 3 units): read as points.
        #expect(doc.strokes[0].samples[0].x == Quantize.position(8.35))
        #expect(doc.strokes[0].samples[4].x == Quantize.position(8.910000000000002))
    }

    /// reMarkable pages converted for OneNote (Excustic/rmc's InkML writer): himetric with a
    /// resolution of 1 per himetric, the page scaled into 32767 x 32767 himetric, which is
    /// taller than Letter: the page grows around the ink.
    @Test func remarkableThroughRmc() throws {
        let doc = try InkMLFixtures.read("remarkable-rmc-onenote.inkml")
        #expect(doc.strokes[0].samples[0].x == Quantize.position(2156 * 72 / 2540.0))
        #expect(doc.strokes[3].ink.tool == .highlighter)
        let bottom = doc.strokes.compactMap(\.bounds).map { Int64($0.y) + Int64($0.height) }.max()!
        #expect(bottom > Int64(QuantizedSize.letter.height))
        #expect(Int64(doc.page.canvasSize.height) == bottom + 360)
    }

    /// MathWriting (Google, 2024): synthetic inks are glyphs in LaTeX bounding boxes, so their
    /// y is negative above the baseline; the whole is moved onto the page, shape kept.
    @Test func mathwritingSyntheticNegativeY() throws {
        let doc = try InkMLFixtures.read("mathwriting-synthetic.inkml")
        let ys = doc.strokes.flatMap(\.samples).map(\.y)
        #expect(ys.allSatisfy { $0 >= 0 } && ys.min()! <= 400)
        // The fraction bar stays between its two glyphs.
        let bar = doc.strokes[1].samples[0].y
        #expect(doc.strokes[0].samples.map(\.y).max()! < bar && bar < doc.strokes[2].samples.map(\.y).min()!)
        // T is decimal milliseconds: 10 ms between samples.
        #expect(doc.strokes[0].samples[1].time == 10)
    }
}
