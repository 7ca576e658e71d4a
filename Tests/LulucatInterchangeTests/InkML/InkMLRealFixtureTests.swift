// Real producers' InkML (Tests/Fixtures/InkML/real/, sources in its README.md): every file imports
// with the stroke and sample counts of the XML, at the size the source implies, and renders.

import Foundation
import Testing
import LulucatInk
import LulucatRender
@testable import LulucatInterchange

/// What the test knows of a fixture without our reader: its traces counted and its X and Y
/// decoded by a small decoder of its own (not `TraceParser`).
enum RealInkML {
    static let folder = InkMLFixtures.folder.appendingPathComponent("real")

    /// How a producer's X and Y translate to points.
    enum Scale {
        /// Windows ink space: 0.01 mm a count (Office, OneNote, Word, Windows Journal).
        case himetric
        case points
        /// No units: the reader fits the ink to the page.
        case unitless
    }

    /// Every fixture with the scale its producer implies (a file not listed here fails the test).
    static let scales: [String: Scale] = [
        "crohme/RIT_2014_19.inkml": .unitless,
        "crohme/ISICAL_2014_23_em_51-excerpt.inkml": .unitless,
        "crohme/formulaire001-equation001.inkml": .unitless,
        "crohme/IVC_2014_501_em_18-excerpt.inkml": .unitless,
        "crohme/Nakagawa-10065.inkml": .unitless,
        "crohme/KAIST-TrainData2_23_sub_9.inkml": .unitless,
        // Units "ink", which no InkML version defines: fitted like unitless ink.
        "imadoc/ImadocSen-writer10-sentence1-excerpt.inkml": .unitless,
        "crohme/MfrDB1843-excerpt.inkml": .points,
        "onenote/highlighter_onenote.inkml": .himetric,
        "onenote/onenote_web.inkml": .himetric,
        "onenote/onenote_multiple_contexts-excerpt.inkml": .himetric,
        "word/word_output.inkml": .himetric,
        "journal/journal_output.inkml": .himetric,
        "office2010/InkMLjs-ink1.inkml": .himetric,
    ]

    static func files() throws -> [String] {
        let fm = FileManager.default
        guard let e = fm.enumerator(atPath: folder.path) else { return [] }
        return e.compactMap { $0 as? String }.filter { $0.hasSuffix(".inkml") }.sorted()
    }

    /// The text of each `<trace>` (any prefix), in file order.
    static func traceTexts(_ xml: String) -> [String] {
        var out: [String] = []
        let pattern = try! NSRegularExpression(pattern: "<(?:[A-Za-z_][\\w.-]*:)?trace(?=[\\s>/])[^>]*?(/?)>", options: [])
        let ns = xml as NSString
        var searchFrom = 0
        while let m = pattern.firstMatch(in: xml, range: NSRange(location: searchFrom, length: ns.length - searchFrom)) {
            let end = m.range.location + m.range.length
            if ns.substring(with: m.range(at: 1)) == "/" { out.append(""); searchFrom = end; continue }
            let close = ns.range(of: "</", options: [], range: NSRange(location: end, length: ns.length - end))
            out.append(ns.substring(with: NSRange(location: end, length: close.location - end)))
            searchFrom = close.location
        }
        return out
    }

    /// Points of a trace: its commas plus one (a trailing comma ends it harmlessly).
    static func pointCount(_ text: String) -> Int {
        let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if t.isEmpty { return 0 }
        let commas = t.filter { $0 == "," }.count
        return t.hasSuffix(",") ? commas : commas + 1
    }

