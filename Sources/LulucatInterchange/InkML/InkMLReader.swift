// Imports W3C InkML (InkML 1.0, W3C Recommendation 2011): contexts, trace formats, brushes, traces.

import Foundation
import LulucatInk

/// Reads InkML into strokes.
///
/// What is understood (InkML 1.0 sections in brackets):
/// - `<traceFormat>` with `<channel>` and `<intermittentChannels>` [3.1]; the default format
///   (X, Y) when none is declared; formats given in `<context>`, `<inkSource>`, by
///   `traceFormatRef`, or the predefined `#DefaultTraceFormat`.
/// - Contexts [4]: in `<definitions>` and referenced by `contextRef` (traces, trace groups, other
///   contexts), or in the ink stream, where a `<context>` changes the current context and
///   inherits what it does not say from it; `brushRef`, `inkSourceRef`, `traceFormatRef`.
/// - Channels mapped to samples: X, Y (lengths, `orientation="-ve"` flips), T (time), F (force,
///   normalised by `min`/`max`), W (width: the radius is W/2), OA/OE (azimuth, elevation) or
///   OTx/OTy (tilts, converted to azimuth and altitude). Any other channel is dropped with one
///   warning per name. Units: m, cm, mm, in, pt, pc, px (96/in), himetric; s, ms; deg, rad.
///   An integer channel with a `resolution` channel property counts 1/resolution of the
///   property's unit. Without T, every sample has time 0; without F, pressure 1,000 (nominal);
///   without W, the radius is half the brush width.
/// - Trace values [3.2.1]: see `TraceParser` (`!`, `'`, `"`, `*`, `?`, `T`/`F`, `#hex`).
/// - `<traceGroup>` nesting with inherited `contextRef`/`brushRef`; `<traceView>` of a whole
///   trace or group (`from`/`to` ranges are skipped with a warning); `type="penUp"` traces are
///   skipped (hover, not ink); `continuation="middle|end"` traces are appended to the stroke of
///   their `priorRef`.
/// - `<brush>` [4.3] with `brushProperty` width (with units), color `#RRGGBB`, transparency
///   (0 opaque ... 255), `rasterOp="maskPen"` (a highlighter) and our own `tool`.
///
/// Not applied: canvas transforms, timestamps and `timeOffset` (a stroke's times are relative
/// to its first sample, so absolute times are not needed).
///
/// ```swift
/// let doc = try InkMLReader.read(try Data(contentsOf: url))
/// print(doc.strokes.count, doc.sampleCount, doc.warnings)
/// ```
public enum InkMLReader {
    public struct Limits: Sendable {
        /// Files above this size are refused before parsing.
        public var maxFileBytes = 256 << 20
        /// Points in all traces together.
        public var maxPoints = 10_000_000
        /// XML elements in the file.
        public var maxElements = 2_000_000
        public init() {}
    }

    /// - Throws: `InkMLError` with the line and column of the problem where there is one.
    public static func read(_ data: Data, limits: Limits = Limits()) throws(InkMLError) -> InkMLDocument {
        guard data.count <= limits.maxFileBytes else {
            throw InkMLError(.tooLarge, "the file is \(data.count) bytes, more than the limit of \(limits.maxFileBytes)")
        }
        let root = try XMLTree.parse(data, maxElements: limits.maxElements)
        var interpreter = InkMLInterpreter(root: root, limits: limits)
        try interpreter.run()
        return interpreter.document()
    }
}

/// The walk over the element tree that turns traces into strokes.
struct InkMLInterpreter {
    /// What a context resolves to.
    struct Context {
        var format: TraceFormat = .default
        var brush: Brush = Brush()
    }

    /// The ink a brush gives, and whether it named a width.
    struct Brush {
        var ink = Ink()
    }

    let root: XMLElementNode
    let limits: InkMLReader.Limits
    private var elementsByID: [String: XMLElementNode] = [:]
    private var contextCache: [String: Context] = [:]
    private var brushCache: [String: Brush] = [:]
    private var strokes: [Stroke] = []
    private var strokeIndexByTraceID: [String: Int] = [:]
    private var warnings: [String] = []
    private var warned: Set<String> = []
    /// Traces of the ink stream (outside `<definitions>`): drawn where they stand, so a
    /// `<traceView>` that names them (as segmentation annotations do) must not draw them again.
    private var streamTraces: Set<ObjectIdentifier> = []
    /// Traces and groups already drawn through a view: each is drawn once, which also keeps
    /// views of groups holding views from multiplying without end.
    private var viewed: Set<ObjectIdentifier> = []
    private var totalPoints = 0
    /// How many references are being followed at once: chains of contexts or brushes are
    /// resolved recursively, so their length is bounded.
    private var referenceDepth = 0
    static let maxReferenceDepth = 64
    private var skippedPenUp = 0

