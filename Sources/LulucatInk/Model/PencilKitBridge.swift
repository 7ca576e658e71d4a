// The PKStroke bridge: field copies between PencilKit and the model through PencilPoint, whose
// conversions (the rounding, the checks) are plain Swift and tested on Linux. Not compiled here.

#if canImport(PencilKit) && canImport(UIKit)
import Foundation
import PencilKit
import UIKit

extension Stroke {
    /// The PencilKit stroke's points, its transform applied, as a stroke of the matching tool.
    /// - Throws: `QuantizeError` when a point holds a value the model cannot store.
    public init(_ stroke: PKStroke, id: UUID = UUID()) throws(QuantizeError) {
        let t = stroke.transform
        let points = stroke.path.map { p in
            let at = p.location.applying(t)
            return PencilPoint(location: InkPoint(x: at.x, y: at.y), timeOffset: p.timeOffset,
                               size: InkSize(width: p.size.width, height: p.size.height), opacity: p.opacity,
                               force: p.force, azimuth: p.azimuth, altitude: p.altitude)
        }
        var r: CGFloat = 0, g: CGFloat = 0, b: CGFloat = 0, a: CGFloat = 0
        stroke.ink.color.getRed(&r, green: &g, blue: &b, alpha: &a)
        func byte(_ v: CGFloat) -> UInt8 { UInt8(max(0, min(255, (v * 255).rounded()))) }
        let tool: Tool = switch stroke.ink.inkType {
        case .pencil: .pencil
        case .marker: .marker
        default: .pen
        }
        let width = points.first.map { $0.size.width } ?? 2
        try self.init(id: id, ink: Ink(tool: tool, color: RGBA8(r: byte(r), g: byte(g), b: byte(b), a: byte(a)),
                                       width: try Quantize.radius(width)),
                      pencilPoints: points)
    }
}

extension PKStroke {
    /// The stroke as PencilKit draws it (identity transform; highlighter as PencilKit's marker).
    public init(_ stroke: Stroke) {
        let points = stroke.pencilPoints.map { p in
            PKStrokePoint(location: CGPoint(x: p.location.x, y: p.location.y), timeOffset: p.timeOffset,
                          size: CGSize(width: p.size.width, height: p.size.height), opacity: p.opacity,
                          force: p.force, azimuth: p.azimuth, altitude: p.altitude)
        }
        let c = stroke.ink.color
        let color = UIColor(red: CGFloat(c.r) / 255, green: CGFloat(c.g) / 255, blue: CGFloat(c.b) / 255, alpha: CGFloat(c.a) / 255)
        let type: PKInk.InkType = switch stroke.ink.tool {
        case .pencil: .pencil
        case .marker, .highlighter: .marker
        default: .pen
        }
        self.init(ink: PKInk(type, color: color), path: PKStrokePath(controlPoints: points, creationDate: Date()))
    }
}
#endif
