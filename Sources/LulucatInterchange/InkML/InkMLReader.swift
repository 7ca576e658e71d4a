// Imports W3C InkML (InkML 1.0, W3C Recommendation 2011): contexts, trace formats, brushes, traces.

import Foundation
import LulucatInk
import LulucatStore

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
///   property's unit. Without T, times come from the ink source's sample rate, else the
///   trace's `duration`, else are 0; without F, pressure 1,000 (nominal); without W, the
///   radius is half the brush width.
/// - Trace values [3.2.1]: see `TraceParser` (`!`, `'`, `"`, `*`, `?`, `T`/`F`, `#hex`).
/// - `<traceGroup>` nesting with inherited `contextRef`/`brushRef`; `<traceView>` of a whole
///   trace or group, or of the points `from`/`to` select; `type="penUp"` traces are
///   skipped (hover, not ink); `continuation="middle|end"` traces are appended to the stroke of
///   their `priorRef`.
/// - `<brush>` [4.3] with `brushProperty` width (with units), color `#RRGGBB`, transparency
///   (0 opaque ... 255), `rasterOp="maskPen"` (a highlighter) and our own `tool`.
///
/// - Canvas transforms: affine, product and referenced mappings; lookup and MathML mappings
///   are reported and not applied.
/// - Time: timestamps (`time`, `timeString`, `timestampRef` + `timeOffset`), a trace's
///   `timeOffset`, T's `respectTo`: stroke start times (`InkMLDocument.strokeStartTimes`) and
///   the gap before a continuation (docs/inkml.md, "Time").
///
/// ```swift
/// let doc = try InkMLReader.read(try Data(contentsOf: url))
/// print(doc.strokes.count, doc.sampleCount, doc.warnings)
/// ```
public enum InkMLReader {
    /// Bounds on what one file may make the reader hold: generous for real ink, fatal for a file
    /// made to exhaust memory. A file over a bound is refused with `InkMLError.Kind.tooLarge`.
    public struct Limits: Sendable {
        /// Files above this size are refused before parsing.
        public var maxFileBytes = 256 << 20
        /// Points in all traces together.
        public var maxPoints = 10_000_000
        /// XML elements in the file.
        public var maxElements = 2_000_000
        /// The default bounds: 256 MiB, 10 million points, 2 million elements.
        public init() {}
    }

    /// Reads an InkML file (untrusted input) as the strokes of one page, or of several when it
    /// holds the page groups `InkMLWriter.write(pages:)` writes. Positions are quantized to
    /// 0.1 pt; what the model cannot keep is dropped and said once in the warnings.
    ///
    /// - Parameters:
    ///   - data: the file's bytes.
    ///   - limits: bounds on the file's size, points and elements.
    ///   - progress: called as the traces of the ink stream are read: `completed` of `total`
    ///     traces (`total` counted once the file is parsed, so the first report, 0 of `total`,
    ///     comes after the parse, which takes about a third of the time of a large file). It runs
    ///     on the calling thread, between traces, where cancellation is also checked.
    /// - Throws: `InkMLError` with the line and column of the problem where there is one.
    public static func read(_ data: Data, limits: Limits = Limits(),
                            progress: ((OperationProgress) -> Void)? = nil) throws(InkMLError) -> InkMLDocument {
        guard data.count <= limits.maxFileBytes else {
            throw InkMLError(.tooLarge, "the file is \(data.count) bytes, more than the limit of \(limits.maxFileBytes)")
        }
        let parsed = try XMLTree.parse(data, maxElements: limits.maxElements)
        var interpreter = InkMLInterpreter(root: parsed.ink, limits: limits)
        interpreter.progress = progress
        if !parsed.undeclaredPrefixes.isEmpty {
            let list = parsed.undeclaredPrefixes.map { "\($0):" }.joined(separator: ", ")
            interpreter.preface("the file uses the namespace prefix(es) \(list) without declaring them; inkml: is read as InkML, any other as a foreign namespace")
        }
        interpreter.microsoftInk = XMLTree.offset(of: Array("schemas.microsoft.com/ink".utf8), in: data) != nil
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
        /// The format is the ink source's (the digitizer's), not one the context gives itself.
        var formatFromSource = false
        /// The canvas transform of the context, on raw X and Y.
        var transform: PlaneMap?
        /// Samples per second of the ink source (`<sampleRate>`).
        var sampleRate: Double?
        /// Points per unit of the context's `<canvas>` X and Y, when it gives them lengths: the
        /// units of the trace values once mapped to the canvas.
        var canvasScale: (x: Double, y: Double)?
        /// The context's `<timestamp>`: milliseconds since 1970-01-01T00:00:00Z.
        var timestamp: Double?
    }

    /// The ink a brush gives, and whether it named a width.
    struct Brush {
        var ink = Ink()
        /// The tip as the brush gave it (points; `ink.width` is the larger side).
        var widthPoints: Double?
        var height: Double?
        /// `ellipse` (the default), `rectangle`, or what the file says.
        var tip: String?
        /// The brush (or one it inherits) names our tool.
        var toolGiven = false
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
    /// Items visited by views with ranges (which may name one another): bounded.
    private var selectionSteps = 0
    /// The file is from Microsoft's ink serializer (its namespace appears in it).
    var microsoftInk = false
    /// Strokes read from unitless X and Y: their parts (a continuation adds one), fitted to the
    /// page together when the walk is done. `strokes[i]` is a placeholder until then.
    private var unitlessParts: [Int: [RawStroke]] = [:]
    /// Index into `strokes` where each of our page groups starts (empty: one page).
    private var pageStarts: [Int] = []
    private var pageCanvases: [QuantizedSize?] = []
    /// When each stroke began (index into `strokes`): milliseconds, since 1970 (UTC) when
    /// `anchored` (a timestamp gives the clock), else on the file's own clock (T values or
    /// `timeOffset`s without a timestamp).
    private var strokeStarts: [Int: (ms: Double, anchored: Bool)] = [:]
    private var timestampCache: [ObjectIdentifier: Double?] = [:]
    /// Told of each trace of the ink stream read (`InkMLReader.read`'s `progress`).
    var progress: ((OperationProgress) -> Void)?
    private var streamTracesRead = 0

