// What an InkML import gives: one page of strokes, and what could not be kept.

import Foundation
import LulucatInk

/// The result of reading an InkML file: its traces as the strokes of one page, and the
/// warnings a person should see (channels dropped, traces skipped), each said once.
public struct InkMLDocument: Sendable {
    /// The strokes in file order (z-order); the canvas is US Letter, grown to hold the ink.
    public var page: PageContent
    public var warnings: [String]

    public var strokes: [Stroke] { page.strokes }
    public var sampleCount: Int { page.sampleCount }
}
