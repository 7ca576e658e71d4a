// The InkML fuzz check, shared by `fuzz/run.sh inkml` and the bounded test in swift test: any
// bytes may fail to import, but never crash, and what imports survives our writer and reader.

import Foundation
import LulucatInterchange
import LulucatInk
import LulucatStore
import LulucatStoreTesting

/// Feeds bytes to `InkMLReader` and checks the round-trip contract of `InkMLWriter`
/// (docs/inkml.md): reading what we wrote gives, stroke for stroke, the same quantized samples,
/// the same inks, and the same azimuth and altitude where a stroke has both (a stroke with one
/// of them loses it: the writer writes angles in pairs); no warnings; the same canvas (it is
/// grown from the same ink). The page must also survive the page format, which is what
/// `lnote import` stores.
public enum InkMLFuzz {
    public static func problem(_ bytes: [UInt8]) -> String? {
        let doc: InkMLDocument
        do { doc = try InkMLReader.read(Data(bytes)) } catch {
            return error.description.isEmpty ? "an InkML error without a description" : nil
        }
        for s in doc.strokes {
            guard !s.samples.isEmpty else { return "an imported stroke has no samples" }
            guard s.channelsAreConsistent else { return "an imported stroke has a channel whose length differs from its samples" }
            guard s.samples.count <= PageFile.maxSamplesPerStroke else { return "an imported stroke has \(s.samples.count) samples" }
        }
        // Several pages (our page groups) are written as such; one page as a plain file.
        func write(_ d: InkMLDocument) -> Data {
            d.pages.count == 1 ? InkMLWriter.write(d.page) : InkMLWriter.write(pages: d.pages).data
        }
        let written = write(doc)
        let back: InkMLDocument
        do { back = try InkMLReader.read(written) } catch {
            return "what we wrote of an imported page does not read back: \(error)"
        }
        guard back.warnings.isEmpty else { return "reading what we wrote warns: \(back.warnings)" }
        guard back.strokes.count == doc.strokes.count else {
            return "\(doc.strokes.count) strokes written, \(back.strokes.count) read back"
        }
        for (i, (a, b)) in zip(doc.strokes, back.strokes).enumerated() {
            guard a.samples == b.samples else { return "stroke \(i): the samples differ after writing and reading" }
            guard a.ink == b.ink else { return "stroke \(i): ink \(a.ink) read back as \(b.ink)" }
            let pair = a.azimuth != nil && a.altitude != nil
            guard b.azimuth == (pair ? a.azimuth : nil), b.altitude == (pair ? a.altitude : nil) else {
                return "stroke \(i): the angle channels differ after writing and reading"
            }
        }
        guard back.pages.count == doc.pages.count else { return "\(doc.pages.count) pages written, \(back.pages.count) read back" }
        for (a, b) in zip(doc.pages, back.pages) {
            guard a.canvasSize == b.canvasSize else { return "canvas \(a.canvasSize) read back as \(b.canvasSize)" }
            guard a.strokes.count == b.strokes.count else { return "a page's \(a.strokes.count) strokes read back as \(b.strokes.count)" }
        }
        // Writing is a function of the pages: writing what we read back gives the same bytes.
        guard write(back) == written else { return "writing the page read back gives other bytes" }
        for page in doc.pages {
            let stored: [UInt8]
            do { stored = try PageFile.encode(page) } catch { return "the imported page does not encode: \(error)" }
            guard (try? PageFile.decode(stored)) == page else { return "the imported page does not survive the page format" }
        }
        return nil
    }

    // MARK: Seeds

