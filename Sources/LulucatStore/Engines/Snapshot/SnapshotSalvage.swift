// Salvage of a page whose snapshot file does not decode: every element whose own record checks
// (PageFile.salvage) keeps its place, the original bytes are kept in the package's recovered/
// folder first, and a finding says how many elements were salvaged and lost.

import Foundation
import LulucatInk

/// What salvaging one page gave.
package struct SalvagedPage {
    package var content: PageContent
    package var salvage: PageFile.Salvage
    /// Where the original bytes were kept (nil when only looked at, as verify does).
    package var keptAt: String?
    package var finding: Finding
}

extension SnapshotEngine {
    /// Salvages `pages/<id>.content`. With `keep`, the original bytes are first written durably to
    /// `recovered/<id>.content` (or `.content.<n>`, the first free); without it nothing is written.
    /// - Throws: what reading the file throws (a missing page is not salvaged).
    package static func salvage(_ id: UUID, canvas: QuantizedSize, package: DocumentPackage, fileSystem fs: any FileSystem,
                                keep: Bool) throws(StoreError) -> SalvagedPage {
        let path = package.pagePath(id)
        let bytes = try readBytes(path, page: id, fileSystem: fs)
        let salvage = PageFile.salvage(bytes, canvasSize: canvas)
        var keptAt: String?
        if keep && !salvage.intact {
            keptAt = try keepInRecovered(bytes, name: id.uuidString + ".content", package: package, fileSystem: fs)
        }
        let n = salvage.salvaged
        let lost = salvage.lost.map { "\($0) lost" } ?? "an unknown number lost (the header is damaged)"
        let kept = keptAt.map { "; the damaged file is kept as \($0)" } ?? " (lnote repair keeps the damaged file in recovered/ and writes the page with them)"
        let message = "the page file is damaged: \(n) element\(n == 1 ? "" : "s") salvaged, \(lost)\(kept)"
        let severity: Finding.Severity = salvage.intact ? .info : (salvage.lost == 0 ? .repaired : .error)
        return SalvagedPage(content: salvage.content, salvage: salvage, keptAt: keptAt, finding: Finding(severity, path, message))
    }

    package static func keepInRecovered(_ bytes: [UInt8], name: String, package: DocumentPackage,
                                        fileSystem fs: any FileSystem) throws(StoreError) -> String {
        try package.keepInRecovered(bytes, name: name, fileSystem: fs)
    }

    package static func ensureRecovered(_ package: DocumentPackage, fileSystem fs: any FileSystem) throws(FileError) {
        try package.ensureRecovered(fs)
    }

    package func salvagePage(_ id: UUID, canvas: QuantizedSize, keep: Bool) throws(StoreError) -> SalvagedPage? {
        try SnapshotEngine.salvage(id, canvas: canvas, package: package, fileSystem: fileSystem, keep: keep)
    }
}
