// Checked quantizers for what an app hands in (CGFloat/CGPoint-shaped doubles, angles, opacity,
// force, time offsets): round to nearest, and refuse NaN, infinities and values the unit cannot hold
// instead of clamping them into a wrong stroke.

import Foundation

/// A value an app passed that the quantized model cannot hold: not a number, infinite, or out of range.
public struct QuantizeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was being quantized ("x", "azimuth", ...).
    public var what: String
    /// The value as it was passed (in points, radians, seconds, ... as the function took it).
    public var value: Double
    /// The range it must be in, as a person reads it.
    public var allowed: String

    /// An error saying that `value`, given for `what`, is not `allowed`.
    public init(what: String, value: Double, allowed: String) {
        self.what = what; self.value = value; self.allowed = allowed
    }

    public var description: String { "\(what) \(value) cannot be stored: it must be \(allowed)" }
}

extension Quantize {
    /// Quantum of angles of the pen (azimuth, altitude): 0.001 rad.
    public static let radiansPerUnit: Double = 0.001
    /// Quantum of rotations of images and selections: 0.01°.
    public static let degreesPerRotationUnit: Double = 0.01

    /// Rounds `value × perUnit`, refusing what is not finite or falls outside `range`.
    @inlinable static func checked(_ what: String, _ value: Double, times factor: Double,
                                   in range: ClosedRange<Double>) throws(QuantizeError) -> Double {
        let r = (value * factor).rounded(.toNearestOrAwayFromZero)
        guard value.isFinite, r >= range.lowerBound, r <= range.upperBound else {
            throw QuantizeError(what: what, value: value,
                                allowed: "finite and within \(range.lowerBound / factor)...\(range.upperBound / factor)")
        }
        return r
    }

    /// A coordinate in points (a `CGFloat`) to 0.1-pt units.
    /// - Throws: `QuantizeError` when it is NaN, infinite or beyond the Int32 range of units.
    @inlinable public static func coordinate(_ points: Double, _ what: String = "coordinate") throws(QuantizeError) -> Int32 {
        Int32(try checked(what, points, times: 10, in: Double(Int32.min)...Double(Int32.max)))
    }

    /// A point in points (a `CGPoint`) to 0.1-pt units.
    @inlinable public static func point(x: Double, y: Double) throws(QuantizeError) -> (x: Int32, y: Int32) {
        (try coordinate(x, "x"), try coordinate(y, "y"))
    }

    /// A size in points (a `CGSize`) to 0.1-pt units; negative sizes are refused.
    public static func size(width: Double, height: Double) throws(QuantizeError) -> QuantizedSize {
        QuantizedSize(width: Int32(try checked("width", width, times: 10, in: 0...Double(Int32.max))),
                      height: Int32(try checked("height", height, times: 10, in: 0...Double(Int32.max))))
    }

    /// A rectangle in points (a `CGRect`) to 0.1-pt units; negative sizes are refused.
    public static func rect(x: Double, y: Double, width: Double, height: Double) throws(QuantizeError) -> QuantizedRect {
        let p = try point(x: x, y: y), s = try size(width: width, height: height)
        return QuantizedRect(x: p.x, y: p.y, width: s.width, height: s.height)
    }

    /// A radius (or width) in points to 0.1-pt units, 0...6553.5 pt.
    public static func radius(_ points: Double) throws(QuantizeError) -> UInt16 {
        UInt16(try checked("radius", points, times: 10, in: 0...65535))
    }

    /// A force where 1.0 is a nominal full press to thousandths, 0...65.535.
    public static func force(_ value: Double) throws(QuantizeError) -> UInt16 {
        UInt16(try checked("force", value, times: 1000, in: 0...65535))
    }

    /// An opacity where 1.0 is opaque to thousandths, 0...65.535 (PencilKit may exceed 1).
    public static func opacity(_ value: Double) throws(QuantizeError) -> UInt16 {
        UInt16(try checked("opacity", value, times: 1000, in: 0...65535))
    }
    /// Thousandths back to an opacity where 1.0 is opaque.
    @inlinable public static func opacity(_ units: UInt16) -> Double { Double(units) / 1000 }

    /// An azimuth in radians, any turn, to 0.001 rad in 0...6283 (taken modulo 2π first).
    public static func azimuth(_ radians: Double) throws(QuantizeError) -> UInt16 {
        guard radians.isFinite else { throw QuantizeError(what: "azimuth", value: radians, allowed: "finite") }
        var turn = radians.truncatingRemainder(dividingBy: 2 * .pi)
        if turn < 0 { turn += 2 * .pi }
        // 2π − ε rounds to 6283 (6.283 rad), never to a full turn.
        return UInt16(min(6283, (turn * 1000).rounded(.toNearestOrAwayFromZero)))
    }

    /// An altitude in radians, 0 (flat) ... π/2 (perpendicular), to 0.001 rad in 0...1571.
    public static func altitude(_ radians: Double) throws(QuantizeError) -> UInt16 {
        UInt16(try checked("altitude", radians, times: 1000, in: 0...1571))
    }

    /// 0.001-rad units back to radians.
    @inlinable public static func radians(_ units: UInt16) -> Double { Double(units) / 1000 }

    /// A rotation in degrees, clockwise on screen, to 0.01° in 0..<36000 (taken modulo 360° first).
    public static func rotation(degrees: Double) throws(QuantizeError) -> Int32 {
        guard degrees.isFinite else { throw QuantizeError(what: "rotation", value: degrees, allowed: "finite") }
        let units = (degrees.truncatingRemainder(dividingBy: 360) * 100).rounded(.toNearestOrAwayFromZero)
        let r = Int32(units) % 36000
        return r < 0 ? r + 36000 : r
    }

    /// A rotation in radians, clockwise on screen, to 0.01° in 0..<36000.
    public static func rotation(radians: Double) throws(QuantizeError) -> Int32 {
        try rotation(degrees: radians * 180 / .pi)
    }

    /// 0.01° units back to degrees.
    @inlinable public static func degrees(_ units: Int32) -> Double { Double(units) / 100 }

    /// A time offset in seconds (a `TimeInterval`) to whole milliseconds, 0...UInt32.max ms.
    public static func timeOffset(_ seconds: Double) throws(QuantizeError) -> UInt32 {
        UInt32(try checked("time offset", seconds, times: 1000, in: 0...Double(UInt32.max)))
    }
}