    init(root: XMLElementNode, limits: InkMLReader.Limits) {
        self.root = root
        self.limits = limits
    }

    mutating func run() throws(InkMLError) {
        index(root)
        collectStreamTraces(root.children)
        var current = Context()
        try walk(root.children, context: &current, groupContext: nil, groupBrush: nil, depth: 0)
        if skippedPenUp > 0 {
            warn("penUp", "\(skippedPenUp) pen-up trace(s) (the pen hovering, not ink) skipped")
        }
    }

    func document() -> InkMLDocument {
        var size = QuantizedSize.letter
        for s in strokes {
            guard let b = s.bounds else { continue }
            size.width = max(size.width, Int32(clamping: Int64(b.x) + Int64(b.width)))
            size.height = max(size.height, Int32(clamping: Int64(b.y) + Int64(b.height)))
        }
        return InkMLDocument(page: PageContent(canvasSize: size, elements: strokes.map { .stroke($0) }),
                             warnings: warnings)
    }

    // MARK: - Walking the ink stream

    private mutating func index(_ node: XMLElementNode) {
        for child in node.children {
            if let id = child.id {
                if elementsByID[id] == nil { elementsByID[id] = child } else {
                    warn("dup-\(id)", "the id \"\(id)\" is defined twice (line \(child.line)); the first definition is used")
                }
            }
            index(child)
        }
    }

    private mutating func collectStreamTraces(_ nodes: [XMLElementNode]) {
        for node in nodes {
            if node.name == "trace" { streamTraces.insert(ObjectIdentifier(node)) }
            if node.name == "traceGroup" { collectStreamTraces(node.children) }
        }
    }

    private mutating func walk(_ nodes: [XMLElementNode], context current: inout Context,
                               groupContext: Context?, groupBrush: Brush?, depth: Int,
                               viaView: Bool = false) throws(InkMLError) {
        guard depth < 256 else {
            throw InkMLError(.tooLarge, line: nodes.first?.line, "trace groups nested more than 256 deep")
        }
        for node in nodes {
            switch node.name {
            case "context":
                // A context in the ink stream becomes the current one.
                current = try resolveContext(node, base: current)
            case "traceFormat":
                // A trace format standing alone in the ink stream (recognition corpora write one
                // before their traces) sets the current format, as a context holding it would.
                current.format = try traceFormat(node)
            case "trace":
                if viaView && streamTraces.contains(ObjectIdentifier(node)) { continue }
                let (context, brush) = try effective(node, current: current, groupContext: groupContext, groupBrush: groupBrush)
                try importTrace(node, context: context, brush: brush)
            case "traceGroup":
                let (context, brush) = try effective(node, current: current, groupContext: groupContext, groupBrush: groupBrush)
                var inner = current
                try walk(node.children, context: &inner, groupContext: context, groupBrush: brush, depth: depth + 1,
                         viaView: viaView)
            case "traceView":
                try importView(node, current: current, groupContext: groupContext, groupBrush: groupBrush, depth: depth)
            default:
                // definitions (indexed already), annotations, timestamps, canvases: nothing to draw.
                break
            }
        }
    }

    /// The context and brush for a trace or group: its own references, else its group's, else
    /// the current context.
    private mutating func effective(_ node: XMLElementNode, current: Context, groupContext: Context?,
                                    groupBrush: Brush?) throws(InkMLError) -> (Context, Brush) {
        var context = groupContext ?? current
        if let ref = node.attribute("contextRef") {
            context = try contextByReference(ref, at: node)
        }
        var brush = (node.attribute("contextRef") == nil ? groupBrush : nil) ?? context.brush
        if let ref = node.attribute("brushRef") {
            brush = try brushByReference(ref, at: node)
        }
        return (context, brush)
    }

