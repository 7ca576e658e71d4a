// One pen sample, quantized to integers exactly as it is stored.

/// One sample of a pen stroke, in the quantized integer units the formats store.
///
/// The field order and widths are the `fixed16` layout (16 bytes, little-endian on disk), so an
/// array of samples can be copied to and from that layout in bulk on little-endian hosts.
public struct Sample: Hashable, Sendable {
    /// Horizontal position in 0.1 pt, x growing to the right.
    public var x: Int32
    /// Vertical position in 0.1 pt, y growing downwards.
    public var y: Int32
    /// Radius of the ink at this sample in 0.1 pt.
    public var radius: UInt16
    /// Pressure (force) in thousandths; 1,000 is a nominal full press and may be exceeded.
    public var pressure: UInt16
    /// Milliseconds from the stroke's first sample.
    public var time: UInt32

    /// A sample from values already in their quanta (0.1 pt, thousandths, milliseconds). The
    /// `Quantize` functions convert from points, forces and seconds.
    public init(x: Int32, y: Int32, radius: UInt16, pressure: UInt16, time: UInt32) {
        self.x = x
        self.y = y
        self.radius = radius
        self.pressure = pressure
        self.time = time
    }
}

/// Conversions between floating-point points and the quantized units, rounding to nearest.
public enum Quantize {
    /// Quantum of positions and radii: 0.1 pt.
    public static let pointsPerUnit: Double = 0.1

    /// Points to 0.1-pt units, rounded to nearest and clamped to the Int32 range.
    @inlinable public static func position(_ points: Double) -> Int32 {
        clampInt32((points * 10).rounded(.toNearestOrAwayFromZero))
    }
    /// 0.1-pt units back to points.
    @inlinable public static func points(_ units: Int32) -> Double { Double(units) / 10 }

    /// A radius (or width) in points to 0.1-pt units, rounded to nearest, clamped to 0...65535.
    @inlinable public static func length(_ points: Double) -> UInt16 {
        clampUInt16((points * 10).rounded(.toNearestOrAwayFromZero))
    }
    /// 0.1-pt units back to points.
    @inlinable public static func points(_ units: UInt16) -> Double { Double(units) / 10 }

    /// A pressure where 1.0 is full press to thousandths, rounded, clamped to 0...65535.
    @inlinable public static func pressure(_ value: Double) -> UInt16 {
        clampUInt16((value * 1000).rounded(.toNearestOrAwayFromZero))
    }
    /// Thousandths back to a pressure where 1.0 is full press.
    @inlinable public static func pressure(_ units: UInt16) -> Double { Double(units) / 1000 }

    /// Milliseconds (fractional) to whole milliseconds, rounded, clamped to 0...UInt32.max.
    @inlinable public static func milliseconds(_ ms: Double) -> UInt32 {
        let r = ms.rounded(.toNearestOrAwayFromZero)
        if !(r > 0) { return 0 }
        return r >= Double(UInt32.max) ? UInt32.max : UInt32(r)
    }

    @inlinable static func clampInt32(_ v: Double) -> Int32 {
        if v.isNaN { return 0 }
        if v <= Double(Int32.min) { return Int32.min }
        if v >= Double(Int32.max) { return Int32.max }
        return Int32(v)
    }
    @inlinable static func clampUInt16(_ v: Double) -> UInt16 {
        if !(v > 0) { return 0 }
        return v >= 65535 ? UInt16.max : UInt16(v)
    }
}