    /// X and Y (the first two values of every point) decoded with the difference prefixes of
    /// InkML: `!` explicit, `'` first and `"` second differences, each sticky per channel.
    static func xy(_ text: String) -> [(Double, Double)] {
        var out: [(Double, Double)] = []
        var order = [0, 0], last = [0.0, 0.0], velocity = [0.0, 0.0]
        let tokenPattern = try! NSRegularExpression(pattern: "([!'\"]?)\\s*(-?\\s*(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?)")
        for point in text.split(separator: ",") {
            let p = String(point)
            let matches = tokenPattern.matches(in: p, range: NSRange(location: 0, length: (p as NSString).length))
            guard matches.count >= 2 else { continue }
            var values = [0.0, 0.0]
            for c in 0..<2 {
                let ns = p as NSString
                let prefix = ns.substring(with: matches[c].range(at: 1))
                let number = Double(ns.substring(with: matches[c].range(at: 2)).replacingOccurrences(of: " ", with: ""))!
                if prefix == "!" { order[c] = 0 } else if prefix == "'" { order[c] = 1 } else if prefix == "\"" { order[c] = 2 }
                let v: Double
                switch order[c] {
                case 0: v = number
                case 1: v = last[c] + number
                default: v = last[c] + velocity[c] + number
                }
                velocity[c] = out.isEmpty ? 0 : v - last[c]
                last[c] = v
                values[c] = v
            }
            out.append((values[0], values[1]))
        }
        return out
    }
}

@Suite struct InkMLRealFixtureTests {
    @Test func everyFixtureIsListed() throws {
        let files = try RealInkML.files()
        #expect(files.count >= 10, "\(files)")
        #expect(Set(files) == Set(RealInkML.scales.keys), "\(files)")
    }

    @Test(arguments: RealInkML.scales.keys.sorted())
    func importsIntact(_ name: String) throws {
        let url = RealInkML.folder.appendingPathComponent(name)
        let data = try Data(contentsOf: url)
        let xml = String(decoding: data, as: UTF8.self)
        let doc = try InkMLReader.read(data)

        // Counts: one stroke per trace, one sample per point.
        let traces = RealInkML.traceTexts(xml)
        #expect(doc.strokes.count == traces.count, "\(name): \(doc.strokes.count) strokes for \(traces.count) traces")
        #expect(doc.strokes.map(\.samples.count) == traces.map(RealInkML.pointCount), "\(name)")

        // Geometry: the ink's extent as the source implies it.
        let points = traces.flatMap(RealInkML.xy)
        let xs = points.map(\.0), ys = points.map(\.1)
        let rawW = xs.max()! - xs.min()!, rawH = ys.max()! - ys.min()!
        let e = InkMLFixtures.extent(doc)
        switch RealInkML.scales[name]! {
        case .himetric, .points:
            let f = RealInkML.scales[name]! == .himetric ? 72 / 2540.0 : 1
            #expect(InkMLFixtures.close(e.width, rawW * f) || rawW * f < 1, "\(name): width \(e.width) pt, source \(rawW * f) pt")
            #expect(InkMLFixtures.close(e.height, rawH * f) || rawH * f < 1, "\(name): height \(e.height) pt, source \(rawH * f) pt")
            // The page holds the ink and is not much larger than the ink's far corner or Letter.
            let size = doc.page.canvasSize
            let farX = Double(doc.strokes.flatMap { $0.samples.map(\.x) }.max()!) / 10
            let farY = Double(doc.strokes.flatMap { $0.samples.map(\.y) }.max()!) / 10
            #expect(Double(size.width) / 10 <= max(612, 2 * farX + 72), "\(name): \(size)")
            #expect(Double(size.height) / 10 <= max(792, 2 * farY + 72), "\(name): \(size)")
        case .unitless:
            #expect(doc.warnings.contains { $0.contains("no units") }, "\(name): \(doc.warnings)")
            #expect(e.width <= 540 + 1 && e.height <= 720 + 1, "\(name): \(e)")
            #expect(max(e.width, e.height) >= 10, "\(name): \(e)")
            #expect(doc.page.canvasSize == .letter, "\(name): \(doc.page.canvasSize)")
            // The same shape: the aspect ratio of the source.
            if rawW > 0, rawH > 0, e.height > 0 {
                #expect(abs((e.width / e.height) / (rawW / rawH) - 1) < 0.05, "\(name): \(e) for \(rawW) x \(rawH)")
            }
        }
        // Nothing collapsed: distinct source points stay (nearly all) distinct samples.
        let distinctSource = Set(points.map { "\($0.0) \($0.1)" }).count
        let distinctSamples = Set(doc.strokes.flatMap { $0.samples.map { "\($0.x) \($0.y)" } }).count
        #expect(Double(distinctSamples) >= 0.9 * Double(distinctSource), "\(name): \(distinctSamples) of \(distinctSource)")
        #expect(try InkMLFixtures.renders(doc), "\(name)")
    }

