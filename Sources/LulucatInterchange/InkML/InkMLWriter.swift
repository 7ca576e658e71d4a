// Exports a page's strokes as W3C InkML that our reader (and others) reads back exactly.

import Foundation
import LulucatInk

/// Writes the strokes of a page as InkML 1.0.
///
/// Every value is explicit (no difference encoding) and written with exactly the precision our
/// samples have, so reading the file back gives the same quantized samples:
///
/// | channel | type | units | from |
/// |---|---|---|---|
/// | X, Y | decimal, one decimal place | pt | x, y (0.1 pt) |
/// | T | integer | ms | time from the stroke's first sample |
/// | F | decimal, three places, min 0 max 1 | | pressure (thousandths; may pass 1) |
/// | W | decimal, one place | pt | 2 × radius |
/// | OA, OE | decimal, three places | rad | azimuth, altitude, when the stroke has them |
///
/// One context per channel set in use (`ctx0` without angles, `ctx1` with them) and one brush
/// per distinct ink (`width` in pt, `color` `#RRGGBB`, `transparency` 255 - alpha, `rasterOp`
/// `maskPen` for highlighters, and `tool` with our tool name). Images and unknown elements have
/// no InkML form and are left out; opacity channels are not written.
///
/// ```swift
/// let xml = InkMLWriter.write(page)
/// ```
public enum InkMLWriter {
    /// A document's pages as one InkML file, and what InkML could not carry.
    public struct Export: Sendable {
        /// The InkML file, UTF-8 XML.
        public var data: Data
        /// One sentence per kind of content left out ("page 2: 3 images ..."), empty when
        /// everything was written.
        public var notWritten: [String]
    }

    /// Writes every page: the shared definitions once, then one top-level `<traceGroup>` per
    /// page holding `<annotation type="page">N</annotation>`, `<annotation type="canvas">W
    /// H</annotation>` (points) and the page's traces. `InkMLReader` reads such a file back as
    /// the same pages; other readers see every stroke, grouped by page.
    public static func write(pages: [PageContent]) -> Export {
        let all = pages.flatMap(\.strokes)
        var (out, index) = header(all)
        var notWritten: [String] = []
        for (n, page) in pages.enumerated() {
            out += "  <traceGroup xml:id=\"page\(n + 1)\">\n"
            out += "    <annotation type=\"page\">\(n + 1)</annotation>\n"
            out += "    <annotation type=\"canvas\">\(decimal(Int64(page.canvasSize.width), places: 1)) \(decimal(Int64(page.canvasSize.height), places: 1))</annotation>\n"
            traces(page.strokes, index, indent: "    ", into: &out)
            out += "  </traceGroup>\n"
            notWritten += omissions(page, number: n + 1)
        }
        out += "</ink>\n"
        return Export(data: Data(out.utf8), notWritten: notWritten)
    }

    /// What a page holds that InkML cannot carry, said per kind.
    static func omissions(_ page: PageContent, number: Int) -> [String] {
        var images = 0, unknown = 0, opacity = 0
        for e in page.elements {
            switch e {
            case .stroke(let s): if s.opacity != nil { opacity += 1 }
            case .image: images += 1
            default: unknown += 1
            }
        }
        var out: [String] = []
        if images > 0 { out.append("page \(number): \(images) image(s) not written (InkML has no images)") }
        if unknown > 0 { out.append("page \(number): \(unknown) element(s) of kinds InkML has no form for not written") }
        if opacity > 0 { out.append("page \(number): the opacity channel of \(opacity) stroke(s) not written") }
        return out
    }

    /// The strokes of one page as an InkML file (UTF-8 XML) without a page group: what other
    /// programs expect of a single drawing. Images, unknown elements and opacity channels are
    /// left out, silently; `write(pages:)` says what it left out.
    public static func write(_ page: PageContent) -> Data {
        var (out, index) = header(page.strokes)
        traces(page.strokes, index, indent: "  ", into: &out)
        out += "</ink>\n"
        return Data(out.utf8)
    }

