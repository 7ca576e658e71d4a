// Thumbnails are optional (docs/package-format.md): the store queues and writes them, but drawing a
// page needs the rasterizer and a JPEG encoder (LulucatRender, libjpeg-turbo, zlib), which an app
// links only through the opt-in LulucatStoreThumbnails product. That module registers its renderer
// here (`Library.enableThumbnails()`); without one, sessions write no thumbnails.

import Foundation
import LulucatInk

/// Draws a page's thumbnail as JPEG bytes. Registered once per process (`ThumbnailRenderers.register`).
package protocol ThumbnailRenderer: Sendable {
    /// The page fitted to `width` pixels (into `width` x `maxHeight` when set), as JPEG at
    /// `quality`, and the problems met while drawing (an image whose asset is missing, ...).
    /// `asset` gives an image element's file bytes, nil when the package does not have it.
    func jpeg(_ content: PageContent, width: Int, maxHeight: Int?, quality: Int,
              asset: (UUID) throws -> Data?) throws -> (data: Data, problems: [String])
}

/// The thumbnail renderer of this process, if a module registered one.
package enum ThumbnailRenderers {
    private final class Slot: @unchecked Sendable {
        let lock = NSLock()
        var renderer: (any ThumbnailRenderer)?
    }
    private static let slot = Slot()

    /// Registers `renderer`; the first registration stays (a second changes nothing), from any thread.
    package static func register(_ renderer: any ThumbnailRenderer) {
        slot.lock.withLock { if slot.renderer == nil { slot.renderer = renderer } }
    }

    static var current: (any ThumbnailRenderer)? { slot.lock.withLock { slot.renderer } }
}
