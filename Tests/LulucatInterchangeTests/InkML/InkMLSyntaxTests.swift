// Small hand-written InkML files, one per feature of the recommendation's syntax.

import Foundation
import Testing
import LulucatInk
@testable import LulucatInterchange

/// Reads InkML text.
func inkml(_ text: String) throws -> InkMLDocument { try InkMLReader.read(Data(text.utf8)) }

/// `<ink>` with a points-in-pt X/Y format as context `c`, and the given body.
func ptInk(_ body: String, channels: String = ##"<channel name="X" units="pt"/><channel name="Y" units="pt"/>"##) -> String {
    """
    <ink xmlns="http://www.w3.org/2003/InkML">
      <definitions><context xml:id="c"><traceFormat>\(channels)</traceFormat></context></definitions>
      \(body)
    </ink>
    """
}

/// The warnings other than the note that a file without T and without a sample rate has times of 0.
func substantive(_ warnings: [String]) -> [String] {
    warnings.filter { !$0.hasPrefix("no T channel and no sample rate") }
}

func xy(_ doc: InkMLDocument, stroke: Int = 0) -> [[Int32]] {
    doc.strokes[stroke].samples.map { [$0.x, $0.y] }
}

@Suite struct InkMLSyntaxTests {
    @Test func defaultTraceFormatWithoutUnits() throws {
        // The recommendation's first example: no trace format, so X and Y.
        let doc = try inkml(##"<ink xmlns="http://www.w3.org/2003/InkML"><trace>10 0, 9 14, 8 28</trace><trace>1 2</trace></ink>"##)
        #expect(doc.strokes.count == 2)
        // The first point is on the page's top edge: the stroke's width (1 pt) passed it, so the
        // ink is moved down by that much, and shows whole.
        #expect(xy(doc) == [[100, 10], [90, 150], [80, 290]])
        // No units, and the ink on a page at a legible size: read as points, said once; the
        // move is said too.
        #expect(substantive(doc.warnings).count == 2, "\(doc.warnings)")
        #expect(substantive(doc.warnings).contains { $0.contains("read as points") })
        #expect(substantive(doc.warnings).contains { $0.contains("moved 0 pt right and 1 pt down") })
    }

    @Test func missingTimeAndForceGiveConstantChannels() throws {
        let doc = try inkml(ptInk(##"<trace contextRef="#c">1 2, 3 4, 5 6</trace>"##))
        #expect(substantive(doc.warnings).isEmpty)
        for s in doc.strokes[0].samples {
            #expect(s.time == 0)
            #expect(s.pressure == 1000)
            #expect(s.radius == 10) // half the default 2 pt brush
        }
    }

    @Test func differencePrefixesAndTheirPersistence() throws {
        // X: 10, '1 -> 11, 1 (still first) -> 12, "1 -> 12 + 1 + 1 = 14, 0 (still second) -> 16, !5 -> 5
        // Y: 20, '2 -> 22, 2 -> 24, "0 -> 26, 0 -> 28, 5 (still second) -> 28 + 2 + 5 = 35
        let doc = try inkml(ptInk(##"<trace contextRef="#c">10 20, '1 '2, 1 2, "1 "0, 0 0, !5 5</trace>"##))
        #expect(xy(doc) == [[100, 200], [110, 220], [120, 240], [140, 260], [160, 280], [50, 350]])
        // Prefixes glued to numbers, whitespace between a prefix, a sign and the number.
        let glued = try inkml(ptInk(##"<trace contextRef="#c">1125 18432,'23'43,"7"-8,3-5,' - 1 !7</trace>"##))
        // 1125 18432 | '23 '43 -> 1148 18475 | "7 "-8 -> 1148+23+7 = 1178, 18475+43-8 = 18510
        // | 3 -5 (second) -> 1178+30+3 = 1211, 18510+35-5 = 18540 | '-1 !7 -> 1210, 7
        #expect(xy(glued) == [[11250, 184320], [11480, 184750], [11780, 185100], [12110, 185400], [12100, 70]])
    }

    @Test func numberGrammar() throws {
        // "10-5" is two numbers; "1.5.5" is 1.5 and .5; exponents; a hex value; trailing comma.
        let doc = try inkml(ptInk(##"<trace contextRef="#c">10-5, 1.5.5, 2e1 -3E-1, #1F 0.,</trace>"##))
        // As read: (100, -50), (15, 5), (200, -3), (310, 0); the pen went above the page, so the
        // ink is moved down onto it as a whole (X stays: no sample is left of the origin).
        let points = xy(doc)
        #expect(points.map { $0[0] } == [100, 15, 200, 310])
        #expect(points.map { $0[1] - points[0][1] } == [0, 55, 47, 50])
        #expect(points.allSatisfy { $0[1] > 0 })
    }

    @Test func starRepeatsAndQuestionMarkIsUnknown() throws {
        let doc = try inkml(ptInk(##"<trace contextRef="#c">1 2 0.5, * * ?, 3 ? *</trace>"##,
                                  channels: ##"<channel name="X" units="pt"/><channel name="Y" units="pt"/><channel name="F" max="1"/>"##))
        #expect(xy(doc) == [[10, 20], [10, 20], [30, 20]])
        #expect(doc.strokes[0].samples.map(\.pressure) == [500, 500, 500])
    }

    @Test func lengthUnits() throws {
        for (units, value, expected) in [("mm", "25.4", Int32(720)), ("cm", "2.54", 720), ("in", "1", 720),
                                         ("px", "96", 720), ("pt", "72", 720), ("pc", "6", 720),
                                         ("m", "0.0254", 720), ("himetric", "2540", 720)] {
            let doc = try inkml(ptInk(##"<trace contextRef="#c">\##(value) \##(value)</trace>"##,
                                      channels: ##"<channel name="X" units="\##(units)"/><channel name="Y" units="\##(units)"/>"##))
            #expect(xy(doc) == [[expected, expected]], "\(units)")
            #expect(substantive(doc.warnings).isEmpty)
        }
    }

    @Test func integerChannelsWithResolution() throws {
        // Windows ink: integer counts, units cm, 1000 counts per cm (himetric).
        let doc = try inkml("""
            <inkml:ink xmlns:inkml="http://www.w3.org/2003/InkML">
              <inkml:definitions>
                <inkml:context xml:id="ctx0">
                  <inkml:inkSource xml:id="src">
                    <inkml:traceFormat>
                      <inkml:channel name="X" type="integer" max="32767" units="cm"/>
                      <inkml:channel name="Y" type="integer" max="32767" units="cm"/>
                      <inkml:channel name="F" type="integer" max="32767" units="dev"/>
                    </inkml:traceFormat>
                    <inkml:channelProperties>
                      <inkml:channelProperty channel="X" name="resolution" value="1000" units="1/cm"/>
                      <inkml:channelProperty channel="Y" name="resolution" value="1000" units="1/cm"/>
                      <inkml:channelProperty channel="F" name="resolution" value="0" units="1/dev"/>
                    </inkml:channelProperties>
                  </inkml:inkSource>
                </inkml:context>
                <inkml:brush xml:id="br0">
                  <inkml:brushProperty name="width" value="0.05292" units="cm"/>
                  <inkml:brushProperty name="color" value="#FF0000"/>
                  <inkml:brushProperty name="transparency" value="55"/>
                </inkml:brush>
              </inkml:definitions>
              <inkml:trace contextRef="#ctx0" brushRef="#br0">2540 1270 32767, 5080 127 0</inkml:trace>
            </inkml:ink>
            """)
        #expect(substantive(doc.warnings).isEmpty, "\(doc.warnings)")
        #expect(xy(doc) == [[720, 360], [1440, 36]])
        #expect(doc.strokes[0].samples.map(\.pressure) == [1000, 0])
        #expect(doc.strokes[0].ink.color == RGBA8(r: 255, g: 0, b: 0, a: 200))
        #expect(doc.strokes[0].ink.width == 15) // 0.05292 cm = 1.5 pt
    }

    /// Vendor elements in other namespaces are skipped with their content; an identity canvas
    /// transform changes nothing; himetric resolutions are Windows ink space already.
    @Test func vendorExtensionsAndCanvasTransforms() throws {
        let doc = try inkml("""
            <inkml:ink xmlns:inkml="http://www.w3.org/2003/InkML" xmlns:msink="http://schemas.microsoft.com/ink/2010/main">
              <inkml:definitions>
                <inkml:context xml:id="ctx0">
                  <inkml:inkSource xml:id="src">
                    <inkml:traceFormat>
                      <inkml:channel name="X" type="integer" units="cm"/><inkml:channel name="Y" type="integer" units="cm"/>
                      <inkml:channel name="T" type="integer" units="dev"/>
                    </inkml:traceFormat>
                    <inkml:channelProperties>
                      <inkml:channelProperty channel="X" name="resolution" value="1000" units="1/cm"/>
                      <inkml:channelProperty channel="Y" name="resolution" value="1000" units="1/cm"/>
                    </inkml:channelProperties>
                  </inkml:inkSource>
                  <inkml:canvasTransform><inkml:mapping type="identity"/></inkml:canvasTransform>
                  <inkml:timestamp xml:id="ts0" timeString="2026-11-30T12:00:00"/>
                </inkml:context>
              </inkml:definitions>
              <inkml:trace xml:id="t0" contextRef="#ctx0">1000 1000 0, 2000 3000 16</inkml:trace>
              <msink:context><msink:trace>this is not ink</msink:trace></msink:context>
              <inkml:trace contextRef="#ctx0">100 100 5</inkml:trace>
            </inkml:ink>
            """)
        #expect(doc.strokes.count == 2)
        #expect(xy(doc) == [[283, 283], [567, 850]]) // 1 cm = 28.35 pt, 2 cm = 56.69 pt, 3 cm = 85.04 pt
        #expect(doc.strokes[0].samples.map(\.time) == [0, 16])
        #expect(doc.warnings.count == 1, "\(doc.warnings)")
        #expect(doc.warnings.contains { $0.contains("channel T has units \"dev\"") })
    }

    @Test func timeForceWidthAndOrientation() throws {
        let doc = try inkml(ptInk(##"<trace contextRef="#c">1 2 10.5 0 4, 1 3 10.52 1023 3</trace>"##, channels: """
            <channel name="X" units="mm"/><channel name="Y" units="mm" orientation="-ve"/>
            <channel name="T" units="s"/><channel name="F" type="integer" max="1023"/><channel name="W" units="pt"/>
            """))
        let s = doc.strokes[0].samples
        #expect(s.map(\.x) == [28, 28])     // 1 mm = 2.83 pt
        // Upward axis, flipped: -57 and -85 (0.1 pt); that is above the page, so the ink is
        // placed on it, moved down until its top edge (-85 less the radius 20) is 36 pt inside.
        #expect(s.map(\.y) == [-57 + 465, -85 + 465])
        #expect(s.map(\.time) == [0, 20])   // seconds, relative to the first sample
        #expect(s.map(\.pressure) == [0, 1000])
        #expect(s.map(\.radius) == [20, 15]) // W / 2
    }

    /// Ink with its origin at the page's centre (as reMarkable's): negative X, and Y both ways.
    /// Placed on the page by one offset, shapes kept, a margin around; said in a warning. A page
    /// the file declares (our page groups) keeps its ink where the file put it.
    @Test func inkLeftOfOrAboveTheOriginIsPlacedOnThePage() throws {
        let doc = try inkml(ptInk(##"""
            <trace contextRef="#c">-300 -200, -250 -150, -200 -180</trace>
            <trace contextRef="#c">250 400, 300 450</trace>
            """##))
        #expect(doc.pages.count == 1)
        let page = doc.page
        let strokes = page.strokes
        let ink = try #require(strokes.compactMap(\.bounds).reduce(nil) { $0?.union($1) ?? $1 })
        #expect(ink.x == 360 && ink.y == 360, "\(ink)")
        #expect(ink.x >= 0 && ink.y >= 0 && ink.x + ink.width <= page.canvasSize.width && ink.y + ink.height <= page.canvasSize.height)
        // The page grew to hold the ink with the same margin right and below.
        #expect(Int64(page.canvasSize.width) == max(6120, Int64(ink.x) + Int64(ink.width) + 360))
        #expect(Int64(page.canvasSize.height) == max(7920, Int64(ink.y) + Int64(ink.height) + 360))
        // Shapes and places relative to each other are those of the file.
        #expect(strokes[0].samples.map(\.x).map { $0 - strokes[0].samples[0].x } == [0, 500, 1000])
        #expect(strokes[1].samples[0].x - strokes[0].samples[0].x == 5500)
        #expect(strokes[1].samples[0].y - strokes[0].samples[0].y == 6000)
        #expect(doc.warnings.contains { $0.contains("moved") && $0.contains("pt right") }, "\(doc.warnings)")

        // Ink already on the page is not moved, and no warning is said.
        let onPage = try inkml(ptInk(##"<trace contextRef="#c">10 10, 20 20</trace>"##))
        #expect(onPage.strokes[0].samples.map(\.x) == [100, 200])
        #expect(!onPage.warnings.contains { $0.contains("moved") }, "\(onPage.warnings)")
        // A declared page (our own page group, written by InkMLWriter) keeps its ink in place.
        var drawn = PageContent(canvasSize: .letter)
        drawn.elements = [.stroke(Stroke(samples: [Sample(x: -50, y: 100, radius: 10, pressure: 500, time: 0),
                                                   Sample(x: 200, y: 300, radius: 10, pressure: 500, time: 8)]))]
        let back = try InkMLReader.read(InkMLWriter.write(pages: [drawn, drawn]).data)
        #expect(back.pages[0].strokes[0].samples.map(\.x) == [-50, 200])
    }

    @Test func forceWithoutARange() throws {
        let fraction = try inkml(ptInk(##"<trace contextRef="#c">1 2 0.25, 1 2 1</trace>"##,
                                       channels: ##"<channel name="X" units="pt"/><channel name="Y" units="pt"/><channel name="F"/>"##))
        #expect(fraction.strokes[0].samples.map(\.pressure) == [250, 1000])
        #expect(substantive(fraction.warnings).isEmpty)
        let raw = try inkml(ptInk(##"<trace contextRef="#c">1 2 300, 1 2 512</trace>"##,
                                  channels: ##"<channel name="X" units="pt"/><channel name="Y" units="pt"/><channel name="F" type="integer"/>"##))
        #expect(substantive(raw.warnings).count == 1)
        #expect(substantive(raw.warnings)[0].contains("declares no range"))
    }

    @Test func anglesFromAzimuthElevationOrTilt() throws {
        let doc = try inkml(ptInk(##"<trace contextRef="#c">0 0 90 45, 0 0 -90 90</trace><trace contextRef="#t">0 0 0 0, 0 0 45 0</trace>"##,
                                  channels: ##"<channel name="X" units="pt"/><channel name="Y" units="pt"/><channel name="OA" units="deg"/><channel name="OE" units="deg"/>"##)
            .replacingOccurrences(of: "</definitions>", with: ##"<context xml:id="t"><traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/><channel name="OTx" units="deg"/><channel name="OTy" units="deg"/></traceFormat></context></definitions>"##))
        #expect(doc.strokes[0].azimuth == [1571, 4712])
        #expect(doc.strokes[0].altitude == [785, 1571])
        #expect(doc.strokes[1].azimuth == [0, 0])
        #expect(doc.strokes[1].altitude == [1571, 785])
    }

    @Test func unknownChannelsAreDroppedWithOneWarningEach() throws {
        let doc = try inkml(ptInk(##"<trace contextRef="#c">1 9 2 1 5, 3 9 4 0 5</trace><trace contextRef="#c">5 9 6 1 5</trace>"##,
                                  channels: ##"<channel name="X" units="pt"/><channel name="Z"/><channel name="Y" units="pt"/><channel name="S" type="boolean"/><channel name="Q"/>"##))
        #expect(xy(doc) == [[10, 20], [30, 40]])
        #expect(xy(doc, stroke: 1) == [[50, 60]])
        #expect(substantive(doc.warnings).count == 3)
        #expect(doc.warnings.contains { $0.hasPrefix("channel Z (height above the surface)") })
        #expect(doc.warnings.contains { $0.hasPrefix("channel S (tip switch)") })
        #expect(doc.warnings.contains { $0.hasPrefix("channel Q ") })
    }

    @Test func intermittentChannelsAndBooleans() throws {
        let doc = try inkml(ptInk(##"<trace contextRef="#c">1 2 0.2 T, 3 4, 5 6 0.4</trace>"##, channels: """
            <channel name="X" units="pt"/><channel name="Y" units="pt"/>
            <intermittentChannels><channel name="F" max="1" default="0.1"/><channel name="B1" type="boolean" default="F"/></intermittentChannels>
            """))
        #expect(xy(doc) == [[10, 20], [30, 40], [50, 60]])
        #expect(doc.strokes[0].samples.map(\.pressure) == [200, 200, 400])
    }

    @Test func contextRefTraceFormatRefAndBrushRef() throws {
        let doc = try inkml("""
            <ink xmlns="http://www.w3.org/2003/InkML">
              <definitions>
                <traceFormat xml:id="mmXY"><channel name="X" units="mm"/><channel name="Y" units="mm"/></traceFormat>
                <traceFormat xml:id="ptYXT"><channel name="Y" units="pt"/><channel name="X" units="pt"/><channel name="T" units="ms"/></traceFormat>
                <brush xml:id="thick"><brushProperty name="width" value="4" units="mm"/></brush>
                <brush xml:id="thickRed" brushRef="#thick"><brushProperty name="color" value="#FF0000"/></brush>
                <context xml:id="a" traceFormatRef="#mmXY" brushRef="#thickRed"/>
                <context xml:id="b" contextRef="#a" traceFormatRef="#ptYXT"/>
              </definitions>
              <trace contextRef="#a">25.4 12.7</trace>
              <trace contextRef="#b">10 20 5, 30 40 9</trace>
              <trace contextRef="#b" brushRef="#DefaultBrush">1 2 0</trace>
            </ink>
            """)
        #expect(substantive(doc.warnings).isEmpty)
        #expect(xy(doc, stroke: 0) == [[720, 360]])
        #expect(xy(doc, stroke: 1) == [[200, 100], [400, 300]])
        #expect(doc.strokes[1].samples.map(\.time) == [0, 4])
        #expect(doc.strokes[0].ink.width == 113)
        #expect(doc.strokes[1].ink.color == RGBA8(r: 255, g: 0, b: 0)) // inherited through context a
        #expect(doc.strokes[2].ink == Ink())
    }

    @Test func contextsInTheInkStreamChangeTheCurrentContext() throws {
        let doc = try inkml("""
            <ink xmlns="http://www.w3.org/2003/InkML">
              <trace>1 2</trace>
              <context><traceFormat><channel name="X" units="in"/><channel name="Y" units="in"/><channel name="F" max="2"/></traceFormat></context>
              <trace>1 1 1</trace>
              <context><brush><brushProperty name="color" value="#00FF00"/></brush></context>
              <trace>2 2 2</trace>
            </ink>
            """)
        #expect(xy(doc, stroke: 0) == [[10, 20]])
        #expect(xy(doc, stroke: 1) == [[720, 720]])
        #expect(doc.strokes[1].samples[0].pressure == 500)
        // The third inherits the inch format from the current context and adds a brush.
        #expect(xy(doc, stroke: 2) == [[1440, 1440]])
        #expect(doc.strokes[2].ink.color == RGBA8(r: 0, g: 255, b: 0))
    }

    @Test func traceGroupsInheritAndNest() throws {
        let doc = try inkml("""
            <ink xmlns="http://www.w3.org/2003/InkML">
              <definitions>
                <context xml:id="mm"><traceFormat><channel name="X" units="mm"/><channel name="Y" units="mm"/></traceFormat></context>
                <context xml:id="pt"><traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/></traceFormat></context>
                <brush xml:id="hl"><brushProperty name="rasterOp" value="maskPen"/></brush>
                <trace xml:id="kept">7 7</trace>
              </definitions>
              <traceGroup contextRef="#mm" brushRef="#hl">
                <trace>25.4 25.4</trace>
                <traceGroup>
                  <trace>50.8 2.54</trace>
                  <trace contextRef="#pt">5 5</trace>
                </traceGroup>
                <annotation type="truth">A</annotation>
              </traceGroup>
              <traceView traceDataRef="#kept"/>
              <trace type="penUp" contextRef="#pt">9 9</trace>
            </ink>
            """)
        #expect(doc.strokes.count == 4)
        #expect(xy(doc, stroke: 0) == [[720, 720]])
        #expect(xy(doc, stroke: 1) == [[1440, 72]])
        #expect(xy(doc, stroke: 2) == [[50, 50]])
        #expect(doc.strokes[0].ink.tool == .highlighter)
        #expect(doc.strokes[1].ink.tool == .highlighter)
        #expect(doc.strokes[2].ink.tool == .pen) // its own contextRef brings the context's brush
        #expect(xy(doc, stroke: 3) == [[70, 70]]) // a trace from the definitions, through a view
        #expect(doc.warnings.contains { $0.contains("pen-up") })
    }

    /// The shape of handwriting-recognition corpora: traces in the stream, then trace groups of
    /// views over them as segmentation annotations. The views must not draw the traces twice.
    @Test func viewsOverStreamTracesDoNotDuplicateThem() throws {
        let doc = try inkml("""
            <ink xmlns="http://www.w3.org/2003/InkML">
              <traceFormat><channel name="X" type="decimal"/><channel name="Y" type="decimal"/></traceFormat>
              <annotation type="truth">$a+1$</annotation>
              <trace id="0">985 3317, 990 3320</trace>
              <trace id="1">1000 3300, 1010 3310, 1020 3320</trace>
              <traceGroup xml:id="10">
                <annotation type="truth">Segmentation</annotation>
                <traceGroup xml:id="11"><annotation type="truth">a</annotation><traceView traceDataRef="0"/></traceGroup>
                <traceGroup xml:id="12"><annotation type="truth">1</annotation><traceView traceDataRef="#1"/></traceGroup>
              </traceGroup>
            </ink>
            """)
        #expect(doc.strokes.count == 2)
        #expect(doc.sampleCount == 5)
        // Unitless, far from the origin: moved onto the page (36 pt in), scale kept (the formula
        // is 35 x 20 units, legible as points).
        #expect(xy(doc) == [[360, 530], [410, 560]])
        #expect(doc.page.canvasSize == .letter)
    }

    @Test func aTraceFormatInTheStreamSetsTheCurrentFormat() throws {
        let doc = try inkml("""
            <ink xmlns="http://www.w3.org/2003/InkML">
              <traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/><channel name="T" units="ms"/></traceFormat>
              <trace>1 2 1000, 3 4 1016</trace>
            </ink>
            """)
        #expect(xy(doc) == [[10, 20], [30, 40]])
        #expect(doc.strokes[0].samples.map(\.time) == [0, 16])
    }

    @Test func continuationJoinsTraces() throws {
        let doc = try inkml(ptInk("""
            <trace xml:id="a" contextRef="#c" continuation="begin">1 1 100, 2 2 110</trace>
            <trace xml:id="b" contextRef="#c" continuation="end" priorRef="#a">3 3 0, 4 4 5</trace>
            """, channels: ##"<channel name="X" units="pt"/><channel name="Y" units="pt"/><channel name="T" units="ms"/>"##))
        #expect(doc.strokes.count == 1)
        #expect(xy(doc) == [[10, 10], [20, 20], [30, 30], [40, 40]])
        #expect(doc.strokes[0].samples.map(\.time) == [0, 10, 10, 15])
    }
}
