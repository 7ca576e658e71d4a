// Hex helpers and a seeded random source for the crypto tests.

import Foundation
@testable import LulucatCrypto

func bytes(_ hexText: String) -> [UInt8] {
    let digits = Array(hexText.utf8).filter { $0 != 0x20 && $0 != 0x0A }
    precondition(digits.count % 2 == 0, "odd hex")
    func value(_ c: UInt8) -> UInt8 {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        case 0x41...0x46: return c - 0x41 + 10
        default: preconditionFailure("not hex")
        }
    }
    return stride(from: 0, to: digits.count, by: 2).map { value(digits[$0]) << 4 | value(digits[$0 + 1]) }
}

func hexString(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

/// A SplitMix64 for tamper positions and payloads (not for keys).
struct TestRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }
}

/// The fixed randomness of the exact-bytes tests: key 00...1f, salt a0...af, nonce c0...cb, in
/// the order RemoteKeys.create asks for them.
final class FixedRandom: @unchecked Sendable {
    var answers: [[UInt8]]
    init(_ answers: [[UInt8]]) { self.answers = answers }
    func callAsFunction(_ count: Int) throws -> [UInt8] {
        let next = answers.removeFirst()
        precondition(next.count == count, "asked for \(count) bytes, scripted \(next.count)")
        return next
    }
}

/// Iterations low enough for tests; the floor is passed explicitly where it matters.
let testIterations = 1000