    /// The XML declaration, the root and the definitions for `strokes`; the brush index of each ink.
    private static func header(_ strokes: [Stroke]) -> (String, [Ink: Int]) {
        var inks: [Ink] = []
        var inkIndex: [Ink: Int] = [:]
        for s in strokes where inkIndex[s.ink] == nil {
            inkIndex[s.ink] = inks.count
            inks.append(s.ink)
        }
        let withAngles = strokes.contains { hasAngles($0) }
        let plain = strokes.contains { !hasAngles($0) } || strokes.isEmpty

        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ink xmlns=\"http://www.w3.org/2003/InkML\">\n  <definitions>\n"
        if plain { out += context(id: "ctx0", angles: false) }
        if withAngles { out += context(id: "ctx1", angles: true) }
        for (i, ink) in inks.enumerated() { out += brush(id: "br\(i)", ink) }
        out += "  </definitions>\n"
        return (out, inkIndex)
    }

    private static func traces(_ strokes: [Stroke], _ inkIndex: [Ink: Int], indent: String, into out: inout String) {
        for s in strokes where !s.samples.isEmpty {
            let angles = hasAngles(s)
            out += "\(indent)<trace contextRef=\"#\(angles ? "ctx1" : "ctx0")\" brushRef=\"#br\(inkIndex[s.ink]!)\">"
            for (i, sample) in s.samples.enumerated() {
                if i > 0 { out += ", " }
                out += decimal(Int64(sample.x), places: 1)
                out += " "
                out += decimal(Int64(sample.y), places: 1)
                out += " \(sample.time) "
                out += decimal(Int64(sample.pressure), places: 3)
                out += " "
                out += decimal(Int64(sample.radius) * 2, places: 1)
                if angles {
                    out += " " + decimal(Int64(s.azimuth![i]), places: 3)
                    out += " " + decimal(Int64(s.altitude![i]), places: 3)
                }
            }
            out += "</trace>\n"
        }
    }

    private static func hasAngles(_ s: Stroke) -> Bool {
        s.azimuth?.count == s.samples.count && s.altitude?.count == s.samples.count
    }

    private static func context(id: String, angles: Bool) -> String {
        var s = "    <context xml:id=\"\(id)\">\n      <traceFormat>\n"
        s += "        <channel name=\"X\" type=\"decimal\" units=\"pt\"/>\n"
        s += "        <channel name=\"Y\" type=\"decimal\" units=\"pt\"/>\n"
        s += "        <channel name=\"T\" type=\"integer\" units=\"ms\"/>\n"
        s += "        <channel name=\"F\" type=\"decimal\" min=\"0\" max=\"1\"/>\n"
        s += "        <channel name=\"W\" type=\"decimal\" units=\"pt\"/>\n"
        if angles {
            s += "        <channel name=\"OA\" type=\"decimal\" units=\"rad\"/>\n"
            s += "        <channel name=\"OE\" type=\"decimal\" units=\"rad\"/>\n"
        }
        s += "      </traceFormat>\n    </context>\n"
        return s
    }

    private static func brush(id: String, _ ink: Ink) -> String {
        func hex2(_ v: UInt8) -> String { let h = String(v, radix: 16, uppercase: true); return h.count == 1 ? "0" + h : h }
        var s = "    <brush xml:id=\"\(id)\">\n"
        s += "      <brushProperty name=\"width\" value=\"\(decimal(Int64(ink.width), places: 1))\" units=\"pt\"/>\n"
        s += "      <brushProperty name=\"color\" value=\"#\(hex2(ink.color.r))\(hex2(ink.color.g))\(hex2(ink.color.b))\"/>\n"
        s += "      <brushProperty name=\"transparency\" value=\"\(255 - Int(ink.color.a))\"/>\n"
        if ink.tool == .highlighter { s += "      <brushProperty name=\"rasterOp\" value=\"maskPen\"/>\n" }
        s += "      <brushProperty name=\"tool\" value=\"\(ink.tool)\"/>\n"
        s += "    </brush>\n"
        return s
    }

    /// An integer count of 10^-places as a decimal string, exactly ("-12.3" for -123, 1).
    static func decimal(_ value: Int64, places: Int) -> String {
        var divisor: Int64 = 1
        for _ in 0..<places { divisor *= 10 }
        let magnitude = value.magnitude
        let whole = magnitude / UInt64(divisor), fraction = magnitude % UInt64(divisor)
        let sign = value < 0 ? "-" : ""
        if fraction == 0 { return sign + String(whole) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: places - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(sign)\(whole).\(digits)"
    }
}
