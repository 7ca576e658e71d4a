// What an InkML import gives: one page of strokes, and what could not be kept.

import Foundation
import LulucatInk

/// The result of reading an InkML file: its traces as the strokes of one page, and the
/// warnings a person should see (channels dropped, traces skipped), each said once.
public struct InkMLDocument: Sendable {
    /// The pages: one, unless the file holds our page groups (`InkMLWriter.write(pages:)`).
    /// Strokes in file order (z-order); each canvas is US Letter (or the page group's canvas),
    /// grown to hold the ink.
    public var pages: [PageContent]
    /// Sentences a person should see about what was not kept (a channel dropped, traces
    /// skipped, a mapping not applied), each said once; empty when everything was read.
    public var warnings: [String]
    /// When each stroke of `strokes` began, in milliseconds since 1970-01-01T00:00:00Z, when
    /// the file anchors it to a timestamp (docs/inkml.md, "Time"); nil where it does not.
    /// Empty when the document was not read from a file.
    public var strokeStartTimes: [Double?]

    /// The first page (the only one of files from other writers).
    public var page: PageContent { pages.first ?? PageContent() }

    /// The strokes of every page, page by page, each in z-order.
    public var strokes: [Stroke] { pages.flatMap(\.strokes) }
    /// The samples of every page's strokes.
    public var sampleCount: Int { pages.reduce(0) { $0 + $1.sampleCount } }

    /// A document of `pages` (one empty US Letter page when none is given) and its `warnings`.
    public init(pages: [PageContent], warnings: [String], strokeStartTimes: [Double?] = []) {
        self.pages = pages.isEmpty ? [PageContent()] : pages
        self.warnings = warnings
        self.strokeStartTimes = strokeStartTimes
    }
}
