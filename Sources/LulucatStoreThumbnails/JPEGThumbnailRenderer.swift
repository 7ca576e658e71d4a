// Thumbnails drawn by LulucatRender (the rasterizer and libjpeg-turbo's or ImageIO's JPEG), for the
// store's ThumbnailWriter: the opt-in product LulucatStoreThumbnails, registered by
// `Library.enableThumbnails()`.

import Foundation
import LulucatInk
import LulucatRender
import LulucatStore

extension Library {
    /// Makes every session of this process write page thumbnails (`thumbnails/<page>.jpg`, the
    /// library grid's covers), and `ThumbnailWriter.write` and `rebuild` draw them. Call it once at
    /// launch; calling it again, from any thread, changes nothing. Without it no thumbnail is
    /// written (docs/package-format.md: thumbnails are derived and optional).
    ///
    /// ```swift
    /// import LulucatStore
    /// import LulucatStoreThumbnails
    ///
    /// Library.enableThumbnails()
    /// ```
    public static func enableThumbnails() {
        ThumbnailRenderers.register(JPEGThumbnailRenderer())
    }
}

/// `Thumbnail.jpeg` with the package's images decoded as they are drawn.
struct JPEGThumbnailRenderer: ThumbnailRenderer {
    func jpeg(_ content: PageContent, width: Int, maxHeight: Int?, quality: Int,
              asset: (UUID) throws -> Data?) throws -> (data: Data, problems: [String]) {
        let (data, problems) = try Thumbnail.jpeg(content, width: width, maxHeight: maxHeight, quality: quality) { id in
            try asset(id).map { try RGBAImage(decoding: $0) }
        }
        return (data, problems.map { "\($0)" })
    }
}
