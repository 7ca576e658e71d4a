// InkML time (timestamps, timeOffset, respectTo, duration) and canvas mappings beyond one affine
// map (product, mappingRef; lookup and MathML reported and not applied): docs/inkml.md.

import Foundation
import Testing
import LulucatInk
@testable import LulucatInterchange

@Suite struct InkMLTimeAndMappingTests {
    static func read(_ xml: String) throws -> InkMLDocument { try InkMLReader.read(Data(xml.utf8)) }

    static func times(_ doc: InkMLDocument, stroke: Int = 0) -> [UInt32] { doc.strokes[stroke].samples.map(\.time) }

    // MARK: - Mappings

    @Test func productMappingsAreComposedInOrder() throws {
        func doc(_ first: String, _ second: String) throws -> InkMLDocument {
            try Self.read("""
                <ink xmlns="http://www.w3.org/2003/InkML"><definitions><context xml:id="c">
                <traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/></traceFormat>
                <canvasTransform><mapping type="product">
                  <mapping type="affine"><affine>\(first)</affine></mapping>
                  <mapping type="affine"><affine>\(second)</affine></mapping>
                </mapping></canvasTransform></context></definitions>
                <trace contextRef="#c">1 2, 3 4</trace></ink>
                """)
        }
        // Scale by 2, then move by (10, -5): x' = 2x + 10, y' = 2y - 5.
        // (The pen goes above the page in both, so each is moved down onto it as a whole: Y is
        // compared from the first point, X as it is.)
        let a = try doc("2 0 0, 0 2 0", "1 0 10, 0 1 -5")
        #expect(xy(a).map { [$0[0], $0[1] - xy(a)[0][1]] } == [[120, 0], [160, 40]])   // (120, -10), (160, 30)
        // The other order: x' = 2(x + 10), y' = 2(y - 5).
        let b = try doc("1 0 10, 0 1 -5", "2 0 0, 0 2 0")
        #expect(xy(b).map { [$0[0], $0[1] - xy(b)[0][1]] } == [[220, 0], [260, 40]])   // (220, -60), (260, -20)
        #expect(a.warnings.allSatisfy { !$0.contains("not applied") }, "\(a.warnings)")
    }

    @Test func mappingByReference() throws {
        let doc = try Self.read("""
            <ink xmlns="http://www.w3.org/2003/InkML"><definitions>
            <mapping xml:id="flip" type="affine"><matrix>1 0 0, 0 -1 100</matrix></mapping>
            <context xml:id="c"><traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/></traceFormat>
            <canvasTransform><mapping mappingRef="#flip"/></canvasTransform></context></definitions>
            <trace contextRef="#c">1 2, 3 40</trace></ink>
            """)
        #expect(xy(doc) == [[10, 980], [30, 600]])
        let missing = try Self.read("""
            <ink><context><traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/></traceFormat>
            <canvasTransform><mapping mappingRef="#nowhere"/></canvasTransform></context><trace>1 2</trace></ink>
            """)
        #expect(xy(missing) == [[10, 20]])
        #expect(missing.warnings.contains { $0.contains("#nowhere") && $0.contains("not applied") }, "\(missing.warnings)")
    }

    /// Lookup tables and MathML formulas are not applied: said, and the coordinates read as
    /// written (nothing lost, nothing silently moved). A product with such a part is not
    /// applied either, rather than half applied.
    @Test func nonAffineMappingsAreReportedNotApplied() throws {
        for (type, body, said) in [("lookup", "<bind source=\"X\"/><table apply=\"absolute\">0 0, 10 20</table>", "lookup table"),
                                   ("mathml", "<math xmlns=\"http://www.w3.org/1998/Math/MathML\"><ci>x</ci></math>", "MathML"),
                                   ("unknown", "", "\"unknown\"")] {
            let doc = try Self.read("""
                <ink xmlns="http://www.w3.org/2003/InkML"><context><traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/></traceFormat>
                <canvasTransform><mapping type="\(type)">\(body)</mapping></canvasTransform></context><trace>1 2, 3 4</trace></ink>
                """)
            #expect(xy(doc) == [[10, 20], [30, 40]], "\(type)")
            #expect(doc.warnings.contains { $0.contains(said) && $0.contains("not applied") }, "\(type): \(doc.warnings)")
        }
        let product = try Self.read("""
            <ink><context><traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/></traceFormat>
            <canvasTransform><mapping type="product"><mapping type="affine"><affine>2 0 0, 0 2 0</affine></mapping>
            <mapping type="mathml"/></mapping></canvasTransform></context><trace>1 2</trace></ink>
            """)
        #expect(xy(product) == [[10, 20]])
        #expect(product.warnings.contains { $0.contains("product") && $0.contains("not applied") }, "\(product.warnings)")
    }

