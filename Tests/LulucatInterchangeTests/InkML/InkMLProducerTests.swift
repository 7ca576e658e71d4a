// InkML as real producers write it (issue 14 §1): each producer style in Tests/Fixtures/InkML/
// imports with its counts, a page of the physical size (or fitted when unitless), and renders.

import Foundation
import Testing
import LulucatInk
import LulucatRender
@testable import LulucatInterchange

enum InkMLFixtures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/InkML")

    static func read(_ name: String) throws -> InkMLDocument {
        try InkMLReader.read(try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    /// The ink's extent in points (from the samples, without radii).
    static func extent(_ doc: InkMLDocument) -> (width: Double, height: Double) {
        let xs = doc.strokes.flatMap { $0.samples.map(\.x) }, ys = doc.strokes.flatMap { $0.samples.map(\.y) }
        return (Double(xs.max()! - xs.min()!) / 10, Double(ys.max()! - ys.min()!) / 10)
    }

    /// Within a factor of two of `expected` (points).
    static func close(_ value: Double, _ expected: Double) -> Bool { value >= expected / 2 && value <= expected * 2 }

    /// The page renders at the default scale (2 px/pt, what `lnote render` uses) or, when too
    /// large for that, at the scale it fits.
    static func renders(_ doc: InkMLDocument) throws -> Bool {
        let result = try PageRenderer.render(doc.page, fitting: 2, assets: { _ in nil })
        return result.image.width > 0 && result.scale > 0
    }
}

@Suite struct InkMLProducerTests {
    /// PowerPoint 2010: traces in Windows ink space (himetric) while the ink source declares a
    /// digitizer of 3971.76 x 5295.25 counts per inch; read by those resolutions, X came out x0.64
    /// and Y x0.48. The word spans 7191...~8300 himetric in X (about 1.1 cm).
    @Test func officePowerPoint2010() throws {
        let doc = try InkMLFixtures.read("office-powerpoint2010.inkml")
        #expect(doc.strokes.count == 3)
        #expect(doc.strokes.map(\.samples.count) == [219, 10, 19], "\(doc.strokes.map(\.samples.count))")
        #expect(doc.warnings.contains { $0.contains("ink space") }, "\(doc.warnings)")
        // First point exactly: 7191, 166 himetric.
        #expect(doc.strokes[0].samples[0].x == Quantize.position(7191 * 72 / 2540))
        #expect(doc.strokes[0].samples[0].y == Quantize.position(166 * 72 / 2540))
        // X and Y at one scale: the trace ends where its differences sum to, in himetric.
        let e = InkMLFixtures.extent(doc)
        // "brown" and "x": from x 7191 to about 13746 + 300 himetric: 6.9 cm = 195 pt.
        #expect(InkMLFixtures.close(e.width, 6855 * 72 / 2540), "\(e)")
        #expect(doc.strokes[0].ink.width == Quantize.length(0.04667 * 720 / 25.4))
        #expect(doc.strokes[0].samples.allSatisfy { $0.pressure <= 1000 })
        #expect(try InkMLFixtures.renders(doc))
    }

    /// CROHME formulas spanning about one unit: 500 distinct points must stay 500 distinct
    /// points (on the 0.1 pt grid they became 11), fitted to the page with a warning.
    @Test func crohmeSmallUnitIsFittedNotCollapsed() throws {
        let doc = try InkMLFixtures.read("crohme-small-unit.inkml")
        #expect(doc.strokes.count == 5)
        #expect(doc.sampleCount == 500)
        let distinct = Set(doc.strokes.flatMap { $0.samples.map { [$0.x, $0.y] } })
        #expect(distinct.count == 500, "\(distinct.count)")
        #expect(doc.warnings.contains { $0.contains("fitted to the page") }, "\(doc.warnings)")
        let e = InkMLFixtures.extent(doc)
        #expect(e.width <= 540 && e.height <= 720 && max(e.width, e.height) > 500, "\(e)")
        #expect(doc.page.canvasSize == .letter)
        #expect(try InkMLFixtures.renders(doc))
    }

    /// Unitless integers of tens of thousands: not pages metres wide, fitted to Letter.
    @Test func crohmeLargeIntegersAreFitted() throws {
        let doc = try InkMLFixtures.read("crohme-large-integers.inkml")
        #expect(doc.strokes.count == 4)
        #expect(doc.sampleCount == 240)
        #expect(doc.page.canvasSize == .letter)
        let xs = doc.strokes.flatMap { $0.samples.map(\.x) }
        #expect(xs.min()! >= 360 - 1 && xs.max()! <= 5760 + 1)
        #expect(try InkMLFixtures.renders(doc))
    }

    @Test func w3cExampleIsReadAsPoints() throws {
        let doc = try InkMLFixtures.read("w3c-example.inkml")
        #expect(doc.strokes.count == 5)
        #expect(doc.strokes.map(\.samples.count) == [27, 20, 12, 13, 16])
        // On a page, legible: read as points (as before), said once.
        #expect(doc.strokes[0].samples[0].x == 100)
        #expect(doc.warnings.contains { $0.contains("read as points") })
        #expect(try InkMLFixtures.renders(doc))
    }

    /// OneNote's highlighter: a translucent wide rectangle tip without rasterOp is a highlighter
    /// as wide as the tip's larger side; the pen beside it stays a pen.
    @Test func oneNoteHighlighter() throws {
        let doc = try InkMLFixtures.read("onenote-highlighter.inkml")
        #expect(doc.strokes.count == 2)
        #expect(doc.strokes[0].ink.tool == .pen)
        #expect(doc.strokes[1].ink.tool == .highlighter)
        #expect(doc.strokes[1].ink.width == Quantize.length(0.5 * 720 / 25.4))
        #expect(doc.strokes[1].ink.color == RGBA8(r: 255, g: 255, b: 0, a: 128))
        #expect(doc.warnings.contains { $0.contains("round tips") }, "\(doc.warnings)")
        // himetric with a resolution of 1 per himetric: 2000 himetric = 2 cm.
        #expect(InkMLFixtures.close(InkMLFixtures.extent(doc).width, 2200 * 72 / 2540))
        #expect(try InkMLFixtures.renders(doc))
    }

    /// Wacom IoT Paper wraps <inkml:ink> in its own <paper>; its ink source has a sample rate
    /// (200 per second) and no T channel, so times are 5 ms apart.
    @Test func wacomIoTPaper() throws {
        let doc = try InkMLFixtures.read("wacom-iot-paper.inkml")
        #expect(doc.strokes.count == 2)
        #expect(doc.sampleCount == 7)
        #expect(doc.strokes[0].samples.map(\.time) == [0, 5, 10, 15])
        #expect(doc.warnings.contains { $0.contains("sample rate") })
        #expect(doc.strokes[0].samples[0].x == Quantize.position(20.5 * 72 / 25.4))
        // 20...190 mm wide, 30...252 mm tall: an A4 sheet's ink.
        let e = InkMLFixtures.extent(doc)
        #expect(InkMLFixtures.close(e.width, 170 * 72 / 25.4) && InkMLFixtures.close(e.height, 222 * 72 / 25.4))
        #expect(try InkMLFixtures.renders(doc))
    }

    /// Double channels with a resolution count 1/resolution of the unit (they read x100 and
    /// widths x1000 before).
    @Test func doubleChannelsWithResolution() throws {
        let doc = try InkMLFixtures.read("double-resolution.inkml")
        #expect(doc.strokes.count == 1)
        let s = doc.strokes[0].samples
        #expect(s[0].x == Quantize.position(20 * 72 / 25.4) && s[0].y == Quantize.position(30 * 72 / 25.4))
        #expect(s[2].x == Quantize.position(150 * 72 / 25.4))
        #expect(s[0].radius == Quantize.length(0.5 * 72 / 25.4 / 2))
        #expect(s.map(\.time) == [0, 5, 10])
        #expect(doc.page.canvasSize == .letter)
    }
}

/// The rules that have no producer fixture of their own.
@Suite struct InkMLRulesTests {
    @Test func canvasTransformIsApplied() throws {
        let doc = try InkMLReader.read(Data("""
            <ink xmlns="http://www.w3.org/2003/InkML"><definitions><context xml:id="c">
            <traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/></traceFormat>
            <canvasTransform><mapping type="affine"><affine>2 0 10, 0 3 -5</affine></mapping></canvasTransform>
            </context></definitions><trace contextRef="#c">1 2, 3 4</trace></ink>
            """.utf8))
        // x' = 2x + 10, y' = 3y - 5, then pt.
        #expect(xy(doc) == [[120, 10], [160, 70]])
        let bad = try InkMLReader.read(Data("""
            <ink><context><canvasTransform><mapping type="affine"><affine>NaN 0 0, 0 1 0</affine></mapping></canvasTransform></context>
            <trace>1 2</trace></ink>
            """.utf8))
        #expect(xy(bad) == [[10, 20]])
        #expect(bad.warnings.contains { $0.contains("cannot be read") })
    }

    /// A context's canvas gives the units of the trace values once mapped (identity here): the
    /// ink source's digitizer resolution (50 per cm, which read 20x too large) does not apply.
    @Test func canvasUnitsAreTheTraceUnits() throws {
        let doc = try InkMLReader.read(Data("""
            <inkml:ink xmlns:inkml="http://www.w3.org/2003/InkML"><inkml:definitions>
            <inkml:canvas xml:id="canvas0"><inkml:traceFormat><inkml:channel name="X" type="integer" units="himetric"/>
            <inkml:channel name="Y" type="integer" units="himetric"/></inkml:traceFormat></inkml:canvas>
            <inkml:context xml:id="ctx0" canvasRef="#canvas0">
              <inkml:canvasTransform><inkml:mapping type="identity"/></inkml:canvasTransform>
              <inkml:inkSource xml:id="s"><inkml:traceFormat><inkml:channel name="X" type="integer" units="cm"/><inkml:channel name="Y" type="integer" units="cm"/></inkml:traceFormat>
              <inkml:channelProperties><inkml:channelProperty channel="X" name="resolution" value="50" units="1/cm"/>
              <inkml:channelProperty channel="Y" name="resolution" value="50" units="1/cm"/></inkml:channelProperties></inkml:inkSource>
            </inkml:context></inkml:definitions>
            <inkml:trace contextRef="#ctx0">2540 5080, 5080 2540</inkml:trace></inkml:ink>
            """.utf8))
        #expect(xy(doc) == [[720, 1440], [1440, 720]])
        // With an affine mapping, the mapped values are in the canvas's units too.
        let mapped = try InkMLReader.read(Data("""
            <ink><definitions><canvas xml:id="c"><traceFormat><channel name="X" units="mm"/><channel name="Y" units="mm"/></traceFormat></canvas>
            <context xml:id="k" canvasRef="#c"><canvasTransform><mapping type="affine"><affine>0.5 0 0, 0 0.5 0</affine></mapping></canvasTransform>
            <inkSource><traceFormat><channel name="X" type="integer"/><channel name="Y" type="integer"/></traceFormat></inkSource></context></definitions>
            <trace contextRef="#k">50.8 101.6</trace></ink>
            """.utf8))
        #expect(xy(mapped) == [[720, 1440]])
    }

    /// Views with from/to draw the points they select (1-based, inclusive), of a trace or of a
    /// group's children.
    @Test func traceViewRangesAreDrawn() throws {
        let doc = try InkMLReader.read(Data("""
            <ink xmlns="http://www.w3.org/2003/InkML"><definitions>
            <traceFormat xml:id="f"><channel name="X" units="pt"/><channel name="Y" units="pt"/></traceFormat>
            <trace xml:id="a">1 1, 2 2, 3 3, 4 4, 5 5</trace>
            <traceGroup xml:id="g"><trace>10 10, 11 11, 12 12</trace><trace>20 20, 21 21, 22 22</trace></traceGroup>
            </definitions>
            <traceView traceDataRef="#a" from="2" to="4"/>
            <traceView traceDataRef="#g" from="1:2" to="2:1"/>
            </ink>
            """.utf8))
        #expect(doc.strokes.count == 3)
        #expect(xy(doc, stroke: 0) == [[20, 20], [30, 30], [40, 40]])
        #expect(xy(doc, stroke: 1) == [[110, 110], [120, 120]])
        #expect(xy(doc, stroke: 2) == [[200, 200]])
        #expect(!doc.warnings.contains { $0.contains("from/to") })
        #expect(throws: InkMLError.self) {
            try InkMLReader.read(Data(##"<ink><definitions><trace xml:id="a">1 2</trace></definitions><traceView traceDataRef="#a" from="0"/></ink>"##.utf8))
        }
    }

    /// Fitting unitless X and Y scales a unitless W with them; a W in a length keeps its size.
    @Test func widthsUnderTheUnitlessFit() throws {
        func read(_ w: String) throws -> InkMLDocument {
            try InkMLReader.read(Data("""
                <ink><traceFormat><channel name="X"/><channel name="Y"/><channel name="W"\(w)/></traceFormat>
                <trace>0.1 0.1 0.01, 1.1 1.1 0.01</trace></ink>
                """.utf8))
        }
        let unitless = try read("")
        let inMM = try read(" units=\"mm\"")
        // 1 unit fitted to 540 pt: a W of 0.01 unit is 5.4 pt, radius 2.7 pt.
        #expect(unitless.strokes[0].samples[0].radius == 27)
        // 0.01 mm stays 0.01 mm: radius 0.014 pt, 0 tenths.
        #expect(inMM.strokes[0].samples[0].radius == 0)
        #expect(xy(unitless) == xy(inMM))
    }

    @Test func eraserLikeBrushesAreReported() throws {
        let doc = try InkMLReader.read(Data("""
            <ink><definitions><brush xml:id="e"><brushProperty name="rasterOp" value="mergePenNot"/></brush></definitions>
            <trace brushRef="#e">1 2, 3 4</trace></ink>
            """.utf8))
        #expect(doc.strokes.count == 1)
        #expect(doc.warnings.contains { $0.contains("eraser") })
    }

    /// Our writer's page groups come back as pages, each with its canvas; images are said to
    /// be left out.
    @Test func everyPageIsWrittenAndReadBack() throws {
        let p1 = PageContent(canvasSize: .a4, elements: [.stroke(Stroke(samples: [Sample(x: 10, y: 20, radius: 5, pressure: 500, time: 0)]))])
        let image = ImageElement(assetID: UUID(), frame: QuantizedRect(x: 0, y: 0, width: 100, height: 100))
        let p2 = PageContent(canvasSize: .letter, elements: [.image(image),
                              .stroke(Stroke(samples: [Sample(x: 30, y: 40, radius: 5, pressure: 500, time: 0),
                                                       Sample(x: 35, y: 45, radius: 5, pressure: 600, time: 8)]))])
        let p3 = PageContent(canvasSize: QuantizedSize(width: 10000, height: 20000), elements: [])
        let export = InkMLWriter.write(pages: [p1, p2, p3])
        #expect(export.notWritten == ["page 2: 1 image(s) not written (InkML has no images)"])
        let back = try InkMLReader.read(export.data)
        #expect(back.pages.count == 3)
        #expect(back.pages.map(\.canvasSize) == [.a4, .letter, QuantizedSize(width: 10000, height: 20000)])
        #expect(back.pages[0].strokes.map(\.samples) == p1.strokes.map(\.samples))
        #expect(back.pages[1].strokes.map(\.samples) == p2.strokes.map(\.samples))
        #expect(back.pages[2].elements.isEmpty)
        #expect(back.warnings.isEmpty, "\(back.warnings)")
        let text = String(decoding: export.data, as: UTF8.self)
        #expect(text.contains("<traceGroup xml:id=\"page2\">\n    <annotation type=\"page\">2</annotation>\n    <annotation type=\"canvas\">612 792</annotation>\n    <trace contextRef=\"#ctx0\" brushRef=\"#br0\">3 4 0 0.5 1, 3.5 4.5 8 0.6 1</trace>\n  </traceGroup>"), "\(text)")
    }
}