    /// Each producer's particular: what its files say beyond X and Y.
    @Test func producerParticulars() throws {
        func read(_ n: String) throws -> InkMLDocument {
            try InkMLReader.read(try Data(contentsOf: RealInkML.folder.appendingPathComponent(n)))
        }
        // OneNote's highlighter (rectangle 0.07 x 0.5 cm, transparency 127, no rasterOp).
        let hl = try read("onenote/highlighter_onenote.inkml")
        #expect(hl.strokes.allSatisfy { $0.ink.tool == .highlighter })
        #expect(hl.strokes[0].ink.color.a == 128)
        #expect(hl.strokes[0].ink.width == Quantize.length(0.5 * 720 / 25.4))
        // MfrDB: T in ms, X and Y in points; times relative to each stroke's first sample.
        let mfr = try read("crohme/MfrDB1843-excerpt.inkml")
        #expect(mfr.strokes[0].samples.first!.time == 0)
        #expect(mfr.strokes[0].samples.last!.time == 1319170 - 1318096)
        #expect(mfr.strokes[0].samples[0].x == 1370 && mfr.strokes[0].samples[0].y == 1940)
        // OneNote web: F up to 32767, pressures within our range; blue.
        let web = try read("onenote/onenote_web.inkml")
        #expect(web.strokes.allSatisfy { $0.samples.allSatisfy { $0.pressure <= 1000 } })
        #expect(web.strokes[0].ink.color.b == 255 && web.strokes[0].ink.color.r == 0)
        #expect(web.strokes[0].samples[0].x == Quantize.position(1423 * 72 / 2540.0))
        // Journal: colours of its brushes and widths in cm.
        let journal = try read("journal/journal_output.inkml")
        #expect(journal.strokes[1].ink.color.r == 0xc3)
        #expect(journal.strokes[1].ink.width == Quantize.length(0.396875 * 720 / 25.4))
        // Office 2010 (PowerPoint's serializer): the "is" word, 6557...8099 himetric wide in
        // the recognizer's bounding box.
        let office = try read("office2010/InkMLjs-ink1.inkml")
        let w = InkMLFixtures.extent(Self.firstStrokes(office, 2)).width
        #expect(InkMLFixtures.close(w, (8099 - 6557) * 72 / 2540.0), "\(w)")
    }

    static func firstStrokes(_ doc: InkMLDocument, _ n: Int) -> InkMLDocument {
        InkMLDocument(pages: [PageContent(canvasSize: doc.page.canvasSize, elements: doc.strokes.prefix(n).map { .stroke($0) })], warnings: [])
    }
}

