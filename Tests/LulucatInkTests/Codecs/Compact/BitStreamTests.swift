// The compact codec's bit I/O: fields and Exp-Golomb codes read back exactly, at every length
// and alignment, and reading past the end is noticed.

import Testing
@testable import LulucatInk
import LulucatHandwriting

@Suite struct BitStreamTests {
    @Test func fieldsAndExpGolombRoundTripAtEveryLength() {
        var rng = SeededRandom(seed: 17)
        for length in 0..<70 {
            var w = BitWriter(capacity: 16)
            var fields: [(value: UInt32, bits: Int, golomb: Bool)] = []
            for _ in 0..<length {
                if rng.int(0...3) == 0 {
                    let v = UInt32(truncatingIfNeeded: rng.next() >> UInt64(rng.int(0...63)))
                    let k = rng.int(0...12)
                    w.writeExpGolomb(v, order: k)
                    fields.append((v, k, true))
                } else {
                    let n = rng.int(1...32)
                    let v = UInt32(truncatingIfNeeded: rng.next()) & UInt32(truncatingIfNeeded: (UInt64(1) << UInt64(n)) - 1)
                    w.write(UInt64(v), bits: n)
                    fields.append((v, n, false))
                }
            }
            let bitCount = w.bitCount
            let bytes = w.finish()
            #expect(bytes.count == (bitCount + 7) / 8)
            bytes.withUnsafeBytes { raw in
                var r = BitReader(raw)
                for f in fields {
                    if f.golomb {
                        #expect(r.readExpGolomb(order: f.bits) == f.value)
                    } else {
                        #expect(r.read(bits: f.bits) == f.value)
                    }
                }
                #expect(r.position == bitCount)
                #expect(!r.isOverrun)
                // Past the end everything reads as zero, and the overrun is noticed.
                _ = r.read(bits: 32)
                _ = r.read(bits: 32)
                #expect(r.read(bits: 8) == 0)
                #expect(r.isOverrun)
            }
        }
    }

    @Test func anExpGolombCodeTooLongForThirtyTwoBitsIsRefused() {
        let zeros = [UInt8](repeating: 0, count: 5) + [0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        zeros.withUnsafeBytes { raw in
            var r = BitReader(raw)
            #expect(r.readExpGolomb(order: 0) == nil)
        }
        var w = BitWriter(capacity: 8)
        w.writeExpGolomb(.max, order: 0)
        w.writeExpGolomb(.max, order: 12)
        let bytes = w.finish()
        bytes.withUnsafeBytes { raw in
            var r = BitReader(raw)
            #expect(r.readExpGolomb(order: 0) == .max)
            #expect(r.readExpGolomb(order: 12) == .max)
        }
    }
}
