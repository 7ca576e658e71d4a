// Decoding an image asset whose format is known only from its first bytes.

import Foundation

extension RGBAImage {
    /// The encoded formats an asset can have.
    package enum Format: String, Sendable { case jpeg, png }

    /// The format named by the first bytes of `data`, or nil.
    package static func sniffFormat(_ data: Data) -> Format? {
        if data.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if data.starts(with: PNGFormat.signature) { return .png }
        return nil
    }

    /// Decodes a JPEG or PNG asset, whichever its signature says.
    /// - Throws: `RenderError.unknownImageFormat`, or the decoder's error.
    package init(decoding data: Data) throws {
        switch RGBAImage.sniffFormat(data) {
        case .jpeg: self = try JPEGCodec.decode(data)
        case .png: self = try PNGDecoder.decode(data)
        case nil: throw RenderError.unknownImageFormat
        }
    }

    /// This image as a JPEG file of `quality` (1...100), flattened onto white.
    package func jpegData(quality: Int = 85) throws -> Data { try JPEGCodec.encode(self, quality: quality) }

    /// This image as a PNG file.
    package func pngData() throws -> Data { try PNGEncoder.encode(self) }
}
