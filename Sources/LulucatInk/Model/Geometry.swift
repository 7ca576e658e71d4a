// Rectangles and sizes in the quantized unit (0.1 pt).

/// A size in 0.1 pt.
public struct QuantizedSize: Hashable, Sendable {
    public var width: Int32
    public var height: Int32
    public init(width: Int32, height: Int32) { self.width = width; self.height = height }
    /// A US Letter page, 612 x 792 pt.
    public static let letter = QuantizedSize(width: 6120, height: 7920)
    /// An A4 page, 595 x 842 pt.
    public static let a4 = QuantizedSize(width: 5950, height: 8420)
}

/// A rectangle in 0.1 pt.
public struct QuantizedRect: Hashable, Sendable {
    public var x: Int32
    public var y: Int32
    public var width: Int32
    public var height: Int32
    public init(x: Int32, y: Int32, width: Int32, height: Int32) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    init(clampingX x: Int64, y: Int64, width: Int64, height: Int64) {
        func c(_ v: Int64) -> Int32 { Int32(clamping: v) }
        self.init(x: c(x), y: c(y), width: c(width), height: c(height))
    }
}
