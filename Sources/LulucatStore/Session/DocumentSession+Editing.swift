// Edits of the elements on a page: each is a `PageChange` applied in memory and saved later.

import Foundation
import LulucatInk

extension DocumentSession {
    /// Applies one change to a page in memory, marks it dirty and schedules an autosave.
    func edit(_ page: UUID, _ change: PageChange) throws(StoreError) {
        try checkWritable()
        try checkAssets(of: change)
        // What no engine may store is refused here, the same way on every engine (ElementCodec).
        try Self.checkChannels(change)
        // The clock is read (and refused outside the storable times) before anything changes.
        let now = try Date.storeNow()
        var p = try load(page)
        // Out of the dictionary while it changes, so its element array is referenced once and the
        // change applies in place instead of copying the page (2,000 strokes) on every stroke.
        loaded[page] = nil
        do { try p.content.apply(change, ids: &p.ids) } catch {
            loaded[page] = p
            throw .invalidArgument("page \(page): \(error)")
        }
        switch change {
        case .delete(let ids):
            p.encoded?.forget(ids)
            for id in ids { p.transformed[id] = nil }
        case .replace(let id, _):
            p.encoded?.forget([id])
            p.transformed[id] = nil
        case .update(let elements): p.encoded?.forget(elements.map(\.id))
        case .append, .move, .resize: break
        }
        p.changes.append(change)
        p.dirty = true
        loaded[page] = p
        let i = try pageIndex(page)
        metadata.pages[i].elementCount = p.content.elements.count
        metadata.pages[i].width = p.content.canvasSize.width
        metadata.pages[i].height = p.content.canvasSize.height
        // Only a change that adds, replaces or removes elements can change the images shown.
        let imagesMayChange: Bool
        switch change {
        case .append(let elements): imagesMayChange = elements.contains { $0.image != nil }
        case .delete, .replace, .update: imagesMayChange = true
        case .move, .resize: imagesMayChange = false
        }
        if imagesMayChange {
            let assets = p.content.assetIDs.sortedByUUIDString()
            if metadata.pages[i].assets != assets { metadata.pages[i].assets = assets }
        }
        metadata.pages[i].modified = now
        metadata.modified = now
        metadataDirty = true
        scheduleAutosave()
        eventHub.send(.elementsEdited(ElementChanges(page: page, edits: [change])))
    }

    /// Appends a finished stroke on top of a page.
    public func append(_ stroke: Stroke, to page: UUID) throws(StoreError) {
        guard stroke.channelsAreConsistent else {
            throw .invalidArgument("stroke \(stroke.id) has an optional channel whose length differs from its samples")
        }
        try editRecorded(page, .append([.stroke(stroke)]), name: "Draw")
    }

    /// Appends elements on top of a page.
    public func append(_ elements: [Element], to page: UUID) throws(StoreError) {
        try editRecorded(page, .append(elements), name: "Add")
    }

    /// Inserts an image: the asset file is written (durably) at once, before any page refers to it.
    ///
    /// - Parameters:
    ///   - data: the encoded image (JPEG, PNG or HEIC).
    ///   - fileExtension: `jpg`, `jpeg`, `png` or `heic`.
    ///   - frame: where the image goes on the page, in 0.1 pt.
    /// - Returns: the new image element.
    @discardableResult
    public func insertImage(_ data: Data, fileExtension: String, frame: QuantizedRect, rotation: Int32 = 0,
                            on page: UUID) throws(StoreError) -> ImageElement {
        try checkWritable()
        let ext = fileExtension.lowercased()
        guard DocumentPackage.assetExtensions.contains(ext) else {
            throw .invalidArgument("image type '\(fileExtension)' is not one of \(DocumentPackage.assetExtensions.sorted())")
        }
        _ = try pageIndex(page)
        let asset = try storeAsset(data, ext: ext)
        let image = ImageElement(assetID: asset, frame: frame, rotation: rotation)
        try editRecorded(page, .append([.image(image)]), name: "Insert Image")
        return image
    }

    /// Writes an asset file durably; the asset exists before anything refers to it.
    func writeAsset(_ data: Data, id: UUID, ext: String) throws(StoreError) {
        let path = package.assetPath(id, ext: ext)
        try fileSystem.checked.writeAtomically(data, to: path)
        // Recorded with the next document.json, after the asset is durable (assets before references).
        metadata.assetChecksums = (metadata.assetChecksums ?? [:]).merging([id.uuidString: AssetChecksum.of(data)]) { $1 }
        metadataDirty = true
    }

