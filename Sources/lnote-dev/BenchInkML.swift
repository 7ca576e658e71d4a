// `lnote-dev bench inkml`: InkML import throughput (samples per second), beside the cost of only
// parsing the same XML (the floor: what libxml2 and Foundation's XMLParser take by themselves).

import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import LulucatInk
import LulucatInterchange
import LulucatHandwriting

/// Imports three InkML files of different producer styles, `runs` times each, and prints the
/// median samples per second of `InkMLReader.read` and the ratio of its time to a bare XMLParser
/// pass over the same bytes (elements and text delivered, nothing kept). Release builds only.
struct InkMLBench {
    static let usage = "lnote-dev bench inkml [--runs N] [--strokes N] [--json]"

    static func run(arguments: [String]) async throws {
        let args = try Arguments(arguments, valued: ["runs", "strokes"], flags: ["json"])
        guard args.positionals.isEmpty else { throw UsageError("bench inkml takes no positional arguments") }
        let runs = try args.int("runs") ?? 9
        let strokes = try args.int("strokes") ?? 2_000
        guard runs >= 1, (1...100_000).contains(strokes) else { throw UsageError("--runs must be at least 1, --strokes 1...100000") }

        let page = HandwritingGenerator(seed: 14).page(strokes: strokes, canvas: .letter)
        let files: [(String, Data)] = [
            ("ours (explicit values, X Y T F W)", InkMLWriter.write(page)),
            ("Windows ink (integer himetric, first and second differences)", windowsInk(page)),
            ("unitless decimals (CROHME style, fitted)", unitless(page)),
        ]
        var rows: [(name: String, bytes: Int, samples: Int, importMS: Double, parseMS: Double)] = []
        for (name, data) in files {
            let samples = try InkMLReader.read(data).sampleCount // untimed warm-up and count
            _ = xmlOnly(data)
            var tImport: [Double] = [], tParse: [Double] = []
            for _ in 0..<runs {
                tImport.append(try measure { _ = try InkMLReader.read(data) } * 1000)
                tParse.append(measure { _ = xmlOnly(data) } * 1000)
            }
            rows.append((name, data.count, samples, median(tImport), median(tParse)))
        }
        if args.flag("json") {
            let items = rows.map { row in
                "{\"file\": \"\(row.name)\", \"bytes\": \(row.bytes), \"samples\": \(row.samples), \"import_ms\": \(f(row.importMS)), "
                    + "\"xml_only_ms\": \(f(row.parseMS)), \"samples_per_s\": \(Int(Double(row.samples) / (row.importMS / 1000))), "
                    + "\"import_vs_xml_only\": \(String(format: "%.3f", row.importMS / row.parseMS))}"
            }
            print("{\"runs\": \(runs), \"strokes\": \(strokes), \"files\": [" + items.joined(separator: ", ") + "]}")
        } else {
            print("inkml bench: \(strokes) strokes of generated handwriting, median of \(runs) runs")
            for row in rows {
                print("  \(row.name)")
                print("    \(row.bytes) bytes, \(row.samples) samples: import \(f(row.importMS)) ms = \(Int(Double(row.samples) / (row.importMS / 1000))) samples/s;"
                      + " XML only \(f(row.parseMS)) ms; import / XML only \(String(format: "%.2f", row.importMS / row.parseMS))")
            }
        }
    }

    /// The page as Office writes ink: integer himetric X, Y and a force channel, with first then
    /// second differences, from an ink source in Microsoft's namespace.
    static func windowsInk(_ page: PageContent) -> Data {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <inkml:ink xmlns:inkml="http://www.w3.org/2003/InkML"><inkml:definitions><inkml:context xml:id="ctx0">
            <inkml:inkSource xml:id="s"><inkml:traceFormat><inkml:channel name="X" type="integer" max="32767" units="in"/>
            <inkml:channel name="Y" type="integer" max="32767" units="in"/><inkml:channel name="F" type="integer" max="32767" units="dev"/>
            </inkml:traceFormat><inkml:channelProperties>
            <inkml:channelProperty channel="X" name="resolution" value="3971.75757" units="1/in"/>
            <inkml:channelProperty channel="Y" name="resolution" value="5295.24854" units="1/in"/>
            </inkml:channelProperties></inkml:inkSource></inkml:context>
            <inkml:brush xml:id="br0"><inkml:brushProperty name="width" value="0.04667" units="cm"/></inkml:brush>
            </inkml:definitions>
            <msink:context xmlns:msink="http://schemas.microsoft.com/ink/2010/main"/>

            """
        for s in page.strokes {
            out += "<inkml:trace contextRef=\"#ctx0\" brushRef=\"#br0\">"
            var px = 0, py = 0, vx = 0, vy = 0
            for (i, sample) in s.samples.enumerated() {
                let x = Int(Double(sample.x) / 10 * 2540 / 72), y = Int(Double(sample.y) / 10 * 2540 / 72)
                let f = Int(sample.pressure) * 16
                if i > 0 { out += "," }
                switch i {
                case 0: out += "\(x) \(y) \(f)"
                case 1: out += "'\(x - px)'\(y - py)'0"
                default: out += "\"\(x - px - vx)\"\(y - py - vy)\"0"
                }
                if i > 0 { vx = x - px; vy = y - py }
                px = x; py = y
            }
            out += "</inkml:trace>\n"
        }
        return Data((out + "</inkml:ink>\n").utf8)
    }

    /// The page as unitless decimals of about one unit (the style of some CROHME labs).
    static func unitless(_ page: PageContent) -> Data {
        var out = "<ink xmlns=\"http://www.w3.org/2003/InkML\"><traceFormat><channel name=\"X\" type=\"decimal\"/><channel name=\"Y\" type=\"decimal\"/></traceFormat>\n"
        for s in page.strokes {
            out += "<trace>" + s.samples.map { String(format: "%.5f %.5f", Double($0.x) / 61_200, Double($0.y) / 61_200) }.joined(separator: ", ") + "</trace>\n"
        }
        return Data((out + "</ink>\n").utf8)
    }

    /// The floor: XMLParser over the bytes with a delegate that only receives the events.
    static func xmlOnly(_ data: Data) -> Bool {
        final class Counter: NSObject, XMLParserDelegate {
            var elements = 0, characters = 0
            func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                        qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) { elements += 1 }
            func parser(_ parser: XMLParser, foundCharacters string: String) { characters += string.utf8.count }
        }
        let parser = XMLParser(stream: InputStream(data: data))
        parser.shouldProcessNamespaces = true
        let counter = Counter()
        parser.delegate = counter
        return parser.parse() && counter.elements > 0
    }

    private static func f(_ v: Double) -> String { String(format: "%.2f", v) }
}
