// TEMPORARY stand-in until the generator of the codec branch lands (same API): smooth looping
// strokes at 240 Hz laid out in words and lines.

import Foundation

public struct HandwritingGenerator: Sendable {
    var state: UInt64
    public init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

    mutating func next() -> Double {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Double(state >> 11) / Double(1 << 53)
    }

    public mutating func page(strokes count: Int, canvas: QuantizedSize = .letter) -> PageContent {
        var elements: [Element] = []
        elements.reserveCapacity(count)
        var x = 400.0, y = 600.0
        for _ in 0..<count {
            let n = 100 + Int(next() * 100)
            let s = stroke(at: x, y, samples: n)
            elements.append(.stroke(s))
            x += 120 + next() * 80
            if x > Double(canvas.width) - 400 { x = 400; y += 300; if y > Double(canvas.height) - 300 { y = 600 } }
        }
        return PageContent(canvasSize: canvas, elements: elements)
    }

    public mutating func stroke(at x0: Double, _ y0: Double, samples n: Int) -> Stroke {
        let f1 = 1 + next() * 2, f2 = 2 + next() * 3, amp = 40 + next() * 40
        var samples: [Sample] = []
        samples.reserveCapacity(n)
        for i in 0..<n {
            let t = Double(i) / Double(n)
            let x = x0 + t * 100 + amp * sin(2 * .pi * f1 * t)
            let y = y0 + amp * cos(2 * .pi * f2 * t)
            let p = 0.3 + 0.5 * sin(.pi * t)
            samples.append(Sample(x: Int32(x.rounded()), y: Int32(y.rounded()), radius: UInt16(8 + 6 * p),
                                  pressure: UInt16(p * 1000), time: UInt32((Double(i) * 1000 / 240).rounded())))
        }
        return Stroke(ink: Ink(), samples: samples)
    }
}
