// Reads real handwriting in the neutral JSONL form of data/ink (one stroke a line) into strokes.

import Foundation
import LulucatInk

/// The JSONL ink format of `data/ink/`: one stroke a line,
/// `{"t0_ms": int|null, "points": [[x, y, t, p], ...]}` with x, y in points (y down), t in ms from
/// the stroke's first sample (null when the source has none) and p the pressure in 0...1 (null
/// when the source has none).
///
/// Quantization: x and y to 0.1 pt, p to thousandths, t to whole ms, each rounded to nearest. A
/// missing t or p becomes a constant channel of 0 (time unknown, no force reported); radius is
/// constant at half the ink's width, since these sources record no width.
public enum InkJSONL {
    /// A line of the file that is not a stroke.
    public struct ParseError: Error, CustomStringConvertible, Equatable {
        /// 1-based line number.
        public var line: Int
        public var reason: String
        public var description: String { "ink JSONL line \(line): \(reason)" }
    }

    private struct Line: Decodable {
        var points: [[Double?]]
    }

    /// The strokes of a JSONL file, in file order; blank lines are skipped.
    ///
    /// - Parameter ink: the ink given to every stroke (its width sets the constant radius).
    /// - Throws: `ParseError` naming the first line that is not a stroke.
    public static func strokes(from data: Data, ink: Ink = Ink()) throws(ParseError) -> [Stroke] {
        let decoder = JSONDecoder()
        var strokes: [Stroke] = []
        var lineNumber = 0
        let radius = ink.width / 2
        for lineBytes in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if lineBytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            let line: Line
            do {
                line = try decoder.decode(Line.self, from: Data(lineBytes))
            } catch {
                throw ParseError(line: lineNumber, reason: "not a stroke object with a points array (\(error))")
            }
            var samples: [Sample] = []
            samples.reserveCapacity(line.points.count)
            for (i, p) in line.points.enumerated() {
                guard p.count >= 2, let x = p[0], let y = p[1], x.isFinite, y.isFinite else {
                    throw ParseError(line: lineNumber, reason: "point \(i) lacks a finite x and y")
                }
                let t = p.count > 2 ? p[2] : nil
                let f = p.count > 3 ? p[3] : nil
                samples.append(Sample(x: Quantize.position(x), y: Quantize.position(y), radius: radius,
                                      pressure: f.map(Quantize.pressure) ?? 0,
                                      time: t.map(Quantize.milliseconds) ?? 0))
            }
            strokes.append(Stroke(id: deterministicID(line: lineNumber, data: data.count), ink: ink, samples: samples))
        }
        return strokes
    }

    /// A page holding the strokes of a JSONL file.
    public static func page(from data: Data, canvas: QuantizedSize = .letter, ink: Ink = Ink()) throws(ParseError) -> PageContent {
        PageContent(canvasSize: canvas, elements: try strokes(from: data, ink: ink).map(Element.stroke))
    }

    /// Stroke ids derived from the line, so parsing the same file twice gives equal pages.
    static func deterministicID(line: Int, data: Int) -> UUID {
        var bytes = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: UInt64(line).littleEndian) { for i in 0..<8 { bytes[i] = $0[i] } }
        withUnsafeBytes(of: UInt64(data).littleEndian) { for i in 0..<8 { bytes[8 + i] = $0[i] } }
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4 layout, so it reads as a well-formed UUID
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