    private mutating func importView(_ node: XMLElementNode, current: Context, groupContext: Context?,
                                     groupBrush: Brush?, depth: Int) throws(InkMLError) {
        guard let ref = node.attribute("traceDataRef") else { return }
        if node.attribute("from") != nil || node.attribute("to") != nil {
            warn("view-range", "traceView with from/to ranges (line \(node.line)) is not supported; skipped")
            return
        }
        let target = try lookup(ref, at: node)
        guard target.name == "trace" || target.name == "traceGroup" else {
            throw InkMLError(.invalidReference, line: node.line, column: node.column,
                             "traceDataRef \"\(ref)\" names a <\(target.name)>, not a trace or trace group")
        }
        guard viewed.insert(ObjectIdentifier(target)).inserted else {
            warn("view-again", "a trace or group viewed more than once is drawn once")
            return
        }
        var inner = current
        try walk([target], context: &inner, groupContext: groupContext, groupBrush: groupBrush, depth: depth + 1,
                 viaView: true)
    }

    // MARK: - Contexts, formats, brushes

    private mutating func contextByReference(_ ref: String, at node: XMLElementNode) throws(InkMLError) -> Context {
        if ref == "#DefaultContext" { return Context() }
        let target = try lookup(ref, at: node, expecting: "context")
        let id = target.id ?? ref
        if let cached = contextCache[id] { return cached }
        try enterReference(at: node)
        defer { referenceDepth -= 1 }
        // A cycle of contextRefs ends here: the placeholder is what a context referring to
        // itself inherits.
        contextCache[id] = Context()
        let resolved = try resolveContext(target, base: Context())
        contextCache[id] = resolved
        return resolved
    }

    private mutating func resolveContext(_ node: XMLElementNode, base: Context) throws(InkMLError) -> Context {
        var context = base
        if let ref = node.attribute("contextRef") {
            context = try contextByReference(ref, at: node)
        }
        // The ink source first: its trace format and channel properties.
        var properties: [String: (Double, String?)] = [:]
        var source: XMLElementNode?
        if let ref = node.attribute("inkSourceRef") { source = try lookup(ref, at: node, expecting: "inkSource") }
        if let child = node.child(named: "inkSource") { source = child }
        if let source {
            properties = channelProperties(of: source)
            if let tf = source.child(named: "traceFormat") { context.format = try traceFormat(tf) }
            else if let ref = source.attribute("traceFormatRef") { context.format = try traceFormatByReference(ref, at: source) }
        }
        if let ref = node.attribute("traceFormatRef") { context.format = try traceFormatByReference(ref, at: node) }
        if let tf = node.child(named: "traceFormat") { context.format = try traceFormat(tf) }
        if !properties.isEmpty {
            for i in context.format.channels.indices {
                if let (value, units) = properties[context.format.channels[i].name] {
                    context.format.channels[i].resolution = value
                    context.format.channels[i].resolutionUnits = units
                }
            }
        }
        if let ref = node.attribute("brushRef") { context.brush = try brushByReference(ref, at: node) }
        if let b = node.child(named: "brush") { context.brush = try resolveBrush(b) }
        if node.child(named: "canvasTransform") != nil || node.attribute("canvasTransformRef") != nil {
            warn("canvasTransform", "canvas transforms are not applied; coordinates are read as written")
        }
        return context
    }

    private func channelProperties(of source: XMLElementNode) -> [String: (Double, String?)] {
        var result: [String: (Double, String?)] = [:]
        for group in source.children(named: "channelProperties") {
            for p in group.children(named: "channelProperty") where p.attribute("name") == "resolution" {
                if let channel = p.attribute("channel"), let v = p.attribute("value").flatMap(InkMLNumber.parse) {
                    result[channel] = (v, p.attribute("units"))
                }
            }
        }
        return result
    }

    private mutating func traceFormatByReference(_ ref: String, at node: XMLElementNode) throws(InkMLError) -> TraceFormat {
        if ref == "#DefaultTraceFormat" { return .default }
        return try traceFormat(try lookup(ref, at: node, expecting: "traceFormat"))
    }

