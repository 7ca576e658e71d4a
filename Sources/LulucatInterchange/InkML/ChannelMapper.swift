// Maps the channels of a trace format onto our samples: units, ranges, and the channels we drop.

import Foundation
import LulucatInk

/// Where X and Y land on the page: an affine map from the raw channel values to points,
/// `x' = a x + b y + c`, `y' = d x + e y + f`, with a flag when the channels have no length unit
/// (the values are then page units that the interpreter fits to the page afterwards).
struct PlaneMap: Sendable, Equatable {
    var a = 1.0, b = 0.0, c = 0.0, d = 0.0, e = 1.0, f = 0.0

    static let identity = PlaneMap()

    func apply(_ x: Double, _ y: Double) -> (Double, Double) { (a * x + b * y + c, d * x + e * y + f) }

    /// `other` after `self`.
    func then(_ o: PlaneMap) -> PlaneMap {
        PlaneMap(a: o.a * a + o.b * d, b: o.a * b + o.b * e, c: o.a * c + o.b * f + o.c,
                 d: o.d * a + o.e * d, e: o.d * b + o.e * e, f: o.d * c + o.e * f + o.f)
    }

    /// How much lengths grow (the square root of the determinant's magnitude), for widths.
    var lengthScale: Double { abs(a * e - b * d).squareRoot() }

    var isFinite: Bool { [a, b, c, d, e, f].allSatisfy(\.isFinite) }
}

/// A trace decoded into our units but not yet quantized: x, y (and the W diameter) in points,
/// or in raw units when the format's X and Y have no length unit.
struct RawStroke {
    var ink: Ink
    var x: [Double] = [], y: [Double] = [], diameter: [Double]? = nil
    /// The W diameters are in points (W had a length unit), not in the plane's units: the fit
    /// of unitless X and Y leaves them as they are.
    var diameterInPoints = false
    var time: [UInt32] = [], pressure: [UInt16] = []
    var azimuth: [UInt16]?, altitude: [UInt16]?
    /// The T value (in ms) of the first sample, when the trace has T: where `time` counts from.
    var startTime: Double?
    /// A continuation's start, in ms after the start of the stroke it continues (when known).
    var continuationOffset: Double?

    /// Points `range` of the trace (a view's from/to).
    func slice(_ r: ClosedRange<Int>) -> RawStroke {
        var o = RawStroke(ink: ink)
        o.x = Array(x[r]); o.y = Array(y[r]); o.diameter = diameter.map { Array($0[r]) }
        o.diameterInPoints = diameterInPoints
        let t0 = time[r.lowerBound]
        o.time = time[r].map { $0 >= t0 ? $0 - t0 : 0 }
        o.startTime = startTime.map { $0 + Double(t0) }
        o.pressure = Array(pressure[r])
        o.azimuth = azimuth.map { Array($0[r]) }
        o.altitude = altitude.map { Array($0[r]) }
        return o
    }

    /// Quantized, through `fit` (identity unless the coordinates are unitless).
    func stroke(fit: PlaneMap = .identity) -> Stroke {
        let baseRadius = UInt16((UInt32(ink.width) + 1) / 2)
        let widthScale = diameterInPoints ? 1 : fit.lengthScale
        var samples: [Sample] = []
        samples.reserveCapacity(x.count)
        for i in x.indices {
            let (px, py) = fit.apply(x[i], y[i])
            var radius = baseRadius
            if let d = diameter?[i], !d.isNaN { radius = Quantize.length(d * widthScale / 2) }
            samples.append(Sample(x: Quantize.position(px), y: Quantize.position(py), radius: radius,
                                  pressure: pressure[i], time: time[i]))
        }
        return Stroke(ink: ink, samples: samples, azimuth: azimuth, altitude: altitude)
    }
}

/// Turns decoded trace columns into a stroke, converting each channel we keep to our units
/// (0.1 pt, ms, thousandths, 0.001 rad) and noting each channel we cannot keep.
struct ChannelMapper {
    /// (key, message) pairs the interpreter reports once per key.
    private(set) var warnings: [(String, String)] = []

