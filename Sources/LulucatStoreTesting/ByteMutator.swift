// Seeded byte mutations for the bounded fuzz tests: the same seed always gives the same inputs,
// so a failure seen once is seen again. libFuzzer mutates for itself under fuzz/run.sh.

import Foundation
import LulucatStore
import LulucatInk
import LulucatHandwriting

/// A reproducible stream of mutated copies of seed inputs: bit flips, byte replacements (with
/// values that matter to length and count fields), truncations, insertions, duplicated runs.
public struct ByteMutator {
    private var random: SeededRandom

    public init(seed: UInt64) { random = SeededRandom(seed: seed) }

    public mutating func next() -> UInt64 { random.next() }

    /// A number in 0..<bound (bound > 0).
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// Byte values that are boundaries for lengths, counts, varints and signs.
    public static let interesting: [UInt8] = [0, 1, 2, 0x7F, 0x80, 0xFF, 0xFE, 0x40, 0x10, 0x20, 0x3C, 0x3E, 0x2F, 0x2E]

    /// `seed` with one to three mutations applied. For text formats, `tokens` (names, attribute
    /// openings, special values) are inserted and ASCII digits changed to other digits, which
    /// keeps many mutated files well-formed, as libFuzzer's dictionaries do.
    public mutating func mutate(_ seed: [UInt8], tokens: [[UInt8]] = []) -> [UInt8] {
        var bytes = seed
        for _ in 0..<(1 + below(3)) {
            if !tokens.isEmpty && below(2) == 0 { mutateText(&bytes, tokens: tokens) } else { mutateOnce(&bytes) }
        }
        return bytes
    }

    private mutating func mutateText(_ bytes: inout [UInt8], tokens: [[UInt8]]) {
        let at = below(bytes.count + 1)
        if below(2) == 0 {
            bytes.insert(contentsOf: tokens[below(tokens.count)], at: at)
            return
        }
        // The first digit from `at` on becomes another digit, a sign or a point.
        let digits = Array("0123456789-.".utf8)
        if let i = bytes[at...].firstIndex(where: { $0 >= 0x30 && $0 <= 0x39 }) {
            bytes[i] = digits[below(digits.count)]
        }
    }

    private mutating func mutateOnce(_ bytes: inout [UInt8]) {
        guard !bytes.isEmpty else {
            bytes = [UInt8(truncatingIfNeeded: next())]
            return
        }
        let at = below(bytes.count)
        switch below(7) {
        case 0:
            bytes[at] ^= 1 << UInt8(below(8))
        case 1:
            bytes[at] = Self.interesting[below(Self.interesting.count)]
        case 2:
            bytes[at] = UInt8(truncatingIfNeeded: next())
        case 3:
            // A truncation anywhere: torn writes and short copies.
            bytes.removeSubrange(at...)
        case 4:
            let count = 1 + below(8)
            bytes.insert(contentsOf: (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }, at: at)
        case 5:
            // A run copied elsewhere: repeated records and fields.
            let length = min(1 + below(32), bytes.count - at)
            let run = Array(bytes[at..<at + length])
            bytes.insert(contentsOf: run, at: below(bytes.count + 1))
        default:
            // A 32-bit field set to a boundary value (lengths, offsets, sizes).
            let values: [UInt32] = [0, 1, 0x7FFF_FFFF, 0xFFFF_FFFF, 0x8000_0000, 0x0400_0000, 0x0400_0001, 0x10000]
            let v = values[below(values.count)]
            for i in 0..<min(4, bytes.count - at) { bytes[at + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt32(i))) }
        }
    }
}
