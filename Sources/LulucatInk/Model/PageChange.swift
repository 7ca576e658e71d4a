// The edits a session makes to one page, as values: what the journal logs and SQLite applies.

import Foundation

/// Where moved elements go in the z-order.
public enum ZPosition: Hashable, Sendable {
    /// On top of everything else.
    case front
    /// Under everything else.
    case back
    /// At this index of the page's elements once the moved ones are taken out.
    case index(Int)
}

/// A transform of a selection in quantized units: scale and rotate about a centre, then translate.
public struct QuantizedTransform: Hashable, Sendable {
    /// Horizontal translation in 0.1 pt, applied after the scale and rotation.
    public var dx: Int32
    /// Vertical translation in 0.1 pt (y grows downwards).
    public var dy: Int32
    /// Scale in thousandths (1,000 keeps the size).
    public var scale: Int32
    /// Rotation in 0.01 degrees, clockwise on screen.
    public var rotation: Int32
    /// Horizontal position of the centre of scale and rotation, in 0.1 pt.
    public var centerX: Int32
    /// Vertical position of the centre of scale and rotation, in 0.1 pt.
    public var centerY: Int32

    /// A transform from its parts, each in its quantum; by default the identity (scale 1,000).
    public init(dx: Int32 = 0, dy: Int32 = 0, scale: Int32 = 1000, rotation: Int32 = 0,
                centerX: Int32 = 0, centerY: Int32 = 0) {
        self.dx = dx; self.dy = dy; self.scale = scale; self.rotation = rotation
        self.centerX = centerX; self.centerY = centerY
    }

    /// A move by `dx`, `dy` (0.1 pt) with no scale or rotation.
    public static func translation(dx: Int32, dy: Int32) -> QuantizedTransform { .init(dx: dx, dy: dy) }

    /// Maps one point, rounding to nearest.
    public func apply(x: Int32, y: Int32) -> (Int32, Int32) {
        let s = Double(scale) / 1000
        let a = Double(rotation) / 100 * .pi / 180
        let px = Double(x) - Double(centerX), py = Double(y) - Double(centerY)
        let rx = (px * cos(a) - py * sin(a)) * s + Double(centerX) + Double(dx)
        let ry = (px * sin(a) + py * cos(a)) * s + Double(centerY) + Double(dy)
        return (Quantize.clampInt32(rx.rounded()), Quantize.clampInt32(ry.rounded()))
    }

    func scaled<T: BinaryInteger>(_ v: T) -> T {
        T(clamping: (Int64(v) * Int64(scale) + 500) / 1000)
    }

    /// The element moved, scaled and rotated. Unknown elements are returned unchanged.
    public func apply(to element: Element) -> Element {
        switch element {
        case .stroke(var s):
            for i in s.samples.indices {
                let (x, y) = apply(x: s.samples[i].x, y: s.samples[i].y)
                s.samples[i].x = x
                s.samples[i].y = y
                if scale != 1000 { s.samples[i].radius = scaled(s.samples[i].radius) }
            }
            return .stroke(s)
        case .image(var img):
            let cx = Int64(img.frame.x) * 2 + Int64(img.frame.width)
            let cy = Int64(img.frame.y) * 2 + Int64(img.frame.height)
            let (nx, ny) = apply(x: Int32(clamping: cx / 2), y: Int32(clamping: cy / 2))
            let w = scaled(img.frame.width), h = scaled(img.frame.height)
            img.frame = QuantizedRect(x: nx - w / 2, y: ny - h / 2, width: w, height: h)
            img.rotation = Int32(clamping: (Int64(img.rotation) + Int64(rotation)) % 36000)
            return .image(img)
        case .unknown:
            return element
        }
    }
}

/// One edit of a page. Applying a page's changes in order to its last saved content gives its
/// current content.
public enum PageChange: Hashable, Sendable {
    /// Elements added on top (a finished stroke, a pasted image).
    case append([Element])
    /// Elements removed.
    case delete([UUID])
    /// One element replaced, in its place, by others (an erased stroke by its remaining pieces).
    case replace(UUID, with: [Element])
    /// Elements replaced by new versions with the same ids, in their places (a transform).
    case update([Element])
    /// Elements moved in the z-order, keeping their relative order.
    case move([UUID], to: ZPosition)
    /// The canvas resized.
    case resize(QuantizedSize)
}

