// Deterministic page content for crash checks, fuzz seeds and corruption tests: the same seed
// always gives the same strokes, so traces and expected pages are reproducible.

import Foundation
import LulucatStore
import LulucatInk

/// Builds small, realistic, reproducible pages.
public enum SampleContent {
    /// A UUID derived from two numbers, so fixtures name the same files on every run.
    public static func uuid(_ a: UInt32, _ b: UInt32 = 0) -> UUID {
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<4 { bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * i)) }
        for i in 0..<4 { bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * i)) }
        bytes[6] = 0x40 | (bytes[6] & 0x0F)  // version 4
        bytes[8] = 0x80 | (bytes[8] & 0x3F)  // RFC 4122 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// A smooth stroke of `samples` points, as a pen at 240 Hz would give it.
    public static func stroke(seed: UInt32, samples: Int = 24, channels: Bool = false) -> Stroke {
        var pts: [Sample] = []
        pts.reserveCapacity(samples)
        let x0 = Int32(seed % 500) * 10, y0 = Int32(seed % 700) * 10
        for i in 0..<samples {
            let t = Int32(i)
            pts.append(Sample(x: x0 + t * 12 + Int32(seed % 7), y: y0 + (t * t) % 97,
                              radius: UInt16(10 + (i + Int(seed)) % 5), pressure: UInt16(400 + (i * 13) % 300),
                              time: UInt32(i * 4)))
        }
        let ink = Ink(tool: Tool(rawValue: UInt8(seed % 4)), color: RGBA8(r: UInt8(seed % 256), g: 40, b: 90), width: 20)
        var s = Stroke(id: uuid(0xA000_0000 | seed, seed), ink: ink, samples: pts)
        if channels {
            s.azimuth = (0..<samples).map { UInt16(($0 * 37) % 6283) }
            s.altitude = (0..<samples).map { UInt16(1000 + ($0 * 11) % 500) }
        }
        return s
    }

    /// A page with `strokes` strokes (seeded by `seed`) and one image per asset id in `images`.
    public static func page(seed: UInt32, strokes: Int, images: [UUID] = []) -> PageContent {
        var elements: [Element] = []
        for i in 0..<strokes {
            elements.append(.stroke(stroke(seed: seed &* 100 &+ UInt32(i), samples: 8 + i % 20, channels: i % 3 == 0)))
        }
        for (i, asset) in images.enumerated() {
            elements.append(.image(ImageElement(id: uuid(0xB000_0000 | seed, UInt32(i)), assetID: asset,
                                                frame: QuantizedRect(x: 100, y: 200 + Int32(i) * 50, width: 400, height: 300))))
        }
        return PageContent(canvasSize: .letter, elements: elements)
    }

    /// The bytes of a small image asset (the store keeps asset bytes opaque).
    public static func assetBytes(seed: UInt32, count: Int = 300) -> [UInt8] {
        // A JPEG start marker, then reproducible filler.
        var b: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
        var x = seed &* 2_654_435_761 &+ 1
        while b.count < count {
            x ^= x << 13; x ^= x >> 17; x ^= x << 5
            b.append(UInt8(truncatingIfNeeded: x))
        }
        return b
    }
}