/// What real producers get wrong that loses nothing to accept: undeclared prefixes, points with
/// more values than the format declares.
@Suite struct InkMLProducerQuirksTests {
    @Test func undeclaredInkMLPrefixIsDeclared() throws {
        let doc = try InkMLReader.read(Data("<inkml:ink><inkml:trace>1 2, 3 4</inkml:trace></inkml:ink>".utf8))
        #expect(doc.strokes.count == 1 && doc.sampleCount == 2)
        #expect(doc.warnings.contains { $0.contains("inkml:") && $0.contains("without declaring") }, "\(doc.warnings)")
        // An undeclared vendor prefix (EMMA's, on elements and attributes) is foreign: skipped.
        let emma = try InkMLReader.read(Data("""
            <?xml version="1.0"?>
            <!-- a comment first -->
            <inkml:ink xmlns:inkml="http://www.w3.org/2003/InkML"><inkml:traceGroup><inkml:annotationXML>
            <emma:emma version="1.0"><emma:interpretation emma:medium="tactile"><emma:literal>Hi</emma:literal></emma:interpretation></emma:emma>
            </inkml:annotationXML><inkml:trace>1 2, 3 4, 5 6</inkml:trace></inkml:traceGroup></inkml:ink>
            """.utf8))
        #expect(emma.strokes.count == 1 && emma.sampleCount == 3)
        #expect(emma.warnings.contains { $0.contains("emma:") }, "\(emma.warnings)")
        // CROHME files rewritten for OneNote by a public script (an `inkml:` header pasted into
        // a default-namespace <ink>): read, its prefix declared.
        let pasted = try InkMLReader.read(Data("""
            <ink xmlns="http://www.w3.org/2003/InkML">
                <inkml:definitions><inkml:context xml:id="ctx0"><inkml:inkSource xml:id="inkSrc0"><inkml:traceFormat>
                <inkml:channel name="X" type="integer" max="3000" units="in"/><inkml:channel name="Y" type="integer" max="3000" units="in"/>
                <inkml:channel name="F" type="integer" max="3000" units="dev"/></inkml:traceFormat><inkml:channelProperties>
                <inkml:channelProperty channel="X" name="resolution" value="500" units="1/in"/>
                <inkml:channelProperty channel="Y" name="resolution" value="500" units="1/in"/>
                <inkml:channelProperty channel="F" name="resolution" value="0" units="1/dev"/></inkml:channelProperties></inkml:inkSource>
                <inkml:timestamp xml:id="ts0" timeString="2011-02-22T00:21:40.232"/></inkml:context>
                <inkml:brush xml:id="br0"><inkml:brushProperty name="width" value="0.006667" units="cm"/></inkml:brush></inkml:definitions>
            <annotation type="UI">2011_IVC_DEPT_F01_E01</annotation>
            <trace contextRef="#ctx0" brushRef="#br0" id="0">1000 500 10, 1500 1000 20</trace></ink>
            """.utf8))
        #expect(pasted.strokes.count == 1 && pasted.sampleCount == 2)
        #expect(pasted.warnings.contains { $0.contains("inkml:") }, "\(pasted.warnings)")
        // Still not well-formed: the error stands.
        #expect(throws: InkMLError.self) { try InkMLReader.read(Data("<inkml:ink><inkml:trace>1 2</inkml:ink>".utf8)) }
        do {
            _ = try InkMLReader.read(Data("<inkml:ink><inkml:trace>1 2</inkml:ink>".utf8))
        } catch {
            #expect(error.kind == .malformedXML)
        }
    }

    @Test func extraValuesAreDroppedNotTheTrace() throws {
        let doc = try InkMLReader.read(Data("""
            <ink xmlns="http://www.w3.org/2003/InkML"><trace id="0">1 2 100, 3 4 110</trace><trace id="1">5 6</trace></ink>
            """.utf8))
        #expect(doc.strokes.map(\.samples.count) == [2, 1])
        #expect(doc.warnings.contains { $0.contains("more values") && $0.contains("dropped") }, "\(doc.warnings)")
        #expect(!doc.warnings.contains { $0.contains("#extra") }, "\(doc.warnings)")
        // The shape is the one of X and Y alone.
        let plain = try InkMLReader.read(Data("<ink><trace>1 2, 3 4</trace><trace>5 6</trace></ink>".utf8))
        #expect(doc.strokes.map { $0.samples.map { [$0.x, $0.y] } } == plain.strokes.map { $0.samples.map { [$0.x, $0.y] } })
        // Far more values than channels is still refused, with the point named.
        do {
            _ = try InkMLReader.read(Data("<ink><trace>1 2 3 4 5 6 7 8 9 10 11</trace></ink>".utf8))
            Issue.record("read")
        } catch {
            #expect(error.kind == .invalidTrace)
            #expect(error.detail.contains("more values"), "\(error.detail)")
        }
    }
}