    init(root: XMLElementNode, limits: InkMLReader.Limits) {
        self.root = root
        self.limits = limits
    }

    mutating func run() throws(InkMLError) {
        index(root)
        collectStreamTraces(root.children)
        progress?(OperationProgress(.importing, completed: 0, total: streamTraces.count))
        var current = Context()
        try walk(root.children, context: &current, groupContext: nil, groupBrush: nil, depth: 0)
        if skippedPenUp > 0 {
            warn("penUp", "\(skippedPenUp) pen-up trace(s) (the pen hovering, not ink) skipped")
        }
    }

    mutating func document() -> InkMLDocument {
        finishUnitless()
        var pages: [PageContent] = []
        let starts = pageStarts.isEmpty ? [0] : pageStarts
        for (n, start) in starts.enumerated() {
            let end = n + 1 < starts.count ? starts[n + 1] : strokes.count
            var slice = Array(strokes[start..<end])
            let declared = n < pageCanvases.count ? pageCanvases[n] : nil
            var size = declared ?? QuantizedSize.letter
            if declared == nil { placeOnPage(&slice, page: n + 1, of: starts.count) }
            // A page too small for its ink grows: to the ink when the file declared it, with a
            // margin when we chose it.
            // The far edges of all the ink first: grown stroke by stroke, a page kept less than
            // the margin beyond a stroke that ended a little further than the one that grew it.
            let margin: Int64 = declared == nil ? Self.pageMargin : 0
            var right = Int64.min, bottom = Int64.min
            for s in slice {
                guard let b = s.bounds else { continue }
                right = max(right, Int64(b.x) + Int64(b.width))
                bottom = max(bottom, Int64(b.y) + Int64(b.height))
            }
            if right > Int64(size.width) { size.width = Int32(clamping: right + margin) }
            if bottom > Int64(size.height) { size.height = Int32(clamping: bottom + margin) }
            pages.append(PageContent(canvasSize: size, elements: slice.map { .stroke($0) }))
        }
        let startTimes = strokes.indices.map { i -> Double? in
            guard let s = strokeStarts[i], s.anchored else { return nil }
            return s.ms
        }
        return InkMLDocument(pages: pages, warnings: warnings, strokeStartTimes: startTimes)
    }

    /// The margin kept around ink on a page the file did not declare: 36 pt, in 0.1 pt.
    static let pageMargin: Int64 = 360

    /// Puts the ink of a page the file did not declare on the page, all of it by one offset, so
    /// that the shapes and their places relative to each other do not change (said in a
    /// warning):
    /// - where the pen went left of or above the origin (a producer whose origin is the page's
    ///   centre, as reMarkable's, a transform that turns the page, as IAMonDo's, or a canvas moved
    ///   by its owner), the ink is moved right or down until that edge, widths included, lies
    ///   `pageMargin` inside the page;
    /// - where the pen stayed on the page but a stroke along its edge passes it by its width (the
    ///   W3C example, Word), the ink is moved by that width only, so that it keeps its place on
    ///   the page and shows whole.
    private mutating func placeOnPage(_ slice: inout [Stroke], page: Int, of pages: Int) {
        guard let pen = slice.lazy.compactMap(\.centreBounds).reduce(nil, { $0?.union($1) ?? $1 }),
              let ink = slice.lazy.compactMap(\.bounds).reduce(nil, { $0?.union($1) ?? $1 }) else { return }
        let dx = pen.x < 0 ? Self.pageMargin - Int64(ink.x) : ink.x < 0 ? -Int64(ink.x) : 0
        let dy = pen.y < 0 ? Self.pageMargin - Int64(ink.y) : ink.y < 0 ? -Int64(ink.y) : 0
        guard dx != 0 || dy != 0 else { return }
        // Every moved sample, its width included, stays in the model's range; ink too large for
        // that is left where it is (verify says it lies outside the page). The far edges come
        // from the samples: a union of bounds is clamped to the model's range.
        var farX = Int64.min, farY = Int64.min
        for stroke in slice {
            for s in stroke.samples {
                farX = max(farX, Int64(s.x) + Int64(s.radius))
                farY = max(farY, Int64(s.y) + Int64(s.radius))
            }
        }
        guard farX + dx <= Int64(Int32.max), farY + dy <= Int64(Int32.max) else { return }
        for i in slice.indices {
            for j in slice[i].samples.indices {
                slice[i].samples[j].x = Int32(Int64(slice[i].samples[j].x) + dx)
                slice[i].samples[j].y = Int32(Int64(slice[i].samples[j].y) + dy)
            }
        }
        let which = pages > 1 ? "page \(page): " : ""
        warn("offpage-\(page)", "\(which)the ink reached left of or above the page; it was moved \(InkMLNumber.format(Double(dx) / 10)) pt right and \(InkMLNumber.format(Double(dy) / 10)) pt down, all of it together")
    }

