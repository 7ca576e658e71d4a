// The quantized model: conversions round to nearest (error at most half a quantum) and the
// Sample layout is the fixed16 record.

import Foundation
import Testing
@testable import LulucatInk
import LulucatHandwriting

@Suite struct ModelTests {
    @Test func sampleIsTheFixed16Record() {
        #expect(MemoryLayout<Sample>.size == 16)
        #expect(MemoryLayout<Sample>.stride == 16)
        #expect(MemoryLayout<Sample>.offset(of: \Sample.x) == 0)
        #expect(MemoryLayout<Sample>.offset(of: \Sample.y) == 4)
        #expect(MemoryLayout<Sample>.offset(of: \Sample.radius) == 8)
        #expect(MemoryLayout<Sample>.offset(of: \Sample.pressure) == 10)
        #expect(MemoryLayout<Sample>.offset(of: \Sample.time) == 12)
        #expect(Fixed16Codec.memoryIsRecord)
    }

    @Test func fixed16RecordsAreLittleEndianInFieldOrder() {
        var w = ByteWriter()
        Fixed16Codec.writeRecords([Sample(x: -2, y: 0x0102_0304, radius: 0x0506, pressure: 0x0708, time: 0x090A_0B0C)], into: &w)
        #expect(w.bytes == [0xFE, 0xFF, 0xFF, 0xFF, 0x04, 0x03, 0x02, 0x01, 0x06, 0x05, 0x08, 0x07, 0x0C, 0x0B, 0x0A, 0x09])
    }

    @Test func quantizationErrorIsAtMostHalfAQuantum() {
        var rng = SeededRandom(seed: 42)
        for _ in 0..<20_000 {
            let points = rng.uniform(-100_000...100_000)
            #expect(abs(Quantize.points(Quantize.position(points)) - points) <= 0.05 + 1e-9)
            let length = rng.uniform(0...6000)
            #expect(abs(Quantize.points(Quantize.length(length)) - length) <= 0.05 + 1e-9)
            let pressure = rng.uniform(0...60)
            #expect(abs(Quantize.pressure(Quantize.pressure(pressure)) - pressure) <= 0.0005 + 1e-12)
            let ms = rng.uniform(0...4e9)
            #expect(abs(Double(Quantize.milliseconds(ms)) - ms) <= 0.5)
        }
        // Ties round away from zero, and out-of-range values clamp.
        #expect(Quantize.position(0.05) == 1)
        #expect(Quantize.position(-0.05) == -1)
        #expect(Quantize.position(1e300) == .max)
        #expect(Quantize.position(-1e300) == .min)
        #expect(Quantize.position(.nan) == 0)
        #expect(Quantize.length(-3) == 0)
        #expect(Quantize.pressure(70) == .max)
        #expect(Quantize.milliseconds(-1) == 0)
        #expect(Quantize.milliseconds(1e12) == .max)
    }
}
