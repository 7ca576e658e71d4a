// What an app shows of a RenderError: a sentence a note-taker reads (`errorDescription`, so
// `localizedDescription` is never Foundation's generic "could not be completed") and what they can
// do about it (`recoverySuggestion`). The decoder's or encoder's own message stays in `description`.

import Foundation

extension RenderError: LocalizedError {
    /// What could not be drawn, shown or saved, in plain words (`localizedDescription`).
    public var errorDescription: String? {
        switch self {
        case .invalidScale: return "The page could not be drawn at that size."
        case .imageTooLarge(let w, let h): return "The image is too large to draw or save (\(w) × \(h) pixels)."
        case .corruptImage(let format, _): return "The \(format) image is damaged and cannot be shown."
        case .unsupportedImage(let format, _): return "This kind of \(format) image cannot be shown."
        case .unknownImageFormat: return "The file is not a JPEG or PNG image."
        case .encodingFailed(let format, _): return "The image could not be saved as \(format)."
        }
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        switch self {
        case .invalidScale: return "Choose another zoom or export size."
        case .imageTooLarge: return "Use a smaller image, or export the page at a smaller size."
        case .corruptImage: return "Add the image again from its original."
        case .unsupportedImage: return "Save the image again as an ordinary JPEG or PNG (a screenshot works), then add it."
        case .unknownImageFormat: return "Add an image in JPEG or PNG format."
        case .encodingFailed: return "Try again; if it keeps failing, export at a smaller size."
        }
    }
}
