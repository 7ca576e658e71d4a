// Rectangles and sizes in the quantized unit (0.1 pt).

/// A size in 0.1 pt.
public struct QuantizedSize: Hashable, Sendable {
    /// The width in 0.1 pt (6120 is 612 pt).
    public var width: Int32
    /// The height in 0.1 pt.
    public var height: Int32
    /// A size of `width` by `height`, both in 0.1 pt. `Quantize.size(width:height:)` makes one
    /// from points.
    public init(width: Int32, height: Int32) { self.width = width; self.height = height }
    /// A US Letter page, 612 x 792 pt.
    public static let letter = QuantizedSize(width: 6120, height: 7920)
    /// An A4 page, 595 x 842 pt.
    public static let a4 = QuantizedSize(width: 5950, height: 8420)
}

/// A rectangle in 0.1 pt.
public struct QuantizedRect: Hashable, Sendable {
    /// The left edge in 0.1 pt, x growing to the right.
    public var x: Int32
    /// The top edge in 0.1 pt, y growing downwards.
    public var y: Int32
    /// The width in 0.1 pt.
    public var width: Int32
    /// The height in 0.1 pt.
    public var height: Int32
    /// A rectangle whose top left corner is at `x`, `y`, all four in 0.1 pt.
    /// `Quantize.rect(x:y:width:height:)` makes one from points.
    public init(x: Int32, y: Int32, width: Int32, height: Int32) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    init(clampingX x: Int64, y: Int64, width: Int64, height: Int64) {
        func c(_ v: Int64) -> Int32 { Int32(clamping: v) }
        self.init(x: c(x), y: c(y), width: c(width), height: c(height))
    }

    /// The smallest rectangle that holds both (clamped to what the model holds).
    public func union(_ other: QuantizedRect) -> QuantizedRect {
        let minX = min(Int64(x), Int64(other.x)), minY = min(Int64(y), Int64(other.y))
        let maxX = max(Int64(x) + Int64(width), Int64(other.x) + Int64(other.width))
        let maxY = max(Int64(y) + Int64(height), Int64(other.y) + Int64(other.height))
        return QuantizedRect(clampingX: minX, y: minY, width: maxX - minX, height: maxY - minY)
    }

    /// Whether it meets a page of `size` (from its top left corner at 0, 0), edges included:
    /// some of it lies on the page.
    public func meets(_ size: QuantizedSize) -> Bool {
        Int64(x) <= Int64(size.width) && Int64(x) + Int64(width) >= 0 && Int64(y) <= Int64(size.height) && Int64(y) + Int64(height) >= 0
    }
}
