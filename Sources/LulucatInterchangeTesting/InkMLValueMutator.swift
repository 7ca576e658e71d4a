// Value mutations for the InkML fuzz check: numbers, units, brush and channel properties and the
// encoding of the whole file, where byte mutations rarely reach (issue 18 §1).

import Foundation
import LulucatInk
import LulucatHandwriting

/// Rewrites what an InkML file says rather than how it is built: a number becomes NaN, infinity,
/// a huge or tiny value or garbage; an attribute value changes; a brush or channel property with
/// such a value is added; the file is re-encoded (UTF-16 or UTF-32, with or without a byte order
/// mark, or with another declared encoding). The same seed always gives the same file.
public struct InkMLValueMutator {
    private var random: SeededRandom

    public init(seed: UInt64) { random = SeededRandom(seed: seed) }

    /// A reproducible variant of any input: seeded by the input's bytes (libFuzzer's target).
    public static func variant(of bytes: [UInt8]) -> [UInt8] {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in bytes.prefix(4096) { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
        var m = InkMLValueMutator(seed: h ^ UInt64(bytes.count))
        return m.mutate(bytes)
    }

    mutating func below(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
    mutating func pick<T>(_ a: [T]) -> T { a[below(a.count)] }

    static let numbers = ["NaN", "nan", "-nan", "inf", "-inf", "infinity", "1e308", "-1e308", "1e400", "-1e400",
                          "1e-320", "0", "-0", "0.0001", "4294967296", "-2147483649", "99999999999999999999",
                          "65536", "256", "-1", "255.5", "0x1p3", "#FFFFFFFFFFFFFFFF", ".", "-", "1e", "", " 3 "]
    static let units = ["", "pt", "cm", "mm", "in", "m", "px", "himetric", "1/cm", "1/in", "1/mm", "1/s", "s", "ms",
                        "deg", "rad", "%", "dev", "bogus", "1/"]
    static let brushNames = ["width", "height", "transparency", "color", "tip", "rasterOp", "antiAliased",
                             "fitToCurve", "ignorePressure", "tool"]
    static let channelNames = ["X", "Y", "T", "F", "W", "OA", "OE", "OTx", "OTy", "Z", "S"]

    mutating func value() -> String {
        below(4) == 0 ? pick(["#FF0000", "#ZZ", "rectangle", "ellipse", "maskPen", "copyPen", "true", "pen"]) : pick(Self.numbers)
    }

    public mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
        var text = String(decoding: bytes, as: UTF8.self)
        for _ in 0..<(1 + below(3)) {
            switch below(6) {
            case 0: replaceNumber(&text)
            case 1: replaceAttribute(&text)
            case 2: addBrushProperty(&text)
            case 3: addChannelProperty(&text)
            case 4: addChannelAttribute(&text)
            default: addSourceProperty(&text)
            }
        }
        return below(4) == 0 ? encode(text) : Array(text.utf8)
    }

    /// The n-th run of number characters, replaced.
    mutating func replaceNumber(_ text: inout String) {
        var u = Array(text.utf8)
        let isNum: (UInt8) -> Bool = { ($0 >= 48 && $0 <= 57) || $0 == 46 }
        var runs: [Range<Int>] = []
        var i = 0
        while i < u.count {
            if isNum(u[i]) {
                let s = i
                while i < u.count, isNum(u[i]) || u[i] == UInt8(ascii: "e") { i += 1 }
                runs.append(s..<i)
            } else { i += 1 }
        }
        guard !runs.isEmpty else { return }
        let r = pick(runs)
        u.replaceSubrange(r, with: Array(pick(Self.numbers).utf8))
        text = String(decoding: u, as: UTF8.self)
    }

    mutating func replaceAttribute(_ text: inout String) {
        let name = pick(["value=\"", "min=\"", "max=\"", "default=\"", "units=\"", "type=\"", "channel=\""])
        var ranges: [Range<String.Index>] = []
        var from = text.startIndex
        while let r = text.range(of: name, range: from..<text.endIndex) {
            ranges.append(r)
            from = r.upperBound
        }
        guard !ranges.isEmpty else { return }
        let r = pick(ranges)
        guard let close = text[r.upperBound...].firstIndex(of: "\"") else { return }
        let replacement: String
        switch name {
        case "units=\"": replacement = pick(Self.units)
        case "type=\"": replacement = pick(["integer", "decimal", "double", "boolean"])
        case "channel=\"": replacement = pick(Self.channelNames)
        default: replacement = value()
        }
        text.replaceSubrange(r.upperBound..<close, with: replacement)
    }

    /// A brush with one hostile property, used by the first trace.
    mutating func addBrushProperty(_ text: inout String) {
        let p = "<brushProperty name=\"\(pick(Self.brushNames))\" value=\"\(value())\" units=\"\(pick(Self.units))\"/>"
        insertAfterRoot(&text, "<definitions><brush xml:id=\"vm\">\(p)<brushProperty name=\"\(pick(Self.brushNames))\" value=\"\(value())\"/></brush></definitions>")
        if let r = text.range(of: "<trace") , !text[r.upperBound...].hasPrefix("Format"), !text[r.upperBound...].hasPrefix("Group"), !text[r.upperBound...].hasPrefix("View") {
            text.insert(contentsOf: " brushRef=\"#vm\"", at: r.upperBound)
        }
    }

    /// A context in the ink stream whose ink source gives a channel a hostile resolution.
    mutating func addChannelProperty(_ text: inout String) {
        let p = "<channelProperty channel=\"\(pick(Self.channelNames))\" name=\"\(pick(["resolution", "resolution", "accuracy"]))\" value=\"\(pick(Self.numbers))\" units=\"\(pick(Self.units))\"/>"
        insertAfterRoot(&text, "<context><inkSource><channelProperties>\(p)</channelProperties></inkSource></context>")
    }

    mutating func addChannelAttribute(_ text: inout String) {
        guard let r = text.range(of: "<channel ") else { return }
        let a = pick(["type=\"double\" ", "type=\"integer\" ", "orientation=\"-ve\" ", "min=\"\(pick(Self.numbers))\" ",
                      "max=\"\(pick(Self.numbers))\" ", "units=\"\(pick(Self.units))\" "])
        text.insert(contentsOf: a, at: r.upperBound)
    }

    /// An ink source with a sample rate, a canvas transform or a channel-to-canvas mapping.
    mutating func addSourceProperty(_ text: inout String) {
        let n = pick(Self.numbers), m = pick(Self.numbers)
        let s = pick([
            "<context><inkSource><sampleRate value=\"\(n)\" uniform=\"true\"/></inkSource></context>",
            "<context><canvasTransform><mapping type=\"affine\"><affine>\(n) 0 0, 0 \(m) 0</affine></mapping></canvasTransform></context>",
            "<context><inkSource><traceFormat><channel name=\"X\" type=\"integer\" units=\"\(pick(Self.units))\"/><channel name=\"Y\" type=\"integer\"/></traceFormat><activeArea size=\"A4\" height=\"\(n)\" width=\"\(m)\" units=\"mm\"/></inkSource><canvasTransform><mapping type=\"affine\"><affine>\(n) 0 \(m), 0 \(n) 0</affine></mapping></canvasTransform></context>",
            "<context><inkSource><traceFormat><channel name=\"X\" type=\"decimal\"/><channel name=\"Y\" type=\"decimal\"/></traceFormat></inkSource><canvasTransform><mapping type=\"matrix\"><matrix>\(n) 0 0, 0 \(m) 0, 0 0 1</matrix></mapping></canvasTransform></context>",
        ])
        insertAfterRoot(&text, s)
    }

    func insertAfterRoot(_ text: inout String, _ s: String) {
        guard let r = text.range(of: "<ink"), let end = text[r.upperBound...].firstIndex(of: ">") else { return }
        if end > text.startIndex, text[text.index(before: end)] == "/" { return }
        text.insert(contentsOf: s, at: text.index(after: end))
    }

    /// The file in another encoding, with or without its byte order mark, or with another
    /// declaration.
    mutating func encode(_ text: String) -> [UInt8] {
        switch below(9) {
        case 0: return Array(text.data(using: .utf16LittleEndian) ?? Data())
        case 1: return Array(text.data(using: .utf16BigEndian) ?? Data())
        case 2: return [0xFF, 0xFE] + Array(text.data(using: .utf16LittleEndian) ?? Data())
        case 3: return [0xFE, 0xFF] + Array(text.data(using: .utf16BigEndian) ?? Data())
        case 4: return Array(text.data(using: .utf32LittleEndian) ?? Data())
        case 5: return [0, 0, 0xFE, 0xFF] + Array(text.data(using: .utf32BigEndian) ?? Data())
        case 6: return [0xEF, 0xBB, 0xBF] + Array(text.utf8)
        default:
            var body = Substring(text)
            if body.hasPrefix("<?xml"), let end = body.range(of: "?>") { body = body[end.upperBound...] }
            let enc = pick(["UTF-16", "UCS-4", "ISO-8859-1", "US-ASCII", "IBM037", "UTF-8", "latin1", "EUC-JP"])
            return Array("<?xml version=\"1.0\" encoding=\"\(enc)\"?>\(body)".utf8)
        }
    }
}