    private func traceFormat(_ node: XMLElementNode) throws(InkMLError) -> TraceFormat {
        var channels: [ChannelSpec] = []
        func add(_ c: XMLElementNode, intermittent: Bool) throws(InkMLError) {
            guard let name = c.attribute("name"), !name.isEmpty else {
                throw InkMLError(.invalidTrace, line: c.line, column: c.column, "a <channel> has no name")
            }
            var spec = ChannelSpec(name: name)
            if let t = c.attribute("type") {
                guard let type = ChannelSpec.ValueType(rawValue: t) else {
                    throw InkMLError(.invalidTrace, line: c.line, column: c.column, "channel \(name) has the unknown type \"\(t)\"")
                }
                spec.type = type
            }
            spec.units = c.attribute("units")
            spec.min = c.attribute("min").flatMap(InkMLNumber.parse)
            spec.max = c.attribute("max").flatMap(InkMLNumber.parse)
            spec.negative = c.attribute("orientation") == "-ve"
            spec.defaultValue = c.attribute("default").flatMap { $0 == "T" ? 1 : $0 == "F" ? 0 : InkMLNumber.parse($0) }
            spec.intermittent = intermittent
            channels.append(spec)
        }
        for child in node.children {
            if child.name == "channel" { try add(child, intermittent: false) }
            if child.name == "intermittentChannels" {
                for c in child.children(named: "channel") { try add(c, intermittent: true) }
            }
        }
        // <traceFormat/> with no channels means the default format.
        return channels.isEmpty ? .default : TraceFormat(channels: channels)
    }

    private mutating func brushByReference(_ ref: String, at node: XMLElementNode) throws(InkMLError) -> Brush {
        if ref == "#DefaultBrush" { return Brush() }
        let target = try lookup(ref, at: node, expecting: "brush")
        let id = target.id ?? ref
        if let cached = brushCache[id] { return cached }
        try enterReference(at: node)
        defer { referenceDepth -= 1 }
        brushCache[id] = Brush()
        let brush = try resolveBrush(target)
        brushCache[id] = brush
        return brush
    }

    private mutating func resolveBrush(_ node: XMLElementNode) throws(InkMLError) -> Brush {
        var brush = Brush()
        if let ref = node.attribute("brushRef") { brush = try brushByReference(ref, at: node) }
        for p in node.children(named: "brushProperty") {
            guard let name = p.attribute("name"), let value = p.attribute("value") else { continue }
            switch name {
            case "width":
                let unit = p.attribute("units") ?? "pt"
                if let v = InkMLNumber.parse(value, in: 0...1e6), let f = InkMLUnits.pointsPer(unit) {
                    brush.ink.width = Quantize.length(v * f)
                } else {
                    warn("brush-width-\(unit)", "a brush width in \"\(unit)\" could not be read; the default width is used")
                }
            case "color":
                if let c = Self.color(value) {
                    brush.ink.color.r = c.r; brush.ink.color.g = c.g; brush.ink.color.b = c.b
                } else {
                    warn("brush-color-\(value)", "the brush colour \"\(value)\" is not #RRGGBB; black is used")
                }
            case "transparency":
                if let t = InkMLNumber.parse(value) {
                    brush.ink.color.a = UInt8(255 - min(max(t.rounded(), 0), 255))
                } else {
                    warn("brush-transparency-\(value)", "the brush transparency \"\(value)\" is not a number; opaque is used")
                }
            case "rasterOp":
                if value == "maskPen" { brush.ink.tool = .highlighter }
            case "tool":
                if let tool = Tool(name: value) { brush.ink.tool = tool }
            default:
                break
            }
        }
        return brush
    }

    static func color(_ s: String) -> RGBA8? {
        guard s.hasPrefix("#"), s.count == 7, let v = UInt32(s.dropFirst(), radix: 16) else { return nil }
        return RGBA8(r: UInt8(v >> 16 & 0xFF), g: UInt8(v >> 8 & 0xFF), b: UInt8(v & 0xFF))
    }

    /// The element a reference names: `#id` (or a bare `id`); references into other files are
    /// refused.
    private func lookup(_ ref: String, at node: XMLElementNode, expecting name: String? = nil) throws(InkMLError) -> XMLElementNode {
        var id = Substring(ref.trimmingCharacters(in: .whitespacesAndNewlines))
        if id.hasPrefix("#") { id = id.dropFirst() } else if id.contains("#") || id.contains("/") {
            throw InkMLError(.unsupported, line: node.line, column: node.column,
                             "the reference \"\(ref)\" points into another file, which is not supported")
        }
        guard let target = elementsByID[String(id)] else {
            throw InkMLError(.invalidReference, line: node.line, column: node.column,
                             "<\(node.name)> refers to \"\(ref)\", which is not defined in the file")
        }
        if let name, target.name != name {
            throw InkMLError(.invalidReference, line: node.line, column: node.column,
                             "<\(node.name)> refers to \"\(ref)\" as a \(name), but it is a <\(target.name)>")
        }
        return target
    }

