// The page renderer's contract: sizes, scale errors, images, placeholders and reported problems.

import Foundation
import LulucatInk
import Testing
@testable import LulucatRender

@Suite struct PageRendererTests {
    static let size = QuantizedSize(width: 1000, height: 600)

    static func page(_ elements: [Element]) -> PageContent { PageContent(canvasSize: size, elements: elements) }

    static func image(_ asset: UUID, x: Int32 = 200, y: Int32 = 100, w: Int32 = 400, h: Int32 = 300, rotation: Int32 = 0) -> ImageElement {
        ImageElement(assetID: asset, frame: QuantizedRect(x: x, y: y, width: w, height: h), rotation: rotation)
    }

    @Test func emptyPageIsWhiteAtTheCanvasSize() throws {
        let result = try PageRenderer.render(Self.page([]), scale: 1.5, assets: { _ in nil })
        #expect(result.image.width == 150 && result.image.height == 90)
        #expect(result.image.pixels.allSatisfy { $0 == 255 })
        #expect(result.problems.isEmpty)
    }

    @Test func badScalesThrow() {
        for scale in [0, -1, .nan, .infinity] as [Double] {
            #expect(throws: RenderError.self) { try PageRenderer.render(Self.page([]), scale: scale, assets: { _ in nil }) }
        }
        #expect(throws: RenderError.imageTooLarge(width: 20000, height: 12000)) {
            try PageRenderer.render(Self.page([]), scale: 200, assets: { _ in nil })
        }
        #expect(throws: RenderError.self) { try Thumbnail.make(Self.page([]), width: 0, assets: { _ in nil }) }
    }

    @Test func thumbnailFitsTheWidth() throws {
        let letter = PageContent(canvasSize: .letter, elements: TestPages.varyingCurve.elements)
        let result = try Thumbnail.make(letter, width: 256, assets: { _ in nil })
        #expect(result.image.width == 256)
        #expect(result.image.height == 331)  // 792 * 256 / 612 = 331.3
        #expect(result.image.pixels.contains { $0 < 128 })  // the curve shows
        let (jpeg, problems) = try Thumbnail.jpeg(letter, width: 128, assets: { _ in nil })
        #expect(problems.isEmpty)
        let decoded = try RGBAImage(decoding: jpeg)
        #expect(decoded.width == 128 && decoded.height == 166)
        // Fitted into a box: the tall page fills the height, a wide page the width.
        let boxed = try Thumbnail.make(letter, width: 200, maxHeight: 200, assets: { _ in nil }).image
        #expect(boxed.width == 155 && boxed.height == 200)  // 612 * 200 / 792 = 154.5
        let wide = PageContent(canvasSize: QuantizedSize(width: 8000, height: 2000), elements: [])
        let wideBoxed = try Thumbnail.make(wide, width: 200, maxHeight: 200, assets: { _ in nil }).image
        #expect(wideBoxed.width == 200 && wideBoxed.height == 50)
        #expect(throws: RenderError.self) { try Thumbnail.make(letter, width: 200, maxHeight: 0, assets: { _ in nil }) }
    }

    @Test func missingAssetDrawsAPlaceholderAndIsReported() throws {
        let element = Self.image(TestPages.missingID)
        let result = try PageRenderer.render(Self.page([.image(element)]), scale: 1, assets: { _ in nil })
        #expect(result.problems == [RenderProblem(elementID: element.id, assetID: TestPages.missingID, kind: .missingAsset)])
        // Grey inside, darker on the cross through the centre, white outside.
        #expect(result.image.pixel(x: 30, y: 15) == (222, 222, 222, 255))
        #expect(result.image.pixel(x: 40, y: 25).r < 180)
        #expect(result.image.pixel(x: 70, y: 50) == (255, 255, 255, 255))
    }

    @Test func corruptAssetIsReportedNeverFatal() throws {
        let good = try TestPages.photo.pngData()
        let corruptions: [Data] = [good.prefix(40), Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3]), Data("text".utf8), Data()]
        for bytes in corruptions {
            let element = Self.image(TestPages.photoID)
            let result = try PageRenderer.render(Self.page([.image(element)]), scale: 1) { _ in try RGBAImage(decoding: bytes) }
            #expect(result.problems.count == 1)
            if case .unreadableAsset(let message)? = result.problems.first?.kind {
                #expect(!message.isEmpty)
            } else {
                Issue.record("expected an unreadable-asset problem, got \(result.problems)")
            }
            #expect(result.image.pixel(x: 30, y: 15) == (222, 222, 222, 255))
        }
    }

    @Test func imageFillsItsFrame() throws {
        let red = RGBAImage(width: 8, height: 6, fill: (200, 10, 10, 255))
        let element = Self.image(TestPages.photoID)  // 20,10 to 60,40 pt
        let result = try PageRenderer.render(Self.page([.image(element)]), scale: 2) { _ in red }
        #expect(result.problems.isEmpty)
        #expect(result.image.pixel(x: 41, y: 21) == (200, 10, 10, 255))
        #expect(result.image.pixel(x: 118, y: 78) == (200, 10, 10, 255))
        #expect(result.image.pixel(x: 38, y: 30) == (255, 255, 255, 255))
        #expect(result.image.pixel(x: 121, y: 30) == (255, 255, 255, 255))
    }

    @Test func rotationTurnsClockwiseAboutTheCentre() throws {
        // A 40 x 10 pt bar centred at (50, 30), turned 90 degrees, becomes 10 x 40 pt.
        let bar = Self.image(TestPages.photoID, x: 300, y: 250, w: 400, h: 100, rotation: 9000)
        let black = RGBAImage(width: 4, height: 1, pixels: [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 0, 0, 255])
        let image = try PageRenderer.render(Self.page([.image(bar)]), scale: 1) { _ in black }.image
        #expect(image.pixel(x: 50, y: 12) == (0, 0, 0, 255))
        #expect(image.pixel(x: 35, y: 30) == (255, 255, 255, 255))
        // The source's right end (red) lands at the bottom: clockwise on screen.
        #expect(image.pixel(x: 50, y: 47).r > 200 && image.pixel(x: 50, y: 47).g < 40)
        #expect(image.pixel(x: 50, y: 14).r < 40)
    }

    @Test func largePhotoShrinksSmoothly() throws {
        // A one-pixel black and white checkerboard shrunk 12 times averages to mid grey, not to
        // whichever pixels a bilinear sample happened to hit.
        var px = [UInt8](repeating: 255, count: 480 * 360 * 4)
        for y in 0..<360 { for x in 0..<480 where (x + y) % 2 == 0 { for c in 0..<3 { px[(y * 480 + x) * 4 + c] = 0 } } }
        let checker = RGBAImage(width: 480, height: 360, pixels: px)
        let result = try PageRenderer.render(Self.page([.image(Self.image(TestPages.photoID))]), scale: 1) { _ in checker }
        for (x, y) in [(30, 20), (40, 25), (55, 35)] {
            #expect(abs(Int(result.image.pixel(x: x, y: y).r) - 128) < 10)
        }
    }

    @Test func transparentAssetShowsThePage() throws {
        let clear = RGBAImage(width: 4, height: 4, fill: (0, 0, 0, 0))
        let stroke = Stroke(samples: [TestPages.sample(10, 25, radius: 2), TestPages.sample(90, 25, radius: 2)])
        let result = try PageRenderer.render(Self.page([.stroke(stroke), .image(Self.image(TestPages.photoID))]), scale: 1) { _ in clear }
        #expect(result.image.pixel(x: 40, y: 25) == (0, 0, 0, 255))
        #expect(result.image.pixel(x: 40, y: 15) == (255, 255, 255, 255))
    }

    @Test func imagesKeepTheirZOrder() throws {
        let stroke = Stroke(samples: [TestPages.sample(10, 25, radius: 2), TestPages.sample(90, 25, radius: 2)])
        let white = RGBAImage(width: 2, height: 2, fill: (255, 255, 255, 255))
        let over = try PageRenderer.render(Self.page([.stroke(stroke), .image(Self.image(TestPages.photoID))]), scale: 1) { _ in white }
        #expect(over.image.pixel(x: 40, y: 25) == (255, 255, 255, 255))
        let under = try PageRenderer.render(Self.page([.image(Self.image(TestPages.photoID)), .stroke(stroke)]), scale: 1) { _ in white }
        #expect(under.image.pixel(x: 40, y: 25) == (0, 0, 0, 255))
    }

    @Test func absurdFramesAreClippedNotFatal() throws {
        let photo = TestPages.photo
        let frames = [QuantizedRect(x: Int32.min, y: Int32.min, width: Int32.max, height: Int32.max),
                      QuantizedRect(x: 100, y: 100, width: 0, height: 300),
                      QuantizedRect(x: 100, y: 100, width: -400, height: -300),
                      QuantizedRect(x: Int32.max - 10, y: 0, width: Int32.max, height: 10),
                      QuantizedRect(x: -5_000_000, y: -5_000_000, width: 10_000_000, height: 10_000_000)]
        for frame in frames {
            for rotation: Int32 in [0, 4500, Int32.max, Int32.min] {
                for asset in [TestPages.photoID, TestPages.missingID] {
                    let element = ImageElement(assetID: asset, frame: frame, rotation: rotation)
                    let result = try PageRenderer.render(Self.page([.image(element)]), scale: 1) { $0 == TestPages.photoID ? photo : nil }
                    #expect(result.image.width == 100)
                    _ = SVGWriter.svg(for: Self.page([.image(element)]), assets: { _ in nil })
                }
            }
        }
    }

    @Test func eachAssetIsDecodedOnce() throws {
        var calls = 0
        let elements = (0..<5).map { i in Element.image(Self.image(TestPages.photoID, x: Int32(i * 100))) }
        let result = try PageRenderer.render(Self.page(elements), scale: 1) { _ in calls += 1; return TestPages.photo }
        #expect(calls == 1)
        #expect(result.problems.isEmpty)
        // A missing asset is asked for once and reported for every image that shows it.
        calls = 0
        let missing = try PageRenderer.render(Self.page(elements), scale: 1) { _ in calls += 1; return nil }
        #expect(calls == 1)
        #expect(missing.problems.count == 5)
        #expect(Set(missing.problems.map(\.elementID)).count == 5)
    }
}
