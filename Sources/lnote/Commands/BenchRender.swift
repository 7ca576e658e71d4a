// `lnote bench render`: thumbnail time and full-page raster throughput on a 2,000-stroke page.

import Foundation
import LulucatInk
import LulucatRender

/// Renders a synthetic 2,000-stroke letter page as a library thumbnail and at 2x, and prints the
/// medians. The `bench` dispatcher calls `run(arguments:)` with the arguments after `render`.
struct RenderBench {
    static let usage = "lnote bench render [--runs N] [--json]"

    static func run(arguments: [String]) async throws {
        let args = try Arguments(arguments, valued: ["runs"], flags: ["json"])
        guard args.positionals.isEmpty else { throw UsageError("bench render takes no positional arguments") }
        let runs = try args.int("runs") ?? 15
        guard runs >= 1 else { throw UsageError("--runs must be at least 1") }

        let page = SyntheticHandwriting.page(strokes: 2_000, samplesPerStroke: 150, seed: 7)
        let noAssets: (UUID) throws -> RGBAImage? = { _ in nil }

        // One untimed pass of each warms caches and the allocator.
        _ = try Thumbnail.make(page, width: Thumbnail.defaultWidth, assets: noAssets)
        var size = (width: 0, height: 0)
        let thumbnail = try median(runs) { _ = try Thumbnail.make(page, width: Thumbnail.defaultWidth, assets: noAssets) }
        let thumbnailJPEG = try median(runs) { _ = try Thumbnail.jpeg(page, width: Thumbnail.defaultWidth, assets: noAssets) }
        let jpegBytes = try Thumbnail.jpeg(page, width: Thumbnail.defaultWidth, assets: noAssets).data.count
        let full = try median(runs) {
            let image = try PageRenderer.render(page, scale: 2, assets: noAssets).image
            size = (image.width, image.height)
        }
        let megapixels = Double(size.width * size.height) / 1_000_000
        let mpixPerSecond = megapixels / (full / 1000)

        if args.flag("json") {
            let fields: [(String, String)] = [
                ("strokes", "\(page.strokes.count)"), ("samples", "\(page.sampleCount)"), ("runs", "\(runs)"),
                ("thumbnail_width", "\(Thumbnail.defaultWidth)"),
                ("thumbnail_ms", fmt(thumbnail)), ("thumbnail_jpeg_ms", fmt(thumbnailJPEG)),
                ("thumbnail_jpeg_bytes", "\(jpegBytes)"),
                ("render_2x_ms", fmt(full)), ("render_2x_width", "\(size.width)"), ("render_2x_height", "\(size.height)"),
                ("render_mpix_per_s", fmt(mpixPerSecond)),
            ]
            print("{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        } else {
            print("render bench: \(page.strokes.count) strokes, \(page.sampleCount) samples (synthetic letter page), median of \(runs) runs")
            print("  thumbnail, \(Thumbnail.defaultWidth) px wide        \(fmt(thumbnail)) ms")
            print("  thumbnail + JPEG (quality 80)   \(fmt(thumbnailJPEG)) ms, \(jpegBytes) bytes")
            print("  full page at 2x (\(size.width) x \(size.height))  \(fmt(full)) ms = \(fmt(mpixPerSecond)) Mpx/s")
        }
    }

    /// Median wall time of `runs` calls of `body`, in milliseconds.
    private static func median(_ runs: Int, _ body: () throws -> Void) rethrows -> Double {
        var times: [Double] = []
        for _ in 0..<runs {
            let start = DispatchTime.now().uptimeNanoseconds
            try body()
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000)
        }
        times.sort()
        return times.count % 2 == 1 ? times[times.count / 2] : (times[times.count / 2 - 1] + times[times.count / 2]) / 2
    }

    private static func fmt(_ v: Double) -> String { String(format: "%.2f", v) }
}

// MARK: - Stand-in page generator
// STAND-IN: replace with LulucatInk's `HandwritingGenerator` once that branch is merged. It writes
// lines of smooth, pressure-varying strokes sampled at 240 Hz, like a handwritten letter page.

enum SyntheticHandwriting {
    /// SplitMix64: a small deterministic generator, so every run draws the same page.
    struct Random {
        var state: UInt64
        mutating func next() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
        }
        mutating func next(_ range: ClosedRange<Double>) -> Double { range.lowerBound + next() * (range.upperBound - range.lowerBound) }
    }

    static func page(strokes count: Int, samplesPerStroke: Int, seed: UInt64) -> PageContent {
        var random = Random(state: seed)
        let size = QuantizedSize.letter
        let margin = 40.0, lineHeight = 24.0
        let lineWidth = Double(size.width) / 10 - 2 * margin
        let lines = Int((Double(size.height) / 10 - 2 * margin) / lineHeight)
        let perLine = max(1, (count + lines - 1) / lines)
        let step = lineWidth / Double(perLine)
        var elements: [Element] = []
        elements.reserveCapacity(count)
        for index in 0..<count {
            let line = index / perLine, column = index % perLine
            var x = margin + Double(column) * step + random.next(0...2)
            var y = margin + Double(line) * lineHeight + lineHeight * 0.7 + random.next(-2...2)
            // The pen's direction turns smoothly (a sum of two slow sines); its speed and
            // pressure swell and fade over the stroke.
            var heading = random.next(0...(2 * .pi))
            let turn1 = random.next(-0.3...0.3), turn2 = random.next(-0.06...0.06)
            let phase = random.next(0...(2 * .pi))
            let baseRadius = random.next(0.4...0.7)
            var samples: [Sample] = []
            samples.reserveCapacity(samplesPerStroke)
            for i in 0..<samplesPerStroke {
                let t = Double(i) / Double(samplesPerStroke - 1)
                let pressure = 0.35 + 0.65 * sin(.pi * min(1, t * 1.3))
                samples.append(Sample(x: Quantize.position(x), y: Quantize.position(y),
                                      radius: Quantize.length(baseRadius * (0.5 + pressure)),
                                      pressure: Quantize.pressure(pressure),
                                      time: Quantize.milliseconds(Double(i) * 1000 / 240)))
                let speed = 0.08 + 0.14 * sin(.pi * t)  // points per sample: 20-50 pt/s
                heading += turn1 * sin(6 * t + phase) + turn2
                x += speed * cos(heading)
                y += speed * sin(heading) * 0.7
            }
            let ink = Ink(tool: index % 97 == 0 ? .highlighter : .pen,
                          color: index % 97 == 0 ? RGBA8(r: 255, g: 230, b: 0, a: 180) : RGBA8(r: 20, g: 20, b: 60))
            elements.append(.stroke(Stroke(ink: ink, samples: samples)))
        }
        return PageContent(canvasSize: size, elements: elements)
    }
}
