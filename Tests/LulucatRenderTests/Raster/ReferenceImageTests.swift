// Small pages compared with reference images that a person looked at before they were committed.

import Foundation
import LulucatInk
import Testing
@testable import LulucatRender

@Suite struct ReferenceImageTests {
    /// Renders at 2 px a point and compares: channels may differ by 3, and at most 12 pixels by more
    /// (room for float rounding across platforms, none for a changed shape).
    func check(_ name: String, _ content: PageContent) throws {
        let result = try PageRenderer.render(content, scale: 2, assets: TestPages.assets)
        #expect(result.problems.isEmpty)
        if ProcessInfo.processInfo.environment["LULUCAT_DUMP_RENDERS"] == "1" {
            try result.image.pngData().write(to: URL(fileURLWithPath: "/tmp/lulucat-\(name).png"))
        }
        let reference = try Fixtures.reference(name, for: result.image)
        #expect(result.image.width == reference.width && result.image.height == reference.height)
        #expect(Fixtures.differingPixels(result.image, reference, tolerance: 3) <= 12)
    }

    @Test func straightStroke() throws { try check("straight-stroke", TestPages.straightStroke) }
    @Test func curveWithVaryingRadius() throws { try check("varying-curve", TestPages.varyingCurve) }
    @Test func highlighterOverInk() throws { try check("highlighter-over-ink", TestPages.highlighterOverInk) }
    @Test func rotatedImage() throws { try check("rotated-image", TestPages.rotatedImage) }
}