    private mutating func enterReference(at node: XMLElementNode) throws(InkMLError) {
        guard referenceDepth < Self.maxReferenceDepth else {
            throw InkMLError(.tooLarge, line: node.line, column: node.column,
                             "contexts or brushes refer to one another more than \(Self.maxReferenceDepth) deep")
        }
        referenceDepth += 1
    }

    /// Says `message` once per `key`; past 100 warnings a last one says the rest were not listed.
    private mutating func warn(_ key: String, _ message: String) {
        guard warnings.count <= Self.maxWarnings, warned.insert(key).inserted else { return }
        warnings.append(warnings.count < Self.maxWarnings ? message : "more warnings were not listed")
    }

    static let maxWarnings = 100

    // MARK: - Traces

    private mutating func importTrace(_ node: XMLElementNode, context: Context, brush: Brush) throws(InkMLError) {
        let type = node.attribute("type") ?? "penDown"
        if type == "penUp" { skippedPenUp += 1; return }
        let format = context.format
        var text = node.text
        let remaining = limits.maxPoints - totalPoints
        let parsed: TraceParser
        let result: Result<TraceParser, TraceParser.Failure> = text.withUTF8 { utf8 in
            Result { () throws(TraceParser.Failure) in
                try TraceParser.parse(UnsafeRawBufferPointer(utf8), format: format,
                                      maxPoints: min(remaining, PageFile.maxSamplesPerStroke))
            }
        }
        switch result {
        case .success(let p):
            parsed = p
        case .failure(let error):
            let (line, column) = Self.position(of: error.offset, in: text, startLine: node.line, startColumn: node.column)
            let name = node.id.map { "trace \"\($0)\"" } ?? "a trace"
            throw InkMLError(error.tooMany ? .tooLarge : .invalidTrace, line: line, column: column, "\(name): \(error.message)")
        }
        let count = parsed.pointCount
        totalPoints += count
        if count == 0 {
            warn("empty-trace", "trace(s) without points skipped (first at line \(node.line))")
            return
        }
        var mapper = try ChannelMapper(format: format, ink: brush.ink, at: node)
        let stroke = try mapper.stroke(from: parsed, at: node)
        for (key, message) in mapper.warnings { warn(key, message) }

        // A continuation joins the stroke its priorRef names.
        let continuation = node.attribute("continuation")
        if continuation == "middle" || continuation == "end", let prior = node.attribute("priorRef") {
            let priorID = prior.hasPrefix("#") ? String(prior.dropFirst()) : prior
            if let index = strokeIndexByTraceID[priorID] {
                strokes[index].append(continuing: stroke)
                if let id = node.id { strokeIndexByTraceID[id] = index }
                return
            }
            warn("continuation", "a continued trace whose priorRef is not an imported trace is kept as its own stroke")
        }
        strokes.append(stroke)
        if let id = node.id { strokeIndexByTraceID[id] = strokes.count - 1 }
    }

    /// Line and column of a byte offset in a trace's text, counted from where the parser saw
    /// the trace's start tag end.
    static func position(of offset: Int, in text: String, startLine: Int, startColumn: Int) -> (Int, Int) {
        var line = startLine, column = startColumn
        for (i, byte) in text.utf8.enumerated() {
            if i >= offset { break }
            if byte == 0x0A { line += 1; column = 1 } else { column += 1 }
        }
        return (line, column)
    }
}

extension Stroke {
    /// Appends a continuation's samples, its times shifted onto this stroke's clock when it has
    /// times of its own.
    mutating func append(continuing other: Stroke) {
        let shift = samples.last?.time ?? 0
        let zeroTimes = other.samples.allSatisfy { $0.time == 0 }
        samples += other.samples.map { s in
            var s = s
            if !zeroTimes { s.time = s.time &+ shift }
            return s
        }
        func merge(_ a: [UInt16]?, _ b: [UInt16]?) -> [UInt16]? {
            guard let a, let b else { return nil }
            return a + b
        }
        azimuth = merge(azimuth, other.azimuth)
        altitude = merge(altitude, other.altitude)
        opacity = merge(opacity, other.opacity)
    }
}
