// `lnote-dev bench render`: thumbnail time and full-page raster throughput on a 2,000-stroke page.

import Foundation
import LulucatInk
import LulucatRender
import LulucatStore
import LulucatHandwriting

/// Renders a synthetic 2,000-stroke letter page as a library thumbnail and at 2x, and prints the
/// medians. The `bench` dispatcher calls `run(arguments:)` with the arguments after `render`.
struct RenderBench {
    static let usage = "lnote-dev bench render [--runs N] [--json]"

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
        let thumbnail = try timed(runs) { _ = try Thumbnail.make(page, width: Thumbnail.defaultWidth, assets: noAssets) }
        let thumbnailJPEG = try timed(runs) { _ = try Thumbnail.jpeg(page, width: Thumbnail.defaultWidth, assets: noAssets) }
        let jpegBytes = try Thumbnail.jpeg(page, width: Thumbnail.defaultWidth, assets: noAssets).data.count
        let full = try timed(runs) {
            let image = try PageRenderer.render(page, scale: 2, assets: noAssets).image
            size = (image.width, image.height)
        }
        let megapixels = Double(size.width * size.height) / 1_000_000
        let mpixPerSecond = megapixels / (full / 1000)
        let (withThumbs, withoutThumbs) = try await saveLatency(page, runs: runs)
        let saveRatio = withThumbs / withoutThumbs

        if args.flag("json") {
            let fields: [(String, String)] = [
                ("strokes", "\(page.strokes.count)"), ("samples", "\(page.sampleCount)"), ("runs", "\(runs)"),
                ("thumbnail_width", "\(Thumbnail.defaultWidth)"),
                ("thumbnail_ms", fmt(thumbnail)), ("thumbnail_jpeg_ms", fmt(thumbnailJPEG)),
                ("thumbnail_jpeg_bytes", "\(jpegBytes)"),
                ("render_2x_ms", fmt(full)), ("render_2x_width", "\(size.width)"), ("render_2x_height", "\(size.height)"),
                ("render_mpix_per_s", fmt(mpixPerSecond)),
                ("save_with_thumbnails_ms", fmt(withThumbs)), ("save_without_thumbnails_ms", fmt(withoutThumbs)),
                ("save_with_thumbnails_vs_without", String(format: "%.3f", saveRatio)),
            ]
            print("{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        } else {
            print("render bench: \(page.strokes.count) strokes, \(page.sampleCount) samples (synthetic letter page), median of \(runs) runs")
            print("  thumbnail, \(Thumbnail.defaultWidth) px wide        \(fmt(thumbnail)) ms")
            print("  thumbnail + JPEG (quality 80)   \(fmt(thumbnailJPEG)) ms, \(jpegBytes) bytes")
            print("  full page at 2x (\(size.width) x \(size.height))  \(fmt(full)) ms = \(fmt(mpixPerSecond)) Mpx/s")
            print("  page save, thumbnails on      \(fmt(withThumbs)) ms; off \(fmt(withoutThumbs)) ms")
            print("  save_with_thumbnails_vs_without  \(String(format: "%.3f", saveRatio))   (target <= 1.05)")
        }
    }

    /// Median durable save of one new stroke on the page, in a document with thumbnails on and
    /// one with them off, side by side. The thumbnail is rendered in the background after each
    /// save; it is let finish (untimed) before the next save, as it is between autosaves 0.5 s apart.
    static func saveLatency(_ page: PageContent, runs: Int) async throws -> (on: Double, off: Double) {
        let root = NSTemporaryDirectory() + "lnote-bench-render-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let library = Library(root: root)
        func open(_ thumbnails: ThumbnailOptions?) async throws -> (DocumentSession, UUID) {
            let package = try await library.createDocument(title: thumbnails == nil ? "off" : "on")
            let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: thumbnails))
            let id = await session.pageIDs()[0]
            try await session.append(page.elements, to: id)
            try await session.save()
            await session.waitForThumbnails()
            return (session, id)
        }
        let (on, onPage) = try await open(ThumbnailOptions())
        let (off, offPage) = try await open(nil)
        let generator = HandwritingGenerator(seed: 99)
        var tOn: [Double] = [], tOff: [Double] = []
        for k in 0..<max(runs, 9) {
            let stroke = generator.stroke(origin: (72 + Double(k % 20) * 24, 720), variant: UInt64(k + 1))
            try await on.append(stroke, to: onPage)
            var s2 = stroke
            s2.id = UUID()
            try await off.append(s2, to: offPage)
            tOn.append(try await milliseconds { try await on.save() })
            await on.waitForThumbnails()
            tOff.append(try await milliseconds { try await off.save() })
        }
        try await on.close()
        try await off.close()
        return (median(tOn), median(tOff))
    }

    static func milliseconds(_ body: () async throws -> Void) async rethrows -> Double {
        try await measureAsync(body) * 1000
    }

    /// Median wall time of `runs` calls of `body`, in milliseconds.
    private static func timed(_ runs: Int, _ body: () throws -> Void) rethrows -> Double {
        var times: [Double] = []
        for _ in 0..<runs {
            times.append(try measure(body) * 1000)
        }
        return median(times)
    }

    private static func fmt(_ v: Double) -> String { String(format: "%.2f", v) }
}
