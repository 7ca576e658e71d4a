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

        let page = HandwritingGenerator(seed: 7).page(strokes: 2_000, canvas: .letter)
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
