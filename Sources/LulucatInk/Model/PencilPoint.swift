// PencilKit-shaped points in plain Swift, so the conversion an app makes to and from `PKStrokePoint`
// is tested here; the PencilKit bridge itself (PencilKitBridge.swift) only copies fields.

import Foundation

/// A point in points (a `CGPoint` without CoreGraphics).
public struct InkPoint: Hashable, Sendable {
    /// Horizontal position in points, growing to the right.
    public var x: Double
    /// Vertical position in points, growing downwards.
    public var y: Double
    /// A point at `x`, `y` (points).
    public init(x: Double, y: Double) { self.x = x; self.y = y }
}

/// A size in points (a `CGSize` without CoreGraphics).
public struct InkSize: Hashable, Sendable {
    /// The width in points.
    public var width: Double
    /// The height in points.
    public var height: Double
    /// A size of `width` by `height` points.
    public init(width: Double, height: Double) { self.width = width; self.height = height }
}

/// One point of a stroke as PencilKit describes it (`PKStrokePoint`'s fields and units).
public struct PencilPoint: Hashable, Sendable {
    /// Where, in points.
    public var location: InkPoint
    /// Seconds from the stroke's start.
    public var timeOffset: Double
    /// The size of the ink at this point, in points.
    public var size: InkSize
    /// 1 is opaque.
    public var opacity: Double
    /// 1 is a nominal full press.
    public var force: Double
    /// Radians, the pen's direction across the screen.
    public var azimuth: Double
    /// Radians, 0 flat on the screen, π/2 perpendicular.
    public var altitude: Double

    /// A point with PencilKit's defaults for what is not given: opaque, a nominal full press, the
    /// pen upright (azimuth 0, altitude π/2).
    public init(location: InkPoint, timeOffset: Double, size: InkSize, opacity: Double = 1,
                force: Double = 1, azimuth: Double = 0, altitude: Double = .pi / 2) {
        self.location = location
        self.timeOffset = timeOffset
        self.size = size
        self.opacity = opacity
        self.force = force
        self.azimuth = azimuth
        self.altitude = altitude
    }
}

extension Stroke {
    /// A stroke from PencilKit-shaped points, each value rounded to its quantum (position and
    /// radius 0.1 pt, force and opacity 0.001, angles 0.001 rad, time 1 ms). The stroke keeps the
    /// azimuth, altitude and opacity channels. The model has one radius per sample: half the
    /// point's width (`size.height` is not kept; PencilKit gives square sizes for its inks but the
    /// marker's, whose height converting back makes equal to its width).
    ///
    /// - Throws: `QuantizeError` when a value is NaN, infinite or out of its range (a negative
    ///   force, an altitude above π/2, a negative time offset, ...). Nothing is made then.
    public init(id: UUID = UUID(), ink: Ink = Ink(), pencilPoints points: [PencilPoint]) throws(QuantizeError) {
        var samples: [Sample] = [], azimuth: [UInt16] = [], altitude: [UInt16] = [], opacity: [UInt16] = []
        samples.reserveCapacity(points.count)
        for p in points {
            let (x, y) = try Quantize.point(x: p.location.x, y: p.location.y)
            guard p.size.height.isFinite, p.size.height >= 0 else {
                throw QuantizeError(what: "height", value: p.size.height, allowed: "finite and not negative")
            }
            samples.append(Sample(x: x, y: y, radius: try Quantize.radius(p.size.width / 2),
                                  pressure: try Quantize.force(p.force), time: try Quantize.timeOffset(p.timeOffset)))
            azimuth.append(try Quantize.azimuth(p.azimuth))
            altitude.append(try Quantize.altitude(p.altitude))
            opacity.append(try Quantize.opacity(p.opacity))
        }
        self.init(id: id, ink: ink, samples: samples, azimuth: azimuth, altitude: altitude, opacity: opacity)
    }

    /// The stroke's samples as PencilKit-shaped points: the size is the radius doubled (square), and
    /// a channel the stroke lacks reads as PencilKit's default (opacity 1, azimuth 0, altitude π/2).
    /// Converting these points back gives this stroke's samples exactly, and the whole stroke when
    /// it has all three channels.
    public var pencilPoints: [PencilPoint] {
        samples.indices.map { i in
            let s = samples[i]
            let d = Double(s.radius) / 5
            return PencilPoint(location: InkPoint(x: Quantize.points(s.x), y: Quantize.points(s.y)),
                               timeOffset: Double(s.time) / 1000,
                               size: InkSize(width: d, height: d),
                               opacity: opacity.map { Quantize.opacity($0[i]) } ?? 1,
                               force: Quantize.pressure(s.pressure),
                               azimuth: azimuth.map { Quantize.radians($0[i]) } ?? 0,
                               altitude: altitude.map { Quantize.radians($0[i]) } ?? .pi / 2)
        }
    }
}
