// The one error type of the rendering layer, and the problems a render reports without failing.

import Foundation

/// Why an image could not be decoded or encoded, or a page not rendered.
package enum RenderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The scale (pixels per point) is not a positive finite number.
    case invalidScale(Double)
    /// The bitmap would exceed `ImageLimits` (16,384 px a side, 100 megapixels).
    case imageTooLarge(width: Int, height: Int)
    /// The bytes are not a valid image of `format` ("JPEG", "PNG"): truncated, corrupt, bad checksum.
    case corruptImage(format: String, String)
    /// A valid image of a kind this decoder does not read (16-bit PNG, interlaced PNG, CMYK JPEG...).
    case unsupportedImage(format: String, String)
    /// The bytes begin with neither the JPEG nor the PNG signature.
    case unknownImageFormat
    /// The encoder failed (the library's message).
    case encodingFailed(format: String, String)

    public var description: String {
        switch self {
        case .invalidScale(let s):
            return "invalid render scale \(s): expected a positive number of pixels per point"
        case .imageTooLarge(let w, let h):
            return "image of \(w) x \(h) pixels is larger than the limit of \(ImageLimits.maxDimension) px a side and \(ImageLimits.maxPixels / 1_000_000) megapixels"
        case .corruptImage(let f, let m): return "corrupt \(f): \(m)"
        case .unsupportedImage(let f, let m): return "unsupported \(f): \(m)"
        case .unknownImageFormat: return "not a JPEG or PNG image (unknown signature)"
        case .encodingFailed(let f, let m): return "\(f) encoding failed: \(m)"
        }
    }
}

/// Something a render could not draw as asked; the page was still drawn, with a placeholder.
package struct RenderProblem: Hashable, Sendable, CustomStringConvertible {
    package enum Kind: Hashable, Sendable {
        /// No asset with this id was found.
        case missingAsset
        /// The asset's bytes could not be decoded (the decoder's message).
        case unreadableAsset(String)
    }
    /// The image element that shows the asset.
    package var elementID: UUID
    package var assetID: UUID
    package var kind: Kind

    package init(elementID: UUID, assetID: UUID, kind: Kind) {
        self.elementID = elementID
        self.assetID = assetID
        self.kind = kind
    }

    package var description: String {
        switch kind {
        case .missingAsset:
            return "image \(elementID): asset \(assetID) is missing; drew a placeholder"
        case .unreadableAsset(let m):
            return "image \(elementID): asset \(assetID) could not be decoded (\(m)); drew a placeholder"
        }
    }
}