    private let ink: Ink
    private let x: Int, y: Int
    /// Raw X, Y to points (or to page units when `unitless`).
    let plane: PlaneMap
    /// X and Y have no length unit: the stroke is fitted to the page with the others like it.
    let unitless: Bool
    private var t: Int?, tScale = 1.0
    /// T has no units: milliseconds, unless a trace's first T is a time since 1970 in seconds
    /// (`secondsSince1970`).
    private var tWithoutUnits = false
    /// First T values read as seconds since 1970 when T has no units: 2000-01-01 to 2100-01-01.
    /// As milliseconds those would be 11 to 47 days, far longer than any stroke, and times
    /// since 1970 in milliseconds are a thousand times larger (IAMonDo's Anoto pen files write
    /// seconds).
    static let secondsSince1970: ClosedRange<Double> = 946_684_800...4_102_444_800
    /// Milliseconds between samples when there is no T channel but the ink source gives a rate.
    private let sampleInterval: Double?
    /// The trace's `duration` (ms), for times when there is no T channel and no sample rate.
    private let duration: Double?
    private var f: Int?, fScale = ChannelScale(factor: 1), fHasRange = false
    private var w: Int?, wScale = 1.0, wInPoints = false
    private var oa: Int?, oe: Int?, oaScale = 1.0, oeScale = 1.0
    private var otx: Int?, oty: Int?, otxScale = 1.0, otyScale = 1.0

    /// What the channels we drop are, for the warning.
    static let knownMeanings: [String: String] = [
        "Z": "height above the surface", "S": "tip switch", "OR": "pen rotation", "C": "colour",
        "CR": "red", "CG": "green", "CB": "blue", "CA": "alpha", "CC": "cyan", "CM": "magenta",
        "CY": "yellow", "CK": "black", "E": "eraser", "B1": "side button", "B2": "side button",
    ]

    /// Windows ink space: 0.01 mm a count, in points.
    static let himetric = 72 / 2540.0

