// Maps the channels of a trace format onto our samples: units, ranges, and the channels we drop.

import Foundation
import LulucatInk

/// Turns decoded trace columns into a stroke, converting each channel we keep to our units
/// (0.1 pt, ms, thousandths, 0.001 rad) and noting each channel we cannot keep.
struct ChannelMapper {
    /// (key, message) pairs the interpreter reports once per key.
    private(set) var warnings: [(String, String)] = []

    private let ink: Ink
    private let x: Int, y: Int
    private let xScale: Double, yScale: Double
    private var t: Int?, tScale = 1.0
    private var f: Int?, fScale = ChannelScale(factor: 1), fHasRange = false
    private var w: Int?, wScale = 1.0
    private var oa: Int?, oe: Int?, oaScale = 1.0, oeScale = 1.0
    private var otx: Int?, oty: Int?, otxScale = 1.0, otyScale = 1.0

    /// What the channels we drop are, for the warning.
    static let knownMeanings: [String: String] = [
        "Z": "height above the surface", "S": "tip switch", "OR": "pen rotation", "C": "colour",
        "CR": "red", "CG": "green", "CB": "blue", "CA": "alpha", "CC": "cyan", "CM": "magenta",
        "CY": "yellow", "CK": "black", "E": "eraser", "B1": "side button", "B2": "side button",
    ]

    init(format: TraceFormat, ink: Ink, at node: XMLElementNode) throws(InkMLError) {
        self.ink = ink
        guard let x = format.index(of: "X"), let y = format.index(of: "Y") else {
            throw InkMLError(.invalidTrace, line: node.line, column: node.column,
                             "the trace format (\(format.channels.map(\.name).joined(separator: " "))) has no X and Y channels")
        }
        self.x = x
        self.y = y
        var warnings: [(String, String)] = []
        func length(_ i: Int) -> Double {
            let c = format.channels[i]
            if let f = c.factor(to: InkMLUnits.pointsPer) { return c.negative ? -f : f }
            let what = c.units.map { "units \"\($0)\" that are not a length we know" } ?? "no units"
            warnings.append(("units-\(c.name)-\(c.units ?? "")", "channel \(c.name) has \(what); its values are read as points"))
            return c.negative ? -1 : 1
        }
        xScale = length(x)
        yScale = length(y)
        var dropped: [String] = []
        for (i, c) in format.channels.enumerated() where i != x && i != y {
            switch c.name {
            case "T":
                t = i
                if let f = c.factor(to: InkMLUnits.millisecondsPer) { tScale = f } else {
                    warnings.append(("units-T-\(c.units ?? "")", "channel T has \(c.units.map { "units \"\($0)\"" } ?? "no units"); its values are read as milliseconds"))
                }
            case "F":
                f = i
                fHasRange = true
                if let lo = c.min, let hi = c.max, hi > lo {
                    fScale = ChannelScale(factor: 1 / (hi - lo), offset: lo)
                } else if let hi = c.max, hi > 0 {
                    fScale = ChannelScale(factor: 1 / hi)
                } else if c.units == "%" {
                    fScale = ChannelScale(factor: 0.01)
                } else {
                    fHasRange = false
                }
            case "W":
                w = i
                wScale = c.factor(to: InkMLUnits.pointsPer) ?? abs(xScale)
            case "OA", "OE", "OTx", "OTy":
                let scale: Double
                if let f = c.factor(to: InkMLUnits.radiansPer) { scale = f } else {
                    scale = Double.pi / 180
                    warnings.append(("units-\(c.name)-\(c.units ?? "")", "channel \(c.name) has \(c.units.map { "units \"\($0)\"" } ?? "no units"); its values are read as degrees"))
                }
                switch c.name {
                case "OA": oa = i; oaScale = scale
                case "OE": oe = i; oeScale = scale
                case "OTx": otx = i; otxScale = scale
                default: oty = i; otyScale = scale
                }
            default:
                dropped.append(c.name)
            }
        }
        for name in dropped {
            let meaning = Self.knownMeanings[name].map { " (\($0))" } ?? ""
            warnings.append(("channel-\(name)", "channel \(name)\(meaning) has no place in our samples; its values are dropped"))
        }
        self.warnings = warnings
    }