    /// Fits the strokes whose X and Y have no units to the page, all by one scale and offset
    /// (docs/inkml.md, "Unitless coordinates"), and puts them in their places.
    private mutating func finishUnitless() {
        guard !unitlessParts.isEmpty else { return }
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        for parts in unitlessParts.values {
            for p in parts {
                for v in p.x where v.isFinite { minX = min(minX, v); maxX = max(maxX, v) }
                for v in p.y where v.isFinite { minY = min(minY, v); maxY = max(maxY, v) }
            }
        }
        var fit = PlaneMap.identity
        if minX.isFinite, minY.isFinite {
            let (fitted, message) = Self.unitlessFit(minX: minX, minY: minY, maxX: maxX, maxY: maxY)
            fit = fitted
            warn("unitless", message)
        }
        for (index, parts) in unitlessParts {
            var stroke = parts[0].stroke(fit: fit)
            for p in parts.dropFirst() { stroke.append(continuing: p.stroke(fit: fit), after: p.continuationOffset) }
            strokes[index] = stroke
        }
        unitlessParts = [:]
    }

    /// The page a sensible reading of unitless ink gives: read as points when that puts it on
    /// a page at a legible size (its larger side 10 pt or more, the whole within 540 x 720 pt),
    /// else scaled to fit 540 x 720 pt; moved to 36 pt from the top left corner when it would
    /// not lie on a US Letter page.
    static func unitlessFit(minX: Double, minY: Double, maxX: Double, maxY: Double) -> (PlaneMap, String) {
        let w = maxX - minX, h = maxY - minY
        let box = (width: 540.0, height: 720.0)
        var scale = 1.0
        if !(max(w, h) >= 10 && w <= box.width && h <= box.height) {
            let sx = w > 0 ? box.width / w : .infinity, sy = h > 0 ? box.height / h : .infinity
            let s = min(sx, sy)
            if s.isFinite && s > 0 { scale = s }
        }
        var dx = 0.0, dy = 0.0
        let onPage = minX * scale >= 0 && minY * scale >= 0 && maxX * scale <= 612 && maxY * scale <= 792
        if !onPage { dx = 36 - minX * scale; dy = 36 - minY * scale }
        let fit = PlaneMap(a: scale, c: dx, e: scale, f: dy)
        guard fit.isFinite else { return (.identity, "X and Y have no units; they are read as points") }
        let size = "\(InkMLNumber.format(w)) x \(InkMLNumber.format(h)) units"
        if scale == 1 && dx == 0 && dy == 0 {
            return (fit, "X and Y have no units; they are read as points (the ink spans \(size))")
        }
        return (fit, "X and Y have no units; the ink (\(size)) is fitted to the page at \(InkMLNumber.format(scale)) pt a unit")
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
                // A large file takes seconds: a cancelled import (Ctrl-C in lnote) stops here.
                if Task.isCancelled { throw InkMLError(.cancelled, "the import was cancelled") }
                let (context, brush) = try effective(node, current: current, groupContext: groupContext, groupBrush: groupBrush)
                try importTrace(node, context: context, brush: brush)
                if !viaView, let progress {
                    streamTracesRead += 1
                    progress(OperationProgress(.importing, completed: streamTracesRead, total: streamTraces.count))
                }
            case "traceGroup":
                if depth == 0 && !viaView, let page = node.children.first(where: { $0.name == "annotation" && $0.attribute("type") == "page" }) {
                    _ = page
                    // One of our pages (docs/inkml.md, "Several pages").
                    if pageStarts.isEmpty && !strokes.isEmpty { pageStarts.append(0); pageCanvases.append(nil) }
                    pageStarts.append(strokes.count)
                    pageCanvases.append(Self.canvas(of: node))
                }
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

    /// `<annotation type="canvas">W H</annotation>` of a page group: the canvas in points.
    static func canvas(of group: XMLElementNode) -> QuantizedSize? {
        guard let a = group.children.first(where: { $0.name == "annotation" && $0.attribute("type") == "canvas" }) else { return nil }
        let parts = a.text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
        // From 1 pt to the largest canvas the model holds (Int32 tenths of a point).
        guard parts.count == 2, let w = InkMLNumber.parse(String(parts[0]), in: 1...214_748_364.7),
              let h = InkMLNumber.parse(String(parts[1]), in: 1...214_748_364.7) else { return nil }
        return QuantizedSize(width: Quantize.position(w), height: Quantize.position(h))
    }

    private mutating func importView(_ node: XMLElementNode, current: Context, groupContext: Context?,
                                     groupBrush: Brush?, depth: Int) throws(InkMLError) {
        guard let ref = node.attribute("traceDataRef") else { return }
        let target = try lookup(ref, at: node)
        if node.attribute("from") != nil || node.attribute("to") != nil {
            try importRange(of: target, view: node, current: current, groupContext: groupContext,
                            groupBrush: groupBrush, depth: depth)
            return
        }
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

    /// A view's `from`/`to` (InkML 1.0 §5.4): colon-separated 1-based indices, the first into
    /// the target (a point of a trace, a child of a group), the rest into that child; both
    /// ends included; a missing end is the target's start or end. The points selected are
    /// drawn as strokes of their own, whether or not the trace is drawn elsewhere.
    private mutating func importRange(of target: XMLElementNode, view: XMLElementNode, current: Context,
                                      groupContext: Context?, groupBrush: Brush?, depth: Int) throws(InkMLError) {
        func path(_ name: String) throws(InkMLError) -> [Int]? {
            guard let v = view.attribute(name) else { return nil }
            var out: [Int] = []
            for part in v.split(separator: ":", omittingEmptySubsequences: false) {
                guard let n = Int(part.trimmingCharacters(in: .whitespaces)), n >= 1, n <= 100_000_000 else {
                    throw InkMLError(.invalidReference, line: view.line, column: view.column,
                                     "the traceView \(name)=\"\(v)\" is not a list of positive indices")
                }
                out.append(n - 1)
            }
            return out
        }
        let from = try path("from"), to = try path("to")
        try select(target, from: from ?? [], to: to ?? [], current: current, groupContext: groupContext,
                   groupBrush: groupBrush, depth: depth + 1)
    }

    private mutating func select(_ node: XMLElementNode, from: [Int], to: [Int], current: Context,
                                 groupContext: Context?, groupBrush: Brush?, depth: Int) throws(InkMLError) {
        guard depth < 256 else {
            throw InkMLError(.tooLarge, line: node.line, "trace views nested more than 256 deep")
        }
        selectionSteps += 1
        guard selectionSteps <= 1_000_000 else {
            throw InkMLError(.tooLarge, line: node.line, "trace views with ranges select more than 1,000,000 items")
        }
        switch node.name {
        case "trace":
            let (context, brush) = try effective(node, current: current, groupContext: groupContext, groupBrush: groupBrush)
            let lo = from.first ?? 0, hi = to.first ?? Int.max
            guard lo <= hi else { return }
            try importTrace(node, context: context, brush: brush, points: lo...hi)
        case "traceGroup":
            let (context, brush) = try effective(node, current: current, groupContext: groupContext, groupBrush: groupBrush)
            let items = node.children.filter { $0.name == "trace" || $0.name == "traceGroup" || $0.name == "traceView" }
            guard !items.isEmpty else { return }
            let lo = from.first ?? 0, hi = min(to.first ?? items.count - 1, items.count - 1)
            guard lo <= hi else { return }
            for i in lo...hi {
                let f = i == lo ? Array(from.dropFirst()) : [], t = i == hi ? Array(to.dropFirst()) : []
                let item = items[i]
                if item.name == "traceView" {
                    guard let ref = item.attribute("traceDataRef") else { continue }
                    try select(try lookup(ref, at: item), from: f, to: t, current: current, groupContext: context,
                               groupBrush: brush, depth: depth + 1)
                } else {
                    try select(item, from: f, to: t, current: current, groupContext: context, groupBrush: brush, depth: depth + 1)
                }
            }
        default:
            throw InkMLError(.invalidReference, line: node.line, column: node.column,
                             "a traceView names a <\(node.name)>, not a trace or trace group")
        }
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
            if let tf = source.child(named: "traceFormat") { context.format = try traceFormat(tf); context.formatFromSource = true }
            else if let ref = source.attribute("traceFormatRef") { context.format = try traceFormatByReference(ref, at: source); context.formatFromSource = true }
            if let rate = source.child(named: "sampleRate") {
                if let v = rate.attribute("value").flatMap({ InkMLNumber.parse($0, in: 0.001...1_000_000) }) {
                    context.sampleRate = v
                } else {
                    warn("sampleRate", "a sample rate (line \(rate.line)) that is not a positive number is ignored")
                }
            }
        }
        if let ref = node.attribute("traceFormatRef") { context.format = try traceFormatByReference(ref, at: node); context.formatFromSource = false }
        if let tf = node.child(named: "traceFormat") { context.format = try traceFormat(tf); context.formatFromSource = false }
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
        if let ts = node.child(named: "timestamp") { context.timestamp = timestamp(ts, depth: 0) }
        else if let ref = node.attribute("timestampRef") {
            if let ts = try? lookup(ref, at: node, expecting: "timestamp") { context.timestamp = timestamp(ts, depth: 0) }
            else { warn("timestampRef-\(ref)", "a context refers to the timestamp \"\(ref)\", which is not in the file; its times are not anchored") }
        }
        var transformNode = node.child(named: "canvasTransform")
        if transformNode == nil, let ref = node.attribute("canvasTransformRef") {
            transformNode = try lookup(ref, at: node, expecting: "canvasTransform")
        }
        if let transformNode { context.transform = canvasTransform(transformNode) }
        var canvasNode = node.child(named: "canvas")
        if canvasNode == nil, let ref = node.attribute("canvasRef") {
            canvasNode = try lookup(ref, at: node, expecting: "canvas")
        }
        if let canvasNode {
            var format: TraceFormat?
            if let tf = canvasNode.child(named: "traceFormat") { format = try traceFormat(tf) }
            else if let ref = canvasNode.attribute("traceFormatRef") { format = try traceFormatByReference(ref, at: canvasNode) }
            if let format, let x = format.index(of: "X"), let y = format.index(of: "Y"),
               let sx = format.channels[x].factor(to: InkMLUnits.pointsPer), let sy = format.channels[y].factor(to: InkMLUnits.pointsPer) {
                context.canvasScale = (sx, sy)
            }
        }
        return context
    }

    /// A canvas transform's mapping of X and Y (InkML 1.0 §4.2.5): its first `<mapping>` (the
    /// forward one; a second is the inverse), see `mapping(_:depth:)`. Nil when the mapping is
    /// the identity or cannot be applied (a warning then says so and coordinates are read as
    /// written).
    private mutating func canvasTransform(_ node: XMLElementNode) -> PlaneMap? {
        guard let mapping = node.child(named: "mapping") else { return nil }
        guard let map = self.mapping(mapping, depth: 0), map != .identity else { return nil }
        return map
    }

    /// A `<mapping>` of X and Y, or nil (with a warning) when it cannot be applied:
    /// - `identity`;
    /// - `affine` (or `matrix`): an `<affine>` or `<matrix>` child with rows `a b c, d e f` (or
    ///   `a b, d e`; a third row of a 3 x 3 matrix is ignored); with `<bind source>` and
    ///   `<bind target>` children, one column per source (and a last one added) and one row per
    ///   target, of which the X and Y rows are taken (`boundAffine`);
    /// - `product`: its child mappings composed, the first applied first (a child that cannot
    ///   be applied makes the whole product not applied);
    /// - `mappingRef="#id"`: the mapping of that id.
    /// `lookup` (tables), `mathml` (formulas) and `unknown` are not applied; neither is a map
    /// with values that are not finite numbers or that collapse the plane.
    private mutating func mapping(_ node: XMLElementNode, depth: Int) -> PlaneMap? {
        guard depth < 16 else {
            warn("mapping-deep", "mappings nested or referring to one another more than 16 deep (line \(node.line)) are not applied")
            return nil
        }
        if let ref = node.attribute("mappingRef") {
            guard let target = try? lookup(ref, at: node, expecting: "mapping") else {
                warn("mapping-ref-\(ref)", "a mapping refers to \"\(ref)\" (line \(node.line)), which is not a mapping in the file; it is not applied")
                return nil
            }
            return mapping(target, depth: depth + 1)
        }
        let type = node.attribute("type") ?? "unknown"
        switch type {
        case "identity":
            return .identity
        case "affine", "matrix":
            guard let values = node.child(named: "affine") ?? node.child(named: "matrix") else {
                warn("mapping-bad", "an affine mapping (line \(node.line)) without values is not applied")
                return nil
            }
            // Rows are separated by commas (a trailing comma ends the last one), values by
            // white space.
            let rows = values.text.split(separator: ",").map { row in
                row.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }).map { InkMLNumber.parse(String($0)) }
            }.filter { !$0.isEmpty }
            let binds = node.children(named: "bind")
            let sources = binds.compactMap { $0.attribute("source") }
            let targets = binds.compactMap { $0.attribute("target") }
            var map: PlaneMap?
            if sources.isEmpty {
                // X and Y alone: rows `a b c, d e f` or `a b, d e`.
                if rows.count >= 2, rows[0].count == rows[1].count, rows[0].count == 2 || rows[0].count == 3,
                   rows[0].allSatisfy({ $0 != nil }), rows[1].allSatisfy({ $0 != nil }) {
                    let r0 = rows[0].map { $0! }, r1 = rows[1].map { $0! }
                    map = PlaneMap(a: r0[0], b: r0[1], c: r0.count == 3 ? r0[2] : 0, d: r1[0], e: r1[1], f: r1.count == 3 ? r1[2] : 0)
                }
            } else {
                map = Self.boundAffine(rows: rows, sources: sources, targets: targets.isEmpty ? sources : targets)
                if map == nil {
                    warn("canvasTransform-bound", "an affine mapping (line \(node.line)) of the channels \(sources.joined(separator: " ")) whose X and Y cannot be taken from its \(rows.count) rows, or depend on other channels, is not applied; coordinates are read as written")
                    return nil
                }
            }
            guard let map, map.isFinite, map.lengthScale > 1e-9, map.lengthScale < 1e9 else {
                warn("canvasTransform-bad", "a mapping (line \(node.line)) whose values cannot be read is not applied; coordinates are read as written")
                return nil
            }
            return map
        case "product":
            var map = PlaneMap.identity
            let parts = node.children(named: "mapping")
            for part in parts {
                guard let m = mapping(part, depth: depth + 1) else {
                    warn("mapping-product", "a product mapping (line \(node.line)) with a part that cannot be applied is not applied; coordinates are read as written")
                    return nil
                }
                map = map.then(m)
            }
            guard map.isFinite, map.lengthScale > 1e-9, map.lengthScale < 1e9 else {
                warn("canvasTransform-bad", "a product mapping (line \(node.line)) that collapses the plane is not applied")
                return nil
            }
            return map
        default:
            let what = type == "lookup" ? "a lookup table" : type == "mathml" ? "a MathML formula" : "of type \"\(type)\""
            warn("canvasTransform-\(type)", "a mapping \(what) (line \(node.line)) is not applied; coordinates are read as written (then fitted to the page if they have no units)")
            return nil
        }
    }

