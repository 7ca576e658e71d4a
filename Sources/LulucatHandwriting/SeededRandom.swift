// A small seeded random number generator, so generated handwriting is the same on every machine.

import Foundation
import LulucatInk

/// SplitMix64: fast, seedable and identical on every platform (the standard library's generator
/// is neither seedable nor stable across releases).
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in 0..<1.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }
    /// Uniform in `range`.
    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * unit()
    }
    /// Normal with mean `mean` and standard deviation `sd` (Box-Muller).
    public mutating func normal(_ mean: Double = 0, _ sd: Double = 1) -> Double {
        let u1 = max(unit(), 0x1p-53)
        let u2 = unit()
        return mean + sd * (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
    /// Uniform in `range`.
    public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
}