    /// Erases part of a stroke: it is replaced, in its place, by the pieces of it that remain.
    ///
    /// - Parameter keeping: index ranges of the samples that remain; each becomes a stroke with a
    ///   new id, its times measured from its own first sample. An empty list deletes the stroke.
    /// - Returns: the ids of the pieces.
    @discardableResult
    public func erase(stroke id: UUID, keeping ranges: [Range<Int>], on page: UUID) throws(StoreError) -> [UUID] {
        let content = try self.content(of: page)
        guard let i = content.index(of: id), case .stroke(let stroke) = content.elements[i] else {
            throw .elementNotFound(id, page: page)
        }
        var pieces: [Element] = []
        for r in ranges {
            guard r.lowerBound >= 0, r.upperBound <= stroke.samples.count else {
                throw .invalidArgument("range \(r) is outside the \(stroke.samples.count) samples of stroke \(id)")
            }
            guard !r.isEmpty else { continue }
            pieces.append(.stroke(stroke.piece(r)))
        }
        try editRecorded(page, .replace(id, with: pieces), name: "Erase")
        return pieces.map(\.id)
    }

    /// Erases the samples of a stroke within `radius` of a point (the eraser's circle), keeping the rest.
    @discardableResult
    public func erase(stroke id: UUID, around x: Int32, _ y: Int32, radius: Int32, on page: UUID) throws(StoreError) -> [UUID] {
        let content = try self.content(of: page)
        guard let i = content.index(of: id), case .stroke(let stroke) = content.elements[i] else {
            throw .elementNotFound(id, page: page)
        }
        let r2 = Int64(radius) * Int64(radius)
        var ranges: [Range<Int>] = []
        var start: Int?
        for (k, s) in stroke.samples.enumerated() {
            let dx = Int64(s.x) - Int64(x), dy = Int64(s.y) - Int64(y)
            let inside = dx * dx + dy * dy <= r2
            if inside, let st = start { ranges.append(st..<k); start = nil }
            if !inside, start == nil { start = k }
        }
        if let st = start { ranges.append(st..<stroke.samples.count) }
        if ranges == [0..<stroke.samples.count] { return [id] }
        return try erase(stroke: id, keeping: ranges, on: page)
    }

    /// Moves, scales and rotates elements in place (a selection dragged or resized).
    ///
    /// Repeated transforms do not drift: while the page stays loaded, each element is mapped from
    /// its samples before its first transform by all the transforms since, composed in doubles and
    /// rounded once (360 rotations of 1° end where they started; a scale to 10 % and back keeps
    /// the radii).
    public func transform(_ ids: [UUID], by transform: QuantizedTransform, on page: UUID) throws(StoreError) {
        try self.transform(ids, by: SimilarityTransform(transform), on: page)
    }

    /// Moves, scales and rotates elements by an exact transform in doubles (a gesture's transform
    /// since it began, `TransformGesture`), rounded once against the elements' samples before
    /// their first transform, as `transform(_:by:on:)` with a `QuantizedTransform` is.
    /// - Returns: the changes that undo it (the elements as they were, `PageChange.update`).
    @discardableResult
    public func transform(_ ids: [UUID], by step: SimilarityTransform, on page: UUID) throws(StoreError) -> [PageChange] {
        guard step.a.isFinite, step.b.isFinite, step.tx.isFinite, step.ty.isFinite, step.scale > 0 else {
            throw .invalidArgument("a transform must be finite and keep some size (scale \(step.scale))")
        }
        let content = try self.content(of: page)
        var before: [Element] = []
        let known = loaded[page]?.transformed ?? [:]
        var updated: [Element] = []
        var tracked: [UUID: TransformedElement] = [:]
        for id in ids {
            guard let i = content.index(of: id) else { throw .elementNotFound(id, page: page) }
            let now = content.elements[i]
            before.append(now)
            var t = known[id].flatMap { $0.current == now ? $0 : nil }
                ?? TransformedElement(original: now, total: .identity, current: now)
            t.total = t.total.followed(by: step)
            t.current = t.total.apply(to: t.original)
            updated.append(t.current)
            tracked[id] = t
        }
        try edit(page, .update(updated))
        loaded[page]?.transformed.merge(tracked) { $1 }
        recordUndo(.page(page, [.update(before)]), name: "Transform")
        return [.update(before)]
    }