    /// Files our writer made from sample pages, a file using most of what the reader understands,
    /// and the InkML files of `extraFolder` up to `maxBytes` (the shared real-handwriting set).
    public static func seeds(extraFolder: String? = nil, maxBytes: Int = 64 << 10) -> [(String, [UInt8])] {
        var out: [(String, [UInt8])] = []
        for (i, page) in [SampleContent.page(seed: 1, strokes: 3), SampleContent.page(seed: 4, strokes: 7),
                          PageContent()].enumerated() {
            out.append(("written-\(i).inkml", [UInt8](InkMLWriter.write(page))))
        }
        var extremes = Stroke(ink: Ink(tool: .highlighter, color: RGBA8(r: 255, g: 230, b: 0, a: 128), width: 123),
                              samples: [Sample(x: .min, y: .max, radius: .max, pressure: .max, time: 0),
                                        Sample(x: .max, y: .min, radius: 0, pressure: 0, time: .max)])
        extremes.azimuth = [0, 6283]
        extremes.altitude = [1571, 0]
        out.append(("extremes.inkml", [UInt8](InkMLWriter.write(PageContent(elements: [.stroke(extremes)])))))
        out.append(("features.inkml", Array(features.utf8)))
        out.append(("pages.inkml", [UInt8](InkMLWriter.write(pages: [SampleContent.page(seed: 2, strokes: 2), PageContent(canvasSize: .a4),
                                                                    SampleContent.page(seed: 3, strokes: 1)]).data)))
        if let extraFolder, let walk = FileManager.default.enumerator(atPath: extraFolder) {
            for case let relative as String in walk where relative.hasSuffix(".inkml") {
                guard let data = FileManager.default.contents(atPath: extraFolder + "/" + relative), data.count <= maxBytes else { continue }
                out.append(("shared-" + relative.replacingOccurrences(of: "/", with: "-"), [UInt8](data)))
            }
            out.sort { $0.0 < $1.0 }
        }
        return out
    }

    /// One file touching most of the reader: definitions, ink sources with channel properties,
    /// intermittent channels, units, brushes by reference, groups, views, continuations, pen-up
    /// traces, every value prefix, tilts and a foreign namespace.
    public static let features = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ink xmlns="http://www.w3.org/2003/InkML" xmlns:v="urn:vendor">
          <definitions>
            <inkSource xml:id="src">
              <traceFormat>
                <channel name="X" type="integer"/>
                <channel name="Y" type="integer" orientation="-ve"/>
                <channel name="F" type="integer" min="0" max="1023"/>
                <intermittentChannels><channel name="T" type="decimal" units="s" default="0"/></intermittentChannels>
              </traceFormat>
              <channelProperties>
                <channelProperty channel="X" name="resolution" value="1000" units="1/cm"/>
                <channelProperty channel="Y" name="resolution" value="1000" units="1/cm"/>
              </channelProperties>
            </inkSource>
            <brush xml:id="thin"><brushProperty name="width" value="0.5" units="mm"/><brushProperty name="color" value="#3366FF"/></brush>
            <brush xml:id="marker" brushRef="#thin"><brushProperty name="rasterOp" value="maskPen"/><brushProperty name="transparency" value="128"/></brush>
            <context xml:id="pen" inkSourceRef="#src" brushRef="#thin"/>
            <context xml:id="tilt">
              <traceFormat>
                <channel name="X" units="mm"/><channel name="Y" units="mm"/><channel name="W" units="mm"/>
                <channel name="OTx" units="deg"/><channel name="OTy" units="deg"/><channel name="Z"/>
              </traceFormat>
            </context>
            <context xml:id="angles" contextRef="#tilt">
              <traceFormat>
                <channel name="X" units="in"/><channel name="Y" units="px"/><channel name="F" units="%"/>
                <channel name="OA" units="rad"/><channel name="OE"/>
              </traceFormat>
            </context>
            <trace xml:id="defined" contextRef="#tilt">1 2 0.4 10 -5 3, 2 3 0.5 12 -4 3</trace>
          </definitions>
          <v:extension><v:data>ignored</v:data></v:extension>
          <traceFormat><channel name="X" units="cm"/><channel name="Y" units="cm"/></traceFormat>
          <trace>1.5 2, 3-4, .5.5, *?, #1A 2e1</trace>
          <traceGroup contextRef="#pen" brushRef="#marker">
            <trace xml:id="t1">1000 2000 512 0.25, '10 '-5 '1 '0.01, "1 "2 "0 "0.002, !1020 1995 T F</trace>
            <traceGroup><trace xml:id="t2" continuation="begin">5 5 100, 6 6 200 0.1</trace></traceGroup>
            <trace continuation="end" priorRef="#t2">7 7 300, 8 8 400</trace>
            <trace type="penUp">1 1 1, 2 2 2</trace>
          </traceGroup>
          <context contextRef="#angles"/>
          <trace>1 300 50 1.2 0.7, 1.1 301 60 1.3 0.8,</trace>
          <traceView traceDataRef="#defined"/>
          <traceView traceDataRef="#t1"/>
          <trace contextRef="#DefaultContext" brushRef="#DefaultBrush"><![CDATA[4 5, 6 7]]></trace>
        </ink>
        """
}
