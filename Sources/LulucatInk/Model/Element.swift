// The elements of a page: strokes, images, and kinds a newer version wrote that we keep unread.

import Foundation

/// An image placed on a page. The pixels live in the document's `assets/` folder.
public struct ImageElement: Hashable, Sendable, Identifiable {
    /// The element's id, unique on its page (the same asset may be shown by several elements).
    public var id: UUID
    /// The asset file this image shows (`assets/<assetID>.<ext>`).
    public var assetID: UUID
    /// The frame before rotation, in 0.1 pt.
    public var frame: QuantizedRect
    /// Rotation about the frame's centre in 0.01 degrees, clockwise on screen.
    public var rotation: Int32

    /// An image showing asset `assetID` in `frame` (0.1 pt), turned by `rotation` (0.01°,
    /// clockwise) about the frame's centre. `Quantize.rect(x:y:width:height:)` and
    /// `Quantize.rotation(degrees:)` make the values from points and degrees.
    public init(id: UUID = UUID(), assetID: UUID, frame: QuantizedRect, rotation: Int32 = 0) {
        self.id = id
        self.assetID = assetID
        self.frame = frame
        self.rotation = rotation
    }
}

/// An element of a kind this version does not know. Its bytes are kept and written back unchanged.
/// Every element payload begins with its 16-byte id, so even unknown elements can be deleted and
/// reordered by id.
public struct UnknownElement: Hashable, Sendable, Identifiable {
    /// The element kind byte as the file gave it.
    public var kind: UInt8
    /// The whole payload, id included.
    public var payload: Data
    /// The element's id: the payload's first 16 bytes.
    public let id: UUID

    /// - Throws: `PageFormatError.invalidField` when the payload is shorter than an id.
    public init(kind: UInt8, payload: Data) throws {
        guard payload.count >= 16 else {
            throw PageFormatError.invalidField(offset: 0, "unknown element of kind \(kind) is shorter than its 16-byte id")
        }
        self.kind = kind
        self.payload = payload
        self.id = payload.withUnsafeBytes { UUID.read(from: $0, at: 0) }
    }
}

/// One element of a page, in z-order within the page.
public enum Element: Hashable, Sendable, Identifiable {
    /// A pen stroke.
    case stroke(Stroke)
    /// An image placed on the page.
    case image(ImageElement)
    /// An element of a kind a newer version wrote, kept as its bytes.
    case unknown(UnknownElement)

    /// The element's id, whatever its kind: unique on its page.
    public var id: UUID {
        switch self {
        case .stroke(let s): return s.id
        case .image(let i): return i.id
        case .unknown(let u): return u.id
        }
    }

    /// The stroke, when the element is one.
    public var stroke: Stroke? { if case .stroke(let s) = self { return s } else { return nil } }
    /// The image, when the element is one.
    public var image: ImageElement? { if case .image(let i) = self { return i } else { return nil } }
}

/// What one page holds: its canvas size and its elements, in drawing order.
public struct PageContent: Hashable, Sendable {
    /// The page's size in 0.1 pt; ink may lie outside it (it is kept, and drawn clipped).
    public var canvasSize: QuantizedSize
    /// Elements in z-order: the first is drawn first (at the bottom).
    public var elements: [Element]

    /// A page of `canvasSize` holding `elements` in z-order; by default an empty US Letter page.
    public init(canvasSize: QuantizedSize = .letter, elements: [Element] = []) {
        self.canvasSize = canvasSize
        self.elements = elements
    }

    /// The page's strokes, in z-order.
    public var strokes: [Stroke] { elements.compactMap(\.stroke) }
    /// The page's images, in z-order.
    public var images: [ImageElement] { elements.compactMap(\.image) }
    /// The samples of all the page's strokes.
    public var sampleCount: Int { elements.reduce(0) { $0 + ($1.stroke?.samples.count ?? 0) } }
    /// Asset ids the page refers to.
    public var assetIDs: Set<UUID> { Set(images.map(\.assetID)) }
}

extension UUID {
    /// Reads 16 raw bytes at `offset` (the caller has checked the bounds).
    @inlinable static func read(from buffer: UnsafeRawBufferPointer, at offset: Int) -> UUID {
        var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &u) { dst in
            dst.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + 16]))
        }
        return UUID(uuid: u)
    }
}