    /// Starts a live transform of a selection (a pinch, a twist, a drag): the gesture previews each
    /// event's transform without touching the page, and `commit(_:_:)` applies the last one once,
    /// so any number of events costs one rounding.
    ///
    /// ```swift
    /// let gesture = try await session.beginTransform(selection, on: page)
    /// // each event: the transform since the gesture began, in doubles
    /// canvas.show(gesture.preview(.scaling(pinch.scale, aboutX: cx, y: cy)))
    /// // at the end
    /// let undo = try await session.commit(gesture, .scaling(pinch.scale, aboutX: cx, y: cy))
    /// ```
    /// - Throws: `.elementNotFound` for an id the page does not have, `.pageNotFound`.
    public func beginTransform(_ ids: [UUID], on page: UUID) throws(StoreError) -> TransformGesture {
        let content = try self.content(of: page)
        var originals: [Element] = []
        for id in ids {
            guard let i = content.index(of: id) else { throw .elementNotFound(id, page: page) }
            originals.append(content.elements[i])
        }
        return TransformGesture(page: page, originals: originals)
    }

    /// Ends a live transform: applies `transform` (the whole gesture's, from its start) to its
    /// elements once. Returns the changes that undo it.
    /// - Throws: `.elementNotFound` when an element of the gesture was removed meanwhile (nothing
    ///   is changed), `.invalidArgument` for a transform that is not finite or has no size.
    @discardableResult
    public func commit(_ gesture: TransformGesture, _ transform: SimilarityTransform) throws(StoreError) -> [PageChange] {
        try self.transform(gesture.ids, by: transform, on: gesture.page)
    }


    /// Deletes elements from a page.
    public func delete(_ ids: [UUID], from page: UUID) throws(StoreError) {
        try editRecorded(page, .delete(ids), name: "Delete")
    }

    /// Moves elements in the z-order (bring to front, send to back, or to an index).
    public func move(_ ids: [UUID], to position: ZPosition, on page: UUID) throws(StoreError) {
        try editRecorded(page, .move(ids, to: position), name: "Arrange")
    }

    /// Changes a page's canvas size.
    public func resizeCanvas(of page: UUID, to size: QuantizedSize) throws(StoreError) {
        try editRecorded(page, .resize(size), name: "Resize Page")
    }
}

extension Stroke {
    /// The samples in `range` as a new stroke with a new id, its times from its own first sample.
    func piece(_ range: Range<Int>) -> Stroke {
        var samples = Array(samples[range])
        let t0 = samples.first?.time ?? 0
        for i in samples.indices { samples[i].time -= t0 }
        return Stroke(id: UUID(), ink: ink, samples: samples,
                      azimuth: azimuth.map { Array($0[range]) },
                      altitude: altitude.map { Array($0[range]) },
                      opacity: opacity.map { Array($0[range]) })
    }
}

/// A live transform of a selection (`DocumentSession.beginTransform`): the elements as they were
/// when it began, for previews drawn without the session.
public struct TransformGesture: Sendable, Hashable {
    /// The page of the selection.
    public let page: UUID
    /// The elements as they were when the gesture began.
    public let originals: [Element]
    /// The selection's ids.
    public var ids: [UUID] { originals.map(\.id) }

    /// The selection under `transform` (the gesture's since it began), each value rounded once:
    /// what `commit` will store, to draw while the gesture goes on.
    public func preview(_ transform: SimilarityTransform) -> [Element] { originals.map { transform.apply(to: $0) } }
}

extension SimilarityTransform {
    /// A uniform scale by `factor` about (`x`, `y`), in 0.1-pt units.
    public static func scaling(_ factor: Double, aboutX x: Double, y: Double) -> SimilarityTransform {
        SimilarityTransform(a: factor, b: 0, tx: x - factor * x, ty: y - factor * y)
    }

    /// A rotation by `degrees`, clockwise on screen, about (`x`, `y`), in 0.1-pt units.
    public static func rotation(degrees: Double, aboutX x: Double, y: Double) -> SimilarityTransform {
        let r = degrees * .pi / 180
        let a = cos(r), b = sin(r)
        return SimilarityTransform(a: a, b: b, tx: x - a * x + b * y, ty: y - b * x - a * y)
    }

}
