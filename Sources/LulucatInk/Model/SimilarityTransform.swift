// Transforms composed in doubles, so a selection rotated or scaled many times is quantized once
// against its original samples instead of once per step (no drift).

import Foundation

/// A uniform scale and a rotation, then a translation, in 0.1-pt units and kept in doubles:
/// `x' = a·x − b·y + tx`, `y' = b·x + a·y + ty` (`a + bi` is the scale times the rotation).
///
/// Steps compose exactly enough that 360 rotations of 1° give the identity to about 1e-12, so an
/// element mapped from its original samples by the composed transform lands where it started.
///
/// ```swift
/// var total = SimilarityTransform.identity
/// for _ in 0..<360 { total = total.followed(by: SimilarityTransform(QuantizedTransform(rotation: 100))) }
/// total.apply(to: original) == original  // true
/// ```
public struct SimilarityTransform: Hashable, Sendable {
    /// The scale times the cosine of the rotation.
    public var a: Double
    /// The scale times the sine of the rotation (positive turns clockwise on screen).
    public var b: Double
    /// Horizontal translation in 0.1 pt, applied after the scale and rotation.
    public var tx: Double
    /// Vertical translation in 0.1 pt.
    public var ty: Double

    /// The map `x' = a·x − b·y + tx`, `y' = b·x + a·y + ty` (positions in 0.1 pt).
    public init(a: Double, b: Double, tx: Double, ty: Double) {
        self.a = a; self.b = b; self.tx = tx; self.ty = ty
    }

    /// The transform that leaves every point where it is.
    public static let identity = SimilarityTransform(a: 1, b: 0, tx: 0, ty: 0)

    /// The same map as `QuantizedTransform.apply(x:y:)` before its rounding.
    public init(_ q: QuantizedTransform) {
        let s = Double(q.scale) / 1000
        let angle = Double(q.rotation) / 100 * .pi / 180
        let a = s * cos(angle), b = s * sin(angle)
        let cx = Double(q.centerX), cy = Double(q.centerY)
        self.init(a: a, b: b,
                  tx: cx + Double(q.dx) - a * cx + b * cy,
                  ty: cy + Double(q.dy) - b * cx - a * cy)
    }

    /// This transform, then `next`.
    public func followed(by next: SimilarityTransform) -> SimilarityTransform {
        SimilarityTransform(a: next.a * a - next.b * b,
                            b: next.a * b + next.b * a,
                            tx: next.a * tx - next.b * ty + next.tx,
                            ty: next.b * tx + next.a * ty + next.ty)
    }

    /// The scale factor (1 keeps the size).
    public var scale: Double { (a * a + b * b).squareRoot() }
    /// The rotation in radians, clockwise on screen, in (−π, π].
    public var rotation: Double { atan2(b, a) }

    /// Maps one point without rounding.
    public func map(x: Double, y: Double) -> (x: Double, y: Double) {
        (a * x - b * y + tx, b * x + a * y + ty)
    }

    /// Maps one point, rounding to nearest and clamping to the Int32 range.
    public func apply(x: Int32, y: Int32) -> (Int32, Int32) {
        let p = map(x: Double(x), y: Double(y))
        return (Quantize.clampInt32(p.x.rounded()), Quantize.clampInt32(p.y.rounded()))
    }

    /// The element moved, scaled and rotated, each value rounded once. Radii and image sizes scale
    /// by `scale`; an image's rotation adds `rotation` (in 0.01°). Unknown elements are returned
    /// unchanged.
    public func apply(to element: Element) -> Element {
        let s = scale
        func scaled(_ v: Double) -> Double { (v * s).rounded() }
        switch element {
        case .stroke(var stroke):
            for i in stroke.samples.indices {
                let (x, y) = apply(x: stroke.samples[i].x, y: stroke.samples[i].y)
                stroke.samples[i].x = x
                stroke.samples[i].y = y
                if s != 1 { stroke.samples[i].radius = Quantize.clampUInt16(scaled(Double(stroke.samples[i].radius))) }
            }
            return .stroke(stroke)
        case .image(var image):
            let f = image.frame
            let c = map(x: Double(f.x) + Double(f.width) / 2, y: Double(f.y) + Double(f.height) / 2)
            let w = scaled(Double(f.width)), h = scaled(Double(f.height))
            image.frame = QuantizedRect(x: Quantize.clampInt32((c.x - w / 2).rounded()),
                                        y: Quantize.clampInt32((c.y - h / 2).rounded()),
                                        width: Quantize.clampInt32(w), height: Quantize.clampInt32(h))
            let turn = Int64((rotation * 180 / .pi * 100).rounded())
            image.rotation = Int32(clamping: (Int64(image.rotation) + turn) % 36000)
            return .image(image)
        case .unknown:
            return element
        }
    }
}