/// A page change that does not fit the page it is applied to.
public struct PageChangeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What did not fit, for a log ("delete names an element the page does not have").
    public var message: String
    /// An error saying `message`.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension PageContent {
    /// The index of the element with `id`, if the page has one.
    public func index(of id: UUID) -> Int? { elements.firstIndex { $0.id == id } }

    /// Applies one change.
    /// - Throws: `PageChangeError` when it names an element the page does not have, or would
    ///   duplicate an id. The content is unchanged when it throws.
    public mutating func apply(_ change: PageChange) throws(PageChangeError) {
        switch change {
        case .append(let new):
            try checkNew(new, replacing: nil)
            elements.append(contentsOf: new)
        case .delete(let ids):
            let set = Set(ids)
            guard set.count == ids.count else { throw PageChangeError("delete names an element twice") }
            let before = elements.count
            let kept = elements.filter { !set.contains($0.id) }
            guard before - kept.count == set.count else { throw PageChangeError("delete names an element the page does not have") }
            elements = kept
        case .replace(let id, let pieces):
            guard let i = index(of: id) else { throw PageChangeError("replace names element \(id), which the page does not have") }
            try checkNew(pieces, replacing: id)
            elements.replaceSubrange(i...i, with: pieces)
        case .update(let new):
            var positions: [Int] = []
            // A few elements are found by a scan each; more by one pass over the page (a select-all
            // transform of n elements would otherwise cost n scans of the page).
            let first = new.count <= PageChange.scansPerChange ? nil : firstIndices(of: Set(new.map(\.id)))
            for e in new {
                guard let i = first.map({ $0[e.id] }) ?? index(of: e.id) else {
                    throw PageChangeError("update names element \(e.id), which the page does not have")
                }
                positions.append(i)
            }
            guard Set(positions).count == positions.count else { throw PageChangeError("update names an element twice") }
            for (i, e) in zip(positions, new) { elements[i] = e }
        case .move(let ids, let position):
            let set = Set(ids)
            guard set.count == ids.count else { throw PageChangeError("move names an element twice") }
            let moved = elements.filter { set.contains($0.id) }
            guard moved.count == set.count else { throw PageChangeError("move names an element the page does not have") }
            var rest = elements.filter { !set.contains($0.id) }
            let at: Int
            switch position {
            case .front: at = rest.count
            case .back: at = 0
            case .index(let i):
                guard i >= 0 && i <= rest.count else { throw PageChangeError("move to index \(i) of \(rest.count)") }
                at = i
            }
            rest.insert(contentsOf: moved, at: at)
            elements = rest
        case .resize(let size):
            guard size.width >= 0, size.height >= 0 else { throw PageChangeError("negative canvas size") }
            canvasSize = size
        }
    }

    /// `apply(_:)` with the set of the page's element ids kept beside the page, so that an append
    /// checks its ids against the set instead of scanning the page: adding an element costs the
    /// same on a page of any size (amortized; the set is built at the first append). The other
    /// changes are applied as by `apply(_:)` and keep the set up to date. Same errors as
    /// `apply(_:)`, and the content and the set are unchanged when it throws.
    ///
    /// - Parameter ids: nil, or exactly the ids of `elements` (as this function leaves it).
    package mutating func apply(_ change: PageChange, ids: inout Set<UUID>?) throws(PageChangeError) {
        guard case .append(let new) = change else {
            try apply(change)
            guard var known = ids.take() else { return }
            switch change {
            case .delete(let gone): known.subtract(gone)
            case .replace(let id, let pieces):
                known.remove(id)
                for e in pieces { known.insert(e.id) }
            case .append, .update, .move, .resize: break
            }
            ids = known
            return
        }
        var known = ids.take() ?? Set(elements.lazy.map(\.id))
        defer { ids = known }
        var added = Set<UUID>(minimumCapacity: new.count)
        for e in new where !added.insert(e.id).inserted { throw PageChangeError("new elements repeat an id") }
        for e in new where known.contains(e.id) { throw PageChangeError("element \(e.id) is already on the page") }
        elements.append(contentsOf: new)
        known.formUnion(added)
    }

    private func checkNew(_ new: [Element], replacing: UUID?) throws(PageChangeError) {
        let ids = new.map(\.id)
        guard Set(ids).count == ids.count else { throw PageChangeError("new elements repeat an id") }
        let present = ids.count <= PageChange.scansPerChange ? nil : firstIndices(of: Set(ids))
        for id in ids where id != replacing && (present.map { $0[id] } ?? index(of: id)) != nil {
            throw PageChangeError("element \(id) is already on the page")
        }
    }

    /// The index of the first element with each of `ids` the page has, in one pass.
    private func firstIndices(of ids: Set<UUID>) -> [UUID: Int] {
        var found: [UUID: Int] = [:]
        for (i, e) in elements.enumerated() where ids.contains(e.id) && found[e.id] == nil { found[e.id] = i }
        return found
    }
}

extension PageChange {
    /// Elements of a change that `apply` looks up by a scan each; beyond it, by one pass.
    static let scansPerChange = 8

    /// An upper bound on the elements `PageContent.apply` visits for this change on a page of
    /// `elements` elements. A replay of untrusted changes (an imported journal) adds these up
    /// against a budget: a change costs up to a few passes over the page, so a journal of many
    /// small frames on a page of many elements is quadratic in the bytes that hold it.
    package func scanCost(onPageOf elements: Int) -> Int {
        func lookups(_ n: Int) -> Int { n <= PageChange.scansPerChange ? n * elements : elements + n }
        switch self {
        case .append(let new): return lookups(new.count) + new.count
        case .delete(let ids): return elements + ids.count
        case .replace(_, let pieces): return elements + lookups(pieces.count) + pieces.count
        case .update(let new): return lookups(new.count) + new.count
        case .move(let ids, _): return 2 * elements + ids.count
        case .resize: return 1
        }
    }
}
