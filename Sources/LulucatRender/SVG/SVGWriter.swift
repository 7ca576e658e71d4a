// A page as an SVG document: strokes as filled outlines of their variable width, highlighters
// multiplied onto the page, images embedded as data: URIs. The viewBox is the canvas in points.

import Foundation
import LulucatInk

/// An SVG page and the images it could not embed.
package struct SVGResult: Sendable {
    package var text: String
    /// Images drawn as placeholders (missing asset, or bytes that do not decode as JPEG or PNG).
    package var problems: [RenderProblem]
}

package enum SVGWriter {
    /// The SVG document of `content`.
    ///
    /// - Parameter assets: the encoded bytes (JPEG or PNG) of an asset id, nil when missing; a
    ///   thrown error counts as unreadable. Each asset is decoded once to check it; a missing or
    ///   undecodable one is drawn as a placeholder and reported.
    ///
    /// Each stroke is one `<path>` whose pieces are filled once (non-zero rule), so a translucent
    /// stroke has no darker joints, as in the raster. SVG has no per-point opacity: a stroke with an
    /// opacity channel is drawn at its mean opacity.
    package static func svg(for content: PageContent, assets: (UUID) throws -> Data?) -> SVGResult {
        let w = Double(content.canvasSize.width) / 10, h = Double(content.canvasSize.height) / 10
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
        out += "width=\"\(num(w))pt\" height=\"\(num(h))pt\" viewBox=\"0 0 \(num(w)) \(num(h))\">\n"
        out += "<rect x=\"0\" y=\"0\" width=\"\(num(w))\" height=\"\(num(h))\" fill=\"#ffffff\"/>\n"
        var problems: [RenderProblem] = []
        // Each asset is fetched and checked once, however many images show it.
        var known: [UUID: Result<String, AssetFailure>] = [:]
        for step in DrawOrder.steps(for: content) {
            switch step {
            case .ink(let stroke): out += strokePath(stroke, multiply: false)
            case .highlighter(let stroke): out += strokePath(stroke, multiply: true)
            case .image(let element):
                let asset = known[element.assetID] ?? dataURI(element.assetID, assets)
                known[element.assetID] = asset
                let (text, problem) = image(element, asset: asset)
                out += text
                if let problem { problems.append(problem) }
            }
        }
        out += "</svg>\n"
        return SVGResult(text: out, problems: problems)
    }

    private static func num(_ v: Double) -> String {
        var s = ""
        StrokeOutline.number(v, &s)
        return s
    }

    private static func hex(_ c: RGBA8) -> String {
        let digits = Array("0123456789abcdef")
        return "#" + String([c.r, c.g, c.b].flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    private static func strokePath(_ stroke: Stroke, multiply: Bool) -> String {
        let points = stroke.drawingPoints
        guard !points.isEmpty else { return "" }
        let meanOpacity = points.reduce(0) { $0 + $1.opacity } / Double(points.count)
        let opacity = Double(stroke.ink.color.a) / 255 * meanOpacity
        var attributes = "fill=\"\(hex(stroke.ink.color))\""
        if opacity < 0.9995 { attributes += " fill-opacity=\"\(String(format: "%.3f", opacity))\"" }
        if multiply { attributes += " style=\"mix-blend-mode:multiply\"" }
        return "<path \(attributes) d=\"\(StrokeOutline.pathData(points))\"/>\n"
    }

    private struct AssetFailure: Error { var kind: RenderProblem.Kind }

    /// The asset as a data: URI, after decoding it once to check it: a corrupt asset gets the
    /// raster's placeholder rather than a broken-image icon in the viewer.
    private static func dataURI(_ id: UUID, _ assets: (UUID) throws -> Data?) -> Result<String, AssetFailure> {
        do {
            guard let data = try assets(id) else { return .failure(AssetFailure(kind: .missingAsset)) }
            _ = try RGBAImage(decoding: data)
            let mime = RGBAImage.sniffFormat(data) == .jpeg ? "image/jpeg" : "image/png"
            return .success("data:\(mime);base64,\(data.base64EncodedString())")
        } catch {
            return .failure(AssetFailure(kind: .unreadableAsset(String(describing: error))))
        }
    }

    private static func image(_ element: ImageElement, asset: Result<String, AssetFailure>) -> (String, RenderProblem?) {
        let x = Double(element.frame.x) / 10, y = Double(element.frame.y) / 10
        let w = Double(element.frame.width) / 10, h = Double(element.frame.height) / 10
        var transform = ""
        if element.rotation != 0 {
            // SVG's rotate() turns clockwise on screen for a positive angle, as the model does.
            transform = " transform=\"rotate(\(num(Double(element.rotation) / 100)) \(num(x + w / 2)) \(num(y + h / 2)))\""
        }
        let kind: RenderProblem.Kind
        switch asset {
        case .success(let uri):
            let text = "<image x=\"\(num(x))\" y=\"\(num(y))\" width=\"\(num(w))\" height=\"\(num(h))\" "
                + "preserveAspectRatio=\"none\"\(transform) xlink:href=\"\(uri)\"/>\n"
            return (text, nil)
        case .failure(let failure):
            kind = failure.kind
        }
        let problem = RenderProblem(elementID: element.id, assetID: element.assetID, kind: kind)
        let placeholder = "<g\(transform)><rect x=\"\(num(x))\" y=\"\(num(y))\" width=\"\(num(w))\" height=\"\(num(h))\" "
            + "fill=\"#dedede\" stroke=\"#8c8c8c\" stroke-width=\"1.5\"/>"
            + "<path d=\"M\(num(x)) \(num(y))L\(num(x + w)) \(num(y + h))M\(num(x + w)) \(num(y))L\(num(x)) \(num(y + h))\" "
            + "stroke=\"#8c8c8c\" stroke-width=\"1.5\"/></g>\n"
        return (placeholder, problem)
    }
}