    /// The stroke for a decoded trace (at least one point).
    mutating func stroke(from parsed: TraceParser, at node: XMLElementNode) throws(InkMLError) -> Stroke {
        let n = parsed.pointCount
        let columns = parsed.columns
        var samples: [Sample] = []
        samples.reserveCapacity(n)
        let baseRadius = UInt16((UInt32(ink.width) + 1) / 2)
        var lastX = Double.nan, lastY = Double.nan, lastT = Double.nan, lastF = Double.nan, lastW = Double.nan
        var firstT = Double.nan
        var azimuth: [UInt16]? = (oa != nil || otx != nil && oty != nil) ? [] : nil
        var altitude: [UInt16]? = (oe != nil || otx != nil && oty != nil) ? [] : nil
        for i in 0..<n {
            let rawX = columns[x][i], rawY = columns[y][i]
            if !rawX.isNaN { lastX = rawX * xScale }
            if !rawY.isNaN { lastY = rawY * yScale }
            guard !lastX.isNaN, !lastY.isNaN else {
                let name = node.id.map { "trace \"\($0)\"" } ?? "a trace"
                throw InkMLError(.invalidTrace, line: node.line, column: node.column, "\(name): point \(i + 1) has no X or Y value")
            }
            var time: UInt32 = 0
            if let t, !columns[t][i].isNaN || !lastT.isNaN {
                if !columns[t][i].isNaN { lastT = columns[t][i] * tScale }
                if firstT.isNaN { firstT = lastT }
                time = Quantize.milliseconds(lastT - firstT)
            }
            var pressure: UInt16 = 1000
            if let f {
                if !columns[f][i].isNaN { lastF = fScale.apply(columns[f][i]) }
                if !fHasRange && lastF > 1 {
                    fHasRange = true // said once
                    warnings.append(("F-range", "channel F declares no range (max) and has values above 1; they are read as multiples of a nominal full press"))
                }
                if !lastF.isNaN { pressure = Quantize.pressure(lastF) }
            }
            var radius = baseRadius
            if let w {
                if !columns[w][i].isNaN { lastW = columns[w][i] * wScale }
                if !lastW.isNaN { radius = Quantize.length(lastW / 2) }
            }
            samples.append(Sample(x: Quantize.position(lastX), y: Quantize.position(lastY),
                                  radius: radius, pressure: pressure, time: time))
            if azimuth != nil || altitude != nil {
                let (az, alt) = angles(columns, i)
                azimuth?.append(az)
                altitude?.append(alt)
            }
        }
        return Stroke(ink: ink, samples: samples, azimuth: azimuth, altitude: altitude)
    }

    /// Azimuth and altitude in 0.001 rad, from OA/OE or else from the tilts OTx/OTy.
    private func angles(_ columns: [[Double]], _ i: Int) -> (UInt16, UInt16) {
        var az = Double.nan, alt = Double.nan
        if let oa { az = columns[oa][i] * oaScale }
        if let oe { alt = columns[oe][i] * oeScale }
        if let otx, let oty, az.isNaN || alt.isNaN {
            // The pen points along (tan tx, tan ty, 1): its azimuth in the surface plane and its
            // angle above that plane.
            let tx = tan(columns[otx][i] * otxScale), ty = tan(columns[oty][i] * otyScale)
            if az.isNaN { az = atan2(ty, tx) }
            if alt.isNaN { alt = atan2(1, (tx * tx + ty * ty).squareRoot()) }
        }
        func milli(_ v: Double, _ limit: Double) -> UInt16 {
            guard v.isFinite else { return 0 }
            return UInt16(min(max((v * 1000).rounded(), 0), limit))
        }
        var a = az.truncatingRemainder(dividingBy: 2 * .pi)
        if a < 0 { a += 2 * .pi }
        return (milli(a, 6283), milli(alt, 1571))
    }
}
