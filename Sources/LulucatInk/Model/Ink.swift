// How a stroke is drawn: the tool, its colour and its base width.

/// The drawing tool of a stroke. Known tools have names; any other raw value is preserved as is,
/// so a tool added by a newer app survives a load and save by an older one.
public struct Tool: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The byte the page file stores for the tool.
    public var rawValue: UInt8
    /// The tool stored as `rawValue`, known or not.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// A pen: solid ink (PencilKit's `.pen`).
    public static let pen = Tool(rawValue: 0)
    /// A pencil (PencilKit's `.pencil`).
    public static let pencil = Tool(rawValue: 1)
    /// A marker (PencilKit's `.marker`).
    public static let marker = Tool(rawValue: 2)
    /// Drawn under the ink, blended (multiply), not over it.
    public static let highlighter = Tool(rawValue: 3)

    /// The tools this version names, with the names `description` gives and `init(name:)` reads
    /// (the JSON form's names).
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
    /// Red, 0...255.
    public var r: UInt8
    /// Green, 0...255.
    public var g: UInt8
    /// Blue, 0...255.
    public var b: UInt8
    /// Alpha, 0 (transparent) ... 255 (opaque); the colour components are not multiplied by it.
    public var a: UInt8
    /// A colour from its components, opaque unless `a` says otherwise.
    public init(r: UInt8, g: UInt8, b: UInt8, a: UInt8 = 255) {
        self.r = r; self.g = g; self.b = b; self.a = a
    }
    /// Opaque black, the default ink colour.
    public static let black = RGBA8(r: 0, g: 0, b: 0)
}

/// The ink a stroke is drawn with.
public struct Ink: Hashable, Sendable {
    /// The tool that drew the stroke.
    public var tool: Tool
    /// The ink's colour.
    public var color: RGBA8
    /// Base width of the tool in 0.1 pt; each sample's radius is the drawn size.
    public var width: UInt16

    /// An ink; by default a black pen 2 pt wide (`width` is in 0.1 pt).
    public init(tool: Tool = .pen, color: RGBA8 = .black, width: UInt16 = 20) {
        self.tool = tool
        self.color = color
        self.width = width
    }
}
