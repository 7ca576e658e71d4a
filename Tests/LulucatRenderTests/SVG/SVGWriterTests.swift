// SVG export: the document's frame, one outline path per stroke, blend modes, embedded images.

import Foundation
import LulucatInk
import Testing
@testable import LulucatRender

@Suite struct SVGWriterTests {
    @Test func documentFrameIsInPoints() {
        let svg = SVGWriter.svg(for: TestPages.straightStroke, assets: { _ in nil })
        #expect(svg.text.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "))
        #expect(svg.text.contains("width=\"100pt\" height=\"60pt\" viewBox=\"0 0 100 60\""))
        #expect(svg.text.contains("<rect x=\"0\" y=\"0\" width=\"100\" height=\"60\" fill=\"#ffffff\"/>"))
        #expect(svg.text.hasSuffix("</svg>\n"))
        #expect(svg.text.components(separatedBy: "<path ").count == 2)
        #expect(svg.problems.isEmpty)
    }

    /// The hull of two discs, worked by hand: A = (0, 0) r 2, B = (10, 0) r 1. sin = 0.1,
    /// cos = 0.99499, so the tangent normals are (0.1, +/-0.995): tangent points (0.2, +/-1.99)
    /// on A and (10.1, +/-0.99) on B.
    @Test func capsuleOutlineIsTheTangentHull() {
        var d = ""
        StrokeOutline.appendCapsule(StrokePoint(x: 0, y: 0, radius: 2, opacity: 1),
                                    StrokePoint(x: 10, y: 0, radius: 1, opacity: 1), to: &d)
        #expect(d == "M0.2 1.99l9.9 -1a1 1 0 0 0 0 -1.98l-9.9 -1a2 2 0 1 0 0 3.98z")
        var dot = ""
        StrokeOutline.appendCapsule(StrokePoint(x: 5, y: 5, radius: 3, opacity: 1),
                                    StrokePoint(x: 6, y: 5, radius: 1, opacity: 1), to: &dot)
        #expect(dot == "M8 5a3 3 0 1 0 -6 0a3 3 0 1 0 6 0z")
    }

    @Test func numbersAreShortAndExact() {
        for (v, s) in [(0.0, "0"), (1.5, "1.5"), (-0.05, "-0.05"), (12.345, "12.35"), (-3.0, "-3"), (0.1, "0.1"), (100.07, "100.07")] {
            var out = ""
            StrokeOutline.number(v, &out)
            #expect(out == s)
        }
    }

    /// Dense samples on a straight line collapse to the two ends; a bend or a radius change is kept.
    @Test func simplificationKeepsWhatTheOutlineNeeds() {
        let line = (0...100).map { StrokePoint(x: Double($0) * 0.3, y: 10, radius: 1, opacity: 1) }
        #expect(StrokeOutline.simplify(line).count == 2)
        var bent = line
        bent[50].y = 10.5
        let keptBent = StrokeOutline.simplify(bent)
        #expect(keptBent.count >= 3 && keptBent.contains { $0.y == 10.5 })
        var swelling = line
        swelling[70].radius = 1.3
        #expect(StrokeOutline.simplify(swelling).count >= 3)
        // Every kept point is within tolerance of the original curve: check a smooth wave.
        let wave = (0...300).map { i in StrokePoint(x: Double(i) * 0.2, y: 20 + 8 * sin(Double(i) / 30), radius: 1 + Double(i) / 300, opacity: 1) }
        let kept = StrokeOutline.simplify(wave)
        #expect(kept.count < 120 && kept.count > 10)
        for p in wave {
            let near = zip(kept, kept.dropFirst()).map { a, b -> Double in
                let dx = b.x - a.x, dy = b.y - a.y
                let t = min(max(((p.x - a.x) * dx + (p.y - a.y) * dy) / (dx * dx + dy * dy), 0), 1)
                return hypot(p.x - a.x - t * dx, p.y - a.y - t * dy)
            }.min()!
            #expect(near <= StrokeOutline.tolerance + 1e-9)
        }
    }