    /// The X and Y part of an affine mapping of named channels (`<bind source>`s in the order of
    /// the matrix's columns, `<bind target>`s in the order of its rows, as IAMonDo's Anoto pen
    /// files write X Y T F): each row has one value per source and, optionally, a last one that
    /// is added. Nil when X or Y is not among both, a row is missing or not numbers, or X or Y
    /// would depend on a channel other than X and Y.
    static func boundAffine(rows: [[Double?]], sources: [String], targets: [String]) -> PlaneMap? {
        guard let xs = sources.firstIndex(of: "X"), let ys = sources.firstIndex(of: "Y"),
              let xt = targets.firstIndex(of: "X"), let yt = targets.firstIndex(of: "Y"),
              xt < rows.count, yt < rows.count else { return nil }
        var out: [[Double]] = []
        for row in [rows[xt], rows[yt]] {
            guard row.count == sources.count || row.count == sources.count + 1 else { return nil }
            let values = row.compactMap { $0 }
            guard values.count == row.count else { return nil }
            for (i, v) in values.prefix(sources.count).enumerated() where i != xs && i != ys && v != 0 { return nil }
            out.append(values)
        }
        let c = out[0].count > sources.count ? out[0][sources.count] : 0
        let f = out[1].count > sources.count ? out[1][sources.count] : 0
        return PlaneMap(a: out[0][xs], b: out[0][ys], c: c, d: out[1][xs], e: out[1][ys], f: f)
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

    private mutating func traceFormat(_ node: XMLElementNode) throws(InkMLError) -> TraceFormat {
        var channels: [ChannelSpec] = []
        var mappedChannels: [(String, String, Int)] = []
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
            spec.respectTo = c.attribute("respectTo")
            if let m = c.child(named: "mapping"), m.attribute("type") != "identity" {
                mappedChannels.append((name, m.attribute("type") ?? "unknown", c.line))
            }
            channels.append(spec)
        }
        for child in node.children {
            if child.name == "channel" { try add(child, intermittent: false) }
            if child.name == "intermittentChannels" {
                for c in child.children(named: "channel") { try add(c, intermittent: true) }
            }
        }
        // A channel's own <mapping> (of its values onto others) is not applied: said, and the
        // values read as written.
        for (name, type, line) in mappedChannels {
            warn("channel-mapping-\(name)", "channel \(name) has a mapping of type \"\(type)\" (line \(line)), which is not applied; its values are read as written")
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
        var width: Double?, height: Double?
        var highlighterOp = false
        for p in node.children(named: "brushProperty") {
            guard let name = p.attribute("name"), let value = p.attribute("value") else { continue }
            switch name {
            case "width", "height":
                let unit = p.attribute("units") ?? "pt"
                if let v = InkMLNumber.parse(value, in: 0...1e6), let f = InkMLUnits.pointsPer(unit) {
                    if name == "width" { width = v * f } else { height = v * f }
                } else {
                    warn("brush-\(name)-\(unit)", "a brush \(name) \"\(value)\" in \"\(unit)\" could not be read; the default width is used")
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
                switch value {
                case "maskPen": highlighterOp = true
                case "copyPen": break
                default:
                    warn("rasterOp-\(value)", "a brush with rasterOp \"\(value)\" (an eraser or special effect) is drawn as a plain pen")
                }
            case "tip":
                brush.tip = value
            case "tool":
                if let tool = Tool(name: value) { brush.ink.tool = tool; brush.toolGiven = true }
                else if value.lowercased().contains("eraser") {
                    warn("tool-eraser", "a brush named as an eraser is drawn as a plain pen")
                }
            default:
                break
            }
        }
        if width != nil || height != nil {
            // Our tips are round: the larger side of the tip is the width a stroke shows.
            let w = width ?? height!, h = height ?? w
            brush.ink.width = Quantize.length(max(w, h))
            if abs(w - h) > 0.05 * max(w, h) {
                warn("brush-tip-shape", "brushes of unequal width and height (\(brush.tip ?? "ellipse") tips) are drawn with round tips of their larger side")
            }
            brush.height = h
            brush.widthPoints = w
        }
        if let tip = brush.tip, tip != "ellipse", tip != "rectangle" {
            warn("brush-tip-\(tip)", "a brush tip \"\(tip)\" is drawn round")
        }
        // Our own `tool` says what the stroke is; other writers' brushes are judged by their look.
        if !brush.toolGiven && (highlighterOp || Self.looksLikeHighlighter(brush)) { brush.ink.tool = .highlighter }
        return brush
    }

    /// A translucent wide brush is a highlighter (OneNote's has a rectangle tip 0.07 x 0.5 cm,
    /// transparency 127 and no rasterOp): alpha below 224 (transparency above 31) and a tip at
    /// least 5 pt on its larger side, or a rectangle tip at least three times as tall as wide.
    static func looksLikeHighlighter(_ brush: Brush) -> Bool {
        guard brush.ink.color.a < 224, brush.ink.color.a > 0 else { return false }
        let larger = Quantize.points(brush.ink.width)
        if larger >= 5 { return true }
        if brush.tip == "rectangle", let w = brush.widthPoints, let h = brush.height, w > 0, h >= 3 * w { return true }
        return false
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

    /// A warning about the file as a whole, before the walk.
    mutating func preface(_ message: String) { warn("preface-\(message)", message) }

    /// Says `message` once per `key`; past 100 warnings a last one says the rest were not listed.
    private mutating func warn(_ key: String, _ message: String) {
        guard warnings.count <= Self.maxWarnings, warned.insert(key).inserted else { return }
        warnings.append(warnings.count < Self.maxWarnings ? message : "more warnings were not listed")
    }

    static let maxWarnings = 100

    // MARK: - Traces

    private mutating func importTrace(_ node: XMLElementNode, context: Context, brush: Brush,
                                      points range: ClosedRange<Int>? = nil) throws(InkMLError) {
        let type = node.attribute("type") ?? "penDown"
        if type == "penUp" { skippedPenUp += 1; return }
        var format = context.format
        var text = node.text
        let remaining = limits.maxPoints - totalPoints
        let parsed: TraceParser
        var extraChannels = 0
        var result: Result<TraceParser, TraceParser.Failure>
        repeat {
            let f = format
            result = text.withUTF8 { utf8 in
                Result { () throws(TraceParser.Failure) in
                    try TraceParser.parse(UnsafeRawBufferPointer(utf8), format: f,
                                          maxPoints: min(remaining, PageFile.maxSamplesPerStroke))
                }
            }
            // Points with more values than the format declares (CROHME files with X Y T under
            // the default X Y format): the values past the declared channels are read into
            // unnamed trailing channels and dropped, rather than the trace refused.
            guard case .failure(let e) = result, e.tooManyValues, extraChannels < 8 else { break }
            extraChannels += 1
            format.channels.append(ChannelSpec(name: "#extra\(extraChannels)", intermittent: true))
        } while true
        if extraChannels > 0, case .success = result {
            warn("extra-values", "points have more values than their trace format's \(context.format.channels.count) channels (first in the trace at line \(node.line)); the values past the declared channels are dropped")
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
        let duration = node.attribute("duration").flatMap { InkMLNumber.parse($0, in: 0...1e12) }
        var mapper = try ChannelMapper(format: format, ink: brush.ink, at: node, inkSpace: inkSpace(context),
                                       transform: context.transform, canvasScale: context.canvasScale,
                                       sampleRate: context.sampleRate, duration: duration)
        var raw = try mapper.raw(from: parsed, at: node)
        for (key, message) in mapper.warnings { warn(key, message) }
        if let range {
            // A view of part of the trace (from/to, 0-based here, clamped to the trace).
            let lo = max(range.lowerBound, 0), hi = min(range.upperBound, count - 1)
            guard lo <= hi else { return }
            raw = raw.slice(lo...hi)
        }
        let start = startTime(of: node, raw: raw, context: context)
        if mapper.unitless {
            try addUnitless(raw, node: node, start: start)
            return
        }
        let stroke = raw.stroke()

        // A continuation joins the stroke its priorRef names.
        let continuation = node.attribute("continuation")
        if continuation == "middle" || continuation == "end", let prior = node.attribute("priorRef") {
            let priorID = prior.hasPrefix("#") ? String(prior.dropFirst()) : prior
            if let index = strokeIndexByTraceID[priorID] {
                if unitlessParts[index] != nil {
                    warn("continuation-mixed", "a continued trace in points whose start has no units is kept as its own stroke")
                    strokes.append(stroke)
                    if let id = node.id { strokeIndexByTraceID[id] = strokes.count - 1 }
                    return
                }
                strokes[index].append(continuing: stroke, after: continuationOffset(index, start))
                if let id = node.id { strokeIndexByTraceID[id] = index }
                return
            }
            warn("continuation", "a continued trace whose priorRef is not an imported trace is kept as its own stroke")
        }
        strokes.append(stroke)
        if let start { strokeStarts[strokes.count - 1] = start }
        if let id = node.id { strokeIndexByTraceID[id] = strokes.count - 1 }
    }

    /// When a trace began (docs/inkml.md, "Time"): its first T value, counted from the T
    /// channel's `respectTo` timestamp or else the context's; else its `timeOffset` from the
    /// context's timestamp; nil when the file says neither.
    private mutating func startTime(of node: XMLElementNode, raw: RawStroke, context: Context) -> (ms: Double, anchored: Bool)? {
        var anchor = context.timestamp
        if let t = context.format.index(of: "T"), let ref = context.format.channels[t].respectTo {
            if let ts = try? lookup(ref, at: node, expecting: "timestamp") { anchor = timestamp(ts, depth: 0) }
            else {
                warn("respectTo-\(ref)", "channel T counts from \"\(ref)\", which is not a timestamp in the file; stroke start times are not anchored")
                anchor = nil
            }
        }
        if let first = raw.startTime {
            return (first + (anchor ?? 0), anchor != nil)
        }
        if let offset = node.attribute("timeOffset").flatMap({ InkMLNumber.parse($0, in: -1e15...1e15) }) {
            return (offset + (context.timestamp ?? 0), context.timestamp != nil)
        }
        return nil
    }

    /// Milliseconds from the start of stroke `index` to the start of its continuation, when
    /// both are known on one clock.
    private func continuationOffset(_ index: Int, _ start: (ms: Double, anchored: Bool)?) -> Double? {
        guard let start, let first = strokeStarts[index], first.anchored == start.anchored, start.ms >= first.ms else { return nil }
        return start.ms - first.ms
    }

    /// The time a `<timestamp>` names (InkML 1.0 §4.4): `time` (ms since 1970, UTC), else
    /// `timeString` (ISO 8601; UTC when it gives no zone), else `timestampRef` plus `timeOffset`
    /// (ms). Nil, with a warning, when it says none of them readably.
    mutating func timestamp(_ node: XMLElementNode, depth: Int) -> Double? {
        let key = ObjectIdentifier(node)
        if let cached = timestampCache[key] { return cached }
        timestampCache[key] = .some(nil) // a cycle of references ends here
        var value: Double?
        if let t = node.attribute("time"), let v = InkMLNumber.parse(t, in: -1e15...1e15) {
            value = v
        } else if let t = node.attribute("timeString") {
            value = Self.isoMilliseconds(t)
            if value == nil { warn("timeString-\(t)", "the timestamp \"\(t)\" (line \(node.line)) is not an ISO 8601 date and time; times are not anchored") }
        } else if let ref = node.attribute("timestampRef"), depth < 64 {
            let offset = node.attribute("timeOffset").flatMap { InkMLNumber.parse($0, in: -1e15...1e15) } ?? 0
            if let target = try? lookup(ref, at: node, expecting: "timestamp"), let base = timestamp(target, depth: depth + 1) {
                value = base + offset
            } else {
                warn("timestampRef-\(ref)", "a timestamp refers to \"\(ref)\", which is not a readable timestamp in the file; times are not anchored")
            }
        }
        timestampCache[key] = .some(value)
        return value
    }

    /// `YYYY-MM-DDThh:mm:ss[.fff][Z|+hh:mm|-hh:mm]` (a space for the T; seconds optional) in
    /// milliseconds since 1970-01-01T00:00:00Z; no zone is UTC.
    static func isoMilliseconds(_ s: String) -> Double? {
        let b = Array(s.trimmingCharacters(in: .whitespaces).utf8)
        var i = 0
        func number(_ digits: Int) -> Int? {
            guard i + digits <= b.count else { return nil }
            var v = 0
            for k in 0..<digits {
                let c = b[i + k]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            i += digits
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect(45), let month = number(2), expect(45), let day = number(2),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        var hour = 0, minute = 0, second = 0, fraction = 0.0
        if i < b.count, b[i] == 84 || b[i] == 116 || b[i] == 32 {
            i += 1
            guard let h = number(2), expect(58), let m = number(2), h <= 24, m <= 59 else { return nil }
            hour = h; minute = m
            if expect(58) {
                guard let sec = number(2), sec <= 60 else { return nil }
                second = sec
                if i < b.count, b[i] == 46 || b[i] == 44 {
                    i += 1
                    var scale = 0.1
                    let begin = i
                    while i < b.count, b[i] >= 48, b[i] <= 57 { fraction += Double(b[i] - 48) * scale; scale /= 10; i += 1 }
                    guard i > begin else { return nil }
                }
            }
        }
        var zone = 0
        if i < b.count {
            if b[i] == 90 || b[i] == 122 { i += 1 }
            else if b[i] == 43 || b[i] == 45 {
                let sign = b[i] == 45 ? -1 : 1
                i += 1
                guard let zh = number(2) else { return nil }
                _ = expect(58)
                let zm = number(2) ?? 0
                zone = sign * (zh * 60 + zm)
            }
        }
        guard i == b.count else { return nil }
        // Days from 1970-01-01 in the proleptic Gregorian calendar.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - zone * 60)
        return (seconds + fraction) * 1000
    }

    /// Windows ink space: the trace's format is its ink source's, the ink source gives X and Y
    /// resolutions, and the file is from Microsoft's ink serializer (its namespace appears, or a
    /// channel has Microsoft's `dev` units). Office, OneNote and Windows Journal write their
    /// traces in himetric whatever the digitizer the ink source describes; read by the ink
    /// source's resolutions, PowerPoint ink came out X x0.64 and Y x0.48 (docs/inkml.md).
    private mutating func inkSpace(_ context: Context) -> Bool {
        guard context.formatFromSource, context.transform == nil, context.canvasScale == nil,
              let x = context.format.index(of: "X"), let y = context.format.index(of: "Y"),
              context.format.channels[x].resolution != nil, context.format.channels[y].resolution != nil else { return false }
        let microsoft = microsoftInk || context.format.channels.contains { $0.units == "dev" }
        guard microsoft else { return false }
        // Resolutions that already say himetric (Windows Journal's 1000 per cm) change nothing.
        let declared = [x, y].map { context.format.channels[$0].factor(to: InkMLUnits.pointsPer) }
        if declared.allSatisfy({ $0.map { abs($0 / ChannelMapper.himetric - 1) < 0.01 } ?? false }) { return false }
        warn("inkSpace", "Windows ink: X and Y are read as ink space (0.01 mm), not by the digitizer's resolutions")
        return true
    }

    /// A stroke (or a continuation) whose X and Y have no units, fitted when the walk is done.
    private mutating func addUnitless(_ raw: RawStroke, node: XMLElementNode,
                                      start: (ms: Double, anchored: Bool)?) throws(InkMLError) {
        let continuation = node.attribute("continuation")
        if continuation == "middle" || continuation == "end", let prior = node.attribute("priorRef") {
            let priorID = prior.hasPrefix("#") ? String(prior.dropFirst()) : prior
            if let index = strokeIndexByTraceID[priorID], unitlessParts[index] != nil {
                var raw = raw
                raw.continuationOffset = continuationOffset(index, start)
                unitlessParts[index]!.append(raw)
                if let id = node.id { strokeIndexByTraceID[id] = index }
                return
            }
            warn("continuation", "a continued trace whose priorRef is not an imported trace is kept as its own stroke")
        }
        strokes.append(Stroke(ink: raw.ink, samples: []))
        unitlessParts[strokes.count - 1] = [raw]
        if let start { strokeStarts[strokes.count - 1] = start }
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
    /// times of its own: by `offset` (ms from this stroke's start to the continuation's, when
    /// the file's times say it), else by this stroke's last time (so a part without times of
    /// its own sits at the time the stroke had reached).
    mutating func append(continuing other: Stroke, after offset: Double? = nil) {
        let shift = offset.map { Quantize.milliseconds($0) } ?? samples.last?.time ?? 0
        samples += other.samples.map { s in
            var s = s
            // Untimed parts too: they begin where the stroke has got to, so times never go back.
            s.time = s.time &+ shift
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