    @Test func channelMappingsAreReported() throws {
        let doc = try Self.read("""
            <ink><traceFormat><channel name="X" units="pt"><mapping type="affine"><affine>2 0 0, 0 1 0</affine></mapping></channel>
            <channel name="Y" units="pt"><mapping type="identity"/></channel></traceFormat><trace>1 2</trace></ink>
            """)
        #expect(xy(doc) == [[10, 20]])
        #expect(doc.warnings.contains { $0.contains("channel X") && $0.contains("not applied") }, "\(doc.warnings)")
        #expect(!doc.warnings.contains { $0.contains("channel Y") }, "\(doc.warnings)")
    }

    // MARK: - Time

    @Test func isoTimestrings() {
        #expect(InkMLInterpreter.isoMilliseconds("1970-01-01T00:00:00Z") == 0)
        #expect(InkMLInterpreter.isoMilliseconds("1970-01-02") == 86_400_000)
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let expected = f.date(from: "2011-02-22T00:21:40.232Z")!.timeIntervalSince1970 * 1000
        #expect(abs(InkMLInterpreter.isoMilliseconds("2011-02-22T00:21:40.232")! - expected) < 0.01)
        #expect(abs(InkMLInterpreter.isoMilliseconds("2011-02-22T01:21:40.232+01:00")! - expected) < 0.01)
        #expect(abs(InkMLInterpreter.isoMilliseconds("2011-02-21T19:21:40.232-05:00")! - expected) < 0.01)
        #expect(InkMLInterpreter.isoMilliseconds("2000-02-29T12:00:00Z") == 951_825_600_000)
        for bad in ["", "yesterday", "2011-13-01", "2011-02-22T25:00", "2011-02-22T00:21:40.", "2011-02-22T00:21:40Zjunk"] {
            #expect(InkMLInterpreter.isoMilliseconds(bad) == nil, "\(bad)")
        }
    }

    /// Office's way: a timestamp in the context, a timeOffset (ms) on each trace.
    @Test func timeOffsetsFromTheContextTimestamp() throws {
        let doc = try Self.read("""
            <ink xmlns="http://www.w3.org/2003/InkML"><definitions><context xml:id="c">
            <traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/></traceFormat>
            <timestamp xml:id="ts0" timeString="2011-02-22T00:21:40.232"/></context></definitions>
            <trace contextRef="#c">1 2, 3 4</trace>
            <trace contextRef="#c" timeOffset="1638.021">5 6</trace>
            <trace>7 8</trace></ink>
            """)
        let base = InkMLInterpreter.isoMilliseconds("2011-02-22T00:21:40.232")!
        #expect(doc.strokeStartTimes.count == 3)
        #expect(doc.strokeStartTimes[0] == nil) // no T, no timeOffset: not said
        #expect(abs(doc.strokeStartTimes[1]! - (base + 1638.021)) < 0.001)
        #expect(doc.strokeStartTimes[2] == nil)
    }

