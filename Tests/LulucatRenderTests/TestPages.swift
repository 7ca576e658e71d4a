// Small pages the rendering tests draw, and the reference-image helpers they compare with.

import Foundation
import LulucatInk
@testable import LulucatRender

enum TestPages {
    /// Points to a sample (0.1 pt units).
    static func sample(_ x: Double, _ y: Double, radius: Double, time: UInt32 = 0) -> Sample {
        Sample(x: Quantize.position(x), y: Quantize.position(y), radius: Quantize.length(radius),
               pressure: 500, time: time)
    }

    static let size = QuantizedSize(width: 1000, height: 600)  // 100 x 60 pt

    /// A straight black pen line, slightly slanted, radius 2 pt.
    static var straightStroke: PageContent {
        let samples = (0...40).map { i in sample(10 + 2 * Double(i), 20 + 0.5 * Double(i), radius: 2, time: UInt32(i * 4)) }
        return PageContent(canvasSize: size, elements: [.stroke(Stroke(ink: Ink(tool: .pen, color: .black), samples: samples))])
    }

    /// A blue wave whose radius grows from 0.3 pt to 4 pt and back, as pressure would.
    static var varyingCurve: PageContent {
        let n = 120
        let samples = (0...n).map { i -> Sample in
            let t = Double(i) / Double(n)
            let r = 0.3 + 3.7 * sin(.pi * t)
            return sample(8 + 84 * t, 30 + 18 * sin(2 * .pi * t * 1.5), radius: r, time: UInt32(i * 4))
        }
        let ink = Ink(tool: .pen, color: RGBA8(r: 20, g: 60, b: 200))
        return PageContent(canvasSize: size, elements: [.stroke(Stroke(ink: ink, samples: samples))])
    }

    /// Black ink, then (later in z-order) a wide yellow highlighter across it: the ink must stay black.
    static var highlighterOverInk: PageContent {
        let zigzag = (0...60).map { i -> Sample in
            let t = Double(i) / 60
            return sample(15 + 70 * t, 30 + 12 * (i % 20 < 10 ? Double(i % 10) / 10 : 1 - Double(i % 10) / 10) - 6, radius: 1.2)
        }
        let ink = Stroke(ink: Ink(tool: .pen, color: .black), samples: zigzag)
        let marker = (0...30).map { i in sample(10 + 80 * Double(i) / 30, 31, radius: 7) }
        let highlight = Stroke(ink: Ink(tool: .highlighter, color: RGBA8(r: 255, g: 220, b: 0, a: 200)), samples: marker)
        // A second highlighter crossing the first: overlapping highlighters darken like markers do.
        let cross = (0...20).map { i in sample(60, 12 + 36 * Double(i) / 20, radius: 5) }
        let pink = Stroke(ink: Ink(tool: .highlighter, color: RGBA8(r: 255, g: 120, b: 200, a: 160)), samples: cross)
        return PageContent(canvasSize: size, elements: [.stroke(ink), .stroke(highlight), .stroke(pink)])
    }

    static let photoID = UUID(uuidString: "00000000-0000-0000-0000-0000000000A1")!
    static let missingID = UUID(uuidString: "00000000-0000-0000-0000-0000000000B2")!

    /// A 40 x 30 pixel test picture: a gradient with a red border and a dark diagonal.
    static var photo: RGBAImage {
        var px = [UInt8](repeating: 255, count: 40 * 30 * 4)
        for y in 0..<30 {
            for x in 0..<40 {
                let i = (y * 40 + x) * 4
                let border = x == 0 || y == 0 || x == 39 || y == 29
                let diagonal = abs(x * 30 / 40 - y) <= 1
                px[i] = border ? 220 : diagonal ? 30 : UInt8(60 + x * 4)
                px[i + 1] = border ? 30 : diagonal ? 30 : UInt8(120 + y * 4)
                px[i + 2] = border ? 30 : diagonal ? 30 : 200
            }
        }
        return RGBAImage(width: 40, height: 30, pixels: px)
    }

    /// The photo rotated by 30 degrees with a stroke over it.
    static var rotatedImage: PageContent {
        let image = ImageElement(id: UUID(uuidString: "00000000-0000-0000-0000-0000000000C3")!, assetID: photoID,
                                 frame: QuantizedRect(x: 200, y: 120, width: 400, height: 300), rotation: 3000)
        let over = Stroke(ink: Ink(color: RGBA8(r: 200, g: 0, b: 0)), samples: [sample(5, 55, radius: 1), sample(95, 5, radius: 1)])
        return PageContent(canvasSize: size, elements: [.image(image), .stroke(over)])
    }

    static func assets(_ id: UUID) -> RGBAImage? { id == photoID ? photo : nil }
}

/// Reference images under `Tests/Fixtures/LulucatRender/`, found from this file's path. They live
/// outside the test target's folder so SwiftPM neither bundles them nor warns about unhandled files.
enum Fixtures {
    static var directory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures").appendingPathComponent("LulucatRender")
    }

    /// Set LULUCAT_WRITE_FIXTURES=1 to (re)write the references; then look at them before committing.
    static var writing: Bool { ProcessInfo.processInfo.environment["LULUCAT_WRITE_FIXTURES"] == "1" }

    static func reference(_ name: String, for image: RGBAImage) throws -> RGBAImage {
        let url = directory.appendingPathComponent(name + ".png")
        if writing { try image.pngData().write(to: url) }
        return try PNGDecoder.decode(Data(contentsOf: url))
    }

    /// Pixels whose channels differ from the reference by more than `tolerance`.
    static func differingPixels(_ a: RGBAImage, _ b: RGBAImage, tolerance: Int) -> Int {
        guard a.width == b.width, a.height == b.height else { return Int.max }
        var count = 0
        for i in stride(from: 0, to: a.pixels.count, by: 4) {
            for c in 0..<4 where abs(Int(a.pixels[i + c]) - Int(b.pixels[i + c])) > tolerance {
                count += 1
                break
            }
        }
        return count
    }
}