    @Test func highlightersMultiplyAndComeFirst() {
        let svg = SVGWriter.svg(for: TestPages.highlighterOverInk, assets: { _ in nil }).text
        let paths = svg.components(separatedBy: "\n").filter { $0.hasPrefix("<path ") }
        #expect(paths.count == 3)
        #expect(paths[0].hasPrefix("<path fill=\"#ffdc00\" fill-opacity=\"0.784\" style=\"mix-blend-mode:multiply\" d=\"M"))
        #expect(paths[1].hasPrefix("<path fill=\"#ff78c8\" fill-opacity=\"0.627\" style=\"mix-blend-mode:multiply\""))
        #expect(paths[2].hasPrefix("<path fill=\"#000000\" d=\"M"))
    }

    @Test func imagesAreEmbeddedRotatedAboutTheirCentre() throws {
        let png = try TestPages.photo.pngData()
        let svg = SVGWriter.svg(for: TestPages.rotatedImage) { $0 == TestPages.photoID ? png : nil }
        #expect(svg.problems.isEmpty)
        #expect(svg.text.contains("<image x=\"20\" y=\"12\" width=\"40\" height=\"30\" preserveAspectRatio=\"none\" "
            + "transform=\"rotate(30 40 27)\" xlink:href=\"data:image/png;base64,\(png.base64EncodedString())\"/>"))
    }

    @Test func missingOrUnknownAssetsArePlaceholders() {
        let page = TestPages.rotatedImage
        let element = page.images[0]
        let missing = SVGWriter.svg(for: page, assets: { _ in nil })
        #expect(missing.problems == [RenderProblem(elementID: element.id, assetID: TestPages.photoID, kind: .missingAsset)])
        #expect(missing.text.contains("<g transform=\"rotate(30 40 27)\"><rect x=\"20\" y=\"12\" width=\"40\" height=\"30\" fill=\"#dedede\""))
        #expect(!missing.text.contains("<image"))
        let unknown = SVGWriter.svg(for: page, assets: { _ in Data("GIF89a".utf8) })
        #expect(unknown.problems.count == 1)
        struct Unreadable: Error {}
        let thrown = SVGWriter.svg(for: page, assets: { _ in throw Unreadable() })
        #expect(thrown.problems.count == 1)
    }

    /// The outline covers what the raster paints: every pixel the raster inks fully lies inside
    /// some capsule of the simplified outline, and every pixel it leaves white lies outside.
    @Test func outlineAgreesWithTheRaster() throws {
        let page = TestPages.varyingCurve
        let stroke = page.strokes[0]
        let kept = StrokeOutline.simplify(stroke.drawingPoints)
        let scale = 2.0
        let image = try PageRenderer.render(page, scale: scale, assets: { _ in nil }).image
        func signedDistance(_ px: Double, _ py: Double) -> Double {
            var best = Double.infinity
            for (a, b) in zip(kept, kept.dropFirst()) {
                for i in 0...40 {
                    let t = Double(i) / 40
                    let d = hypot(px - (a.x + t * (b.x - a.x)), py - (a.y + t * (b.y - a.y))) - (a.radius + t * (b.radius - a.radius))
                    best = min(best, d)
                }
            }
            return best
        }
        var checked = 0
        for y in stride(from: 0, to: image.height, by: 2) {
            for x in stride(from: 0, to: image.width, by: 2) {
                let p = image.pixel(x: x, y: y)
                guard p.r == 20 || p.r == 255 else { continue }  // fully inked or untouched
                let d = signedDistance((Double(x) + 0.5) / scale, (Double(y) + 0.5) / scale)
                if p.r == 20 { #expect(d < 0.1) } else { #expect(d > -0.1) }
                checked += 1
            }
        }
        #expect(checked > 5000)
    }
}