    /// T counted from the timestamp `respectTo` names; timestamps chained by timestampRef.
    @Test func tRespectToATimestamp() throws {
        let doc = try Self.read("""
            <ink xmlns="http://www.w3.org/2003/InkML"><definitions>
            <timestamp xml:id="start" time="1000000"/>
            <timestamp xml:id="later" timestampRef="#start" timeOffset="500"/>
            <traceFormat xml:id="f"><channel name="X" units="pt"/><channel name="Y" units="pt"/>
            <channel name="T" units="s" respectTo="#later"/></traceFormat>
            <context xml:id="c" traceFormatRef="#f"/></definitions>
            <trace contextRef="#c">1 2 2, 3 4 2.25</trace></ink>
            """)
        #expect(Self.times(doc) == [0, 250])
        #expect(doc.strokeStartTimes == [1_000_000 + 500 + 2000])
        let dangling = try Self.read("""
            <ink><traceFormat><channel name="X"/><channel name="Y"/><channel name="T" respectTo="#gone"/></traceFormat><trace>1 2 3</trace></ink>
            """)
        #expect(dangling.strokeStartTimes == [nil])
        #expect(dangling.warnings.contains { $0.contains("#gone") }, "\(dangling.warnings)")
    }

    /// A continued trace's times follow the file's clock: the gap between the parts is kept
    /// (before, the continuation began where the first part ended).
    @Test func continuationsKeepTheirGap() throws {
        let doc = try Self.read("""
            <ink xmlns="http://www.w3.org/2003/InkML">
            <traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/><channel name="T" units="ms"/></traceFormat>
            <trace xml:id="a" continuation="begin">1 1 100, 2 2 110</trace>
            <trace xml:id="b" continuation="end" priorRef="#a">3 3 150, 4 4 160</trace></ink>
            """)
        #expect(doc.strokes.count == 1)
        #expect(Self.times(doc) == [0, 10, 50, 60])
        // The same with timeOffsets and no T (unitless X and Y: fitted, times kept).
        let offsets = try Self.read("""
            <ink><trace xml:id="a" continuation="begin" timeOffset="0" duration="20">1 1, 2 2, 3 3</trace>
            <trace xml:id="b" continuation="end" priorRef="#a" timeOffset="70" duration="10">4 4, 5 5</trace></ink>
            """)
        #expect(offsets.strokes.count == 1)
        #expect(Self.times(offsets) == [0, 10, 20, 70, 80])
        // Without times on either part, the old rule: end to end.
        let untimed = try Self.read("""
            <ink><traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/><channel name="T"/></traceFormat>
            <trace xml:id="a" continuation="begin">1 1 0, 2 2 5</trace>
            <trace xml:id="b" continuation="end" priorRef="a">3 3 ?, 4 4 ?</trace></ink>
            """)
        #expect(Self.times(untimed) == [0, 5, 5, 5])
    }

    /// No T and no sample rate, but the trace's duration: times spread evenly, said once.
    @Test func timesFromDuration() throws {
        let doc = try Self.read("""
            <ink><traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/></traceFormat>
            <trace duration="300">1 1, 2 2, 3 3, 4 4</trace><trace duration="50">1 1</trace><trace>5 5, 6 6</trace></ink>
            """)
        #expect(Self.times(doc, stroke: 0) == [0, 100, 200, 300])
        #expect(Self.times(doc, stroke: 1) == [0])
        #expect(Self.times(doc, stroke: 2) == [0, 0])
        #expect(doc.warnings.contains { $0.contains("duration") }, "\(doc.warnings)")
        #expect(doc.warnings.contains { $0.contains("every sample's time is 0") }, "\(doc.warnings)")
    }

    /// The real Office 2010 file: its strokes begin at the context's timestamp plus their
    /// timeOffsets.
    @Test func office2010StartTimes() throws {
        let doc = try InkMLReader.read(try Data(contentsOf: RealInkML.folder.appendingPathComponent("office2010/InkMLjs-ink1.inkml")))
        let base = InkMLInterpreter.isoMilliseconds("2011-02-22T00:21:40.232")!
        #expect(doc.strokeStartTimes.count == 3)
        let expected = [1638.021, 1965.6252, 2823.6362].map { base + $0 }
        for (got, want) in zip(doc.strokeStartTimes, expected) {
            #expect(abs(got! - want) < 0.001, "\(String(describing: got)) \(want)")
        }
    }
}
