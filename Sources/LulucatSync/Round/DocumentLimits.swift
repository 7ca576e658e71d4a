// A synced document obeys the limits of an imported one (docs/sync.md §4.1): what a head names is
// counted before any of its blobs is fetched, what each page would take here before it is decoded.

import Foundation
import LulucatInk
import LulucatStore

/// The limits of an imported document (`ImportLimits`, `PackageLimits`), applied to what a head
/// from the remote would make of a document here.
enum DocumentLimits {
    /// Pages and assets together, as an archive's entries.
    static let maxFiles = ImportLimits.maxFiles
    /// A page as it would be written here.
    static let maxPageBytes = UInt64(PackageLimits.maxPageFileSize)
    /// The pages as they would be written here, together.
    static let maxDocumentBytes = ImportLimits.maxDocumentBytes
    /// The least a stroke record takes in a page file besides its samples (id, ink, count).
    static let strokeOverhead: UInt64 = 40
    /// The least a sample takes in the fixed16 codec (x, y and time at 4 bytes, 4 more channels at 1).
    static let fixed16SampleBytes: UInt64 = 16

    /// Checked on a head before any of its blobs is fetched: what it names, counted.
    static func check(_ head: Head, name: String) throws(SyncError) {
        let files = head.pages.count + head.assets.count
        guard files <= maxFiles else {
            throw .overLimit(object: "head \(name)", reason: "it names \(files) pages and assets, more than the \(maxFiles) an imported document may hold")
        }
    }

    /// The least bytes a page holding `summary` (its canonical compact file `fileBytes` long) takes
    /// here in `codec`: the compact file itself, or in fixed16 at least 16 bytes a sample. A lower
    /// bound, so a page refused is certainly over the limit.
    static func pageBytes(_ summary: PageSummary, fileBytes: Int, codec: SampleCodecID) -> UInt64 {
        let compact = UInt64(fileBytes)
        guard codec == .fixed16 else { return compact }
        return max(compact, UInt64(summary.elementCount) * strokeOverhead + UInt64(summary.sampleCount) * fixed16SampleBytes)
    }

    /// Why a page of `bytes` here is over the page limit, or nil.
    static func pageOverLimit(_ bytes: UInt64, samples: Int) -> String? {
        bytes <= maxPageBytes ? nil : "its page holds \(samples) samples, \(bytes) bytes or more here, more than the \(maxPageBytes) a page may take"
    }

    /// The pages of a head fetched so far, checked against the document limit.
    static func checkDocument(_ bytes: UInt64, name: String) throws(SyncError) {
        guard bytes <= maxDocumentBytes else {
            throw .overLimit(object: "head \(name)", reason: "its pages would take \(bytes) bytes or more here, more than the \(maxDocumentBytes) of an imported document")
        }
    }
}