    /// - Parameters:
    ///   - inkSpace: X and Y are Windows ink space (himetric) whatever the ink source says.
    ///   - transform: the context's canvas transform, applied to the raw X and Y first.
    ///   - sampleRate: samples per second of the ink source, for traces without T.
    ///   - canvasScale: points per unit of the canvas's X and Y: the trace values (after
    ///     `transform`) are canvas coordinates in those units.
    init(format: TraceFormat, ink: Ink, at node: XMLElementNode, inkSpace: Bool = false,
         transform: PlaneMap? = nil, canvasScale: (x: Double, y: Double)? = nil,
         sampleRate: Double? = nil, duration: Double? = nil) throws(InkMLError) {
        self.ink = ink
        guard let x = format.index(of: "X"), let y = format.index(of: "Y") else {
            throw InkMLError(.invalidTrace, line: node.line, column: node.column,
                             "the trace format (\(format.channels.map(\.name).joined(separator: " "))) has no X and Y channels")
        }
        self.x = x
        self.y = y
        var warnings: [(String, String)] = []
        let cx = format.channels[x], cy = format.channels[y]
        var sx: Double?, sy: Double?
        if let canvasScale {
            sx = canvasScale.x
            sy = canvasScale.y
        } else if inkSpace {
            sx = Self.himetric
            sy = Self.himetric
        } else {
            sx = cx.factor(to: InkMLUnits.pointsPer)
            sy = cy.factor(to: InkMLUnits.pointsPer)
        }
        // One axis with a length and the other without: the other is taken to be the same.
        if sx == nil, let sy, cx.units == nil { sx = sy }
        if sy == nil, let sx, cy.units == nil { sy = sx }
        var unitless = false
        if sx == nil || sy == nil {
            unitless = true
            for c in [cx, cy] where c.units != nil && c.factor(to: InkMLUnits.pointsPer) == nil {
                warnings.append(("units-\(c.name)-\(c.units!)", "channel \(c.name) has units \"\(c.units!)\" that are not a length we know; the ink is fitted to the page"))
            }
        }
        var plane = transform ?? .identity
        plane = plane.then(PlaneMap(a: (sx ?? 1) * (cx.negative ? -1 : 1), e: (sy ?? 1) * (cy.negative ? -1 : 1)))
        self.plane = plane
        self.unitless = unitless
        var dropped: [String] = []
        var hasT = false
        for (i, c) in format.channels.enumerated() where i != x && i != y {
            switch c.name {
            case "T":
                t = i
                hasT = true
                if let f = c.factor(to: InkMLUnits.millisecondsPer) { tScale = f } else if c.units == nil {
                    // Said with the first trace: its values decide between ms and seconds.
                    tWithoutUnits = true
                } else {
                    warnings.append(("units-T-\(c.units ?? "")", "channel T has units \"\(c.units ?? "")\"; its values are read as milliseconds"))
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
                if let f = c.factor(to: InkMLUnits.pointsPer) {
                    // W in a length keeps its size, whatever the fit of unitless X and Y does.
                    wScale = f
                    wInPoints = true
                } else {
                    wScale = plane.lengthScale
                }
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
                // Unnamed values past a format's channels are said once by the interpreter.
                if !c.name.hasPrefix("#") { dropped.append(c.name) }
            }
        }
        var evenlyOver: Double?
        if !hasT, let rate = sampleRate {
            sampleInterval = 1000 / rate
            warnings.append(("T-rate", "no T channel: sample times are derived from the ink source's sample rate (\(InkMLNumber.format(rate)) per second)"))
        } else if !hasT, let duration {
            sampleInterval = nil
            evenlyOver = duration
            warnings.append(("T-duration", "no T channel and no sample rate: sample times are spread evenly over each trace's duration"))
        } else {
            sampleInterval = nil
            if !hasT {
                warnings.append(("T-none", "no T channel and no sample rate: every sample's time is 0"))
            }
        }
        for name in dropped {
            let meaning = Self.knownMeanings[name].map { " (\($0))" } ?? ""
            warnings.append(("channel-\(name)", "channel \(name)\(meaning) has no place in our samples; its values are dropped"))
        }
        self.duration = evenlyOver
        self.warnings = warnings
    }

    /// The decoded trace (at least one point) in our units, before quantization of positions.
    mutating func raw(from parsed: TraceParser, at node: XMLElementNode) throws(InkMLError) -> RawStroke {
        let n = parsed.pointCount
        let columns = parsed.columns
        var out = RawStroke(ink: ink)
        out.x.reserveCapacity(n)
        out.y.reserveCapacity(n)
        out.time.reserveCapacity(n)
        out.pressure.reserveCapacity(n)
        if w != nil { out.diameter = []; out.diameterInPoints = wInPoints }
        var lastX = Double.nan, lastY = Double.nan, lastT = Double.nan, lastF = Double.nan, lastW = Double.nan
        var firstT = Double.nan
        let durationStep = duration.map { n > 1 ? $0 / Double(n - 1) : 0 }
        if let t, tWithoutUnits, let first = columns[t].first(where: { !$0.isNaN }) {
            if Self.secondsSince1970.contains(first) {
                tScale = 1000
                warnings.append(("units-T-seconds", "channel T has no units and its values (\(first) first) are times since 1970 in seconds; they are read as seconds"))
            } else {
                tScale = 1
                warnings.append(("units-T-", "channel T has no units; its values are read as milliseconds"))
            }
        }
        if oa != nil || otx != nil && oty != nil { out.azimuth = [] }
        if oe != nil || otx != nil && oty != nil { out.altitude = [] }
        for i in 0..<n {
            let rawX = columns[x][i], rawY = columns[y][i]
            if !rawX.isNaN { lastX = rawX }
            if !rawY.isNaN { lastY = rawY }
            guard !lastX.isNaN, !lastY.isNaN else {
                let name = node.id.map { "trace \"\($0)\"" } ?? "a trace"
                throw InkMLError(.invalidTrace, line: node.line, column: node.column, "\(name): point \(i + 1) has no X or Y value")
            }
            let (px, py) = plane.apply(lastX, lastY)
            out.x.append(px)
            out.y.append(py)
            var time: UInt32 = 0
            if let t, !columns[t][i].isNaN || !lastT.isNaN {
                if !columns[t][i].isNaN { lastT = columns[t][i] * tScale }
                if firstT.isNaN { firstT = lastT }
                time = Quantize.milliseconds(lastT - firstT)
            } else if let sampleInterval {
                time = Quantize.milliseconds(Double(i) * sampleInterval)
            } else if let durationStep {
                time = Quantize.milliseconds(Double(i) * durationStep)
            }
            out.time.append(time)
            var pressure: UInt16 = 1000
            if let f {
                if !columns[f][i].isNaN { lastF = fScale.apply(columns[f][i]) }
                if !fHasRange && lastF > 1 {
                    fHasRange = true // said once
                    warnings.append(("F-range", "channel F declares no range (max) and has values above 1; they are read as multiples of a nominal full press"))
                }
                if !lastF.isNaN { pressure = Quantize.pressure(lastF) }
            }
            out.pressure.append(pressure)
            if let w {
                if !columns[w][i].isNaN { lastW = columns[w][i] * wScale }
                out.diameter?.append(lastW)
            }
            if out.azimuth != nil || out.altitude != nil {
                let (az, alt) = angles(columns, i)
                out.azimuth?.append(az)
                out.altitude?.append(alt)
            }
        }
        if !firstT.isNaN { out.startTime = firstT }
        return out
    }

    /// The stroke for a decoded trace (at least one point), quantized as it stands.
    mutating func stroke(from parsed: TraceParser, at node: XMLElementNode) throws(InkMLError) -> Stroke {
        try raw(from: parsed, at: node).stroke()
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
