// How a stroke is drawn: the tool, its colour and its base width.

/// The drawing tool of a stroke. Known tools have names; any other raw value is preserved as is,
/// so a tool added by a newer app survives a load and save by an older one.
public struct Tool: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let pen = Tool(rawValue: 0)
    public static let pencil = Tool(rawValue: 1)
    public static let marker = Tool(rawValue: 2)
    /// Drawn under the ink, blended (multiply), not over it.
    public static let highlighter = Tool(rawValue: 3)

    public static let named: [(String, Tool)] = [
        ("pen", .pen), ("pencil", .pencil), ("marker", .marker), ("highlighter", .highlighter),
    ]

    /// The tool's name, or `tool<raw>` for a tool this version does not know.
    public var description: String {
        Tool.named.first { $0.1 == self }?.0 ?? "tool\(rawValue)"
    }

    /// Parses a name written by `description`.
    public init?(name: String) {
        if let t = Tool.named.first(where: { $0.0 == name })?.1 { self = t; return }
        if name.hasPrefix("tool"), let raw = UInt8(name.dropFirst(4)) { self.init(rawValue: raw); return }
        return nil
    }
}

/// A colour as 8-bit red, green, blue and alpha (not premultiplied).
public struct RGBA8: Hashable, Sendable {
    public var r: UInt8, g: UInt8, b: UInt8, a: UInt8
    public init(r: UInt8, g: UInt8, b: UInt8, a: UInt8 = 255) {
        self.r = r; self.g = g; self.b = b; self.a = a
    }
    public static let black = RGBA8(r: 0, g: 0, b: 0)
}

/// The ink a stroke is drawn with.
public struct Ink: Hashable, Sendable {
    public var tool: Tool
    public var color: RGBA8
    /// Base width of the tool in 0.1 pt; each sample's radius is the drawn size.
    public var width: UInt16

    public init(tool: Tool = .pen, color: RGBA8 = .black, width: UInt16 = 20) {
        self.tool = tool
        self.color = color
        self.width = width
    }
}
