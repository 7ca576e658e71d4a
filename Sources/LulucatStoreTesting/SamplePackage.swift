// A small document package's files as the store writes them, with fixed ids and times, so that
// fuzz seeds built from it (zip exports) are the same bytes on every run.

import Foundation
import LulucatStore
import LulucatInk

/// The files of a two-page package: manifest.json, document.json, a snapshot page with an image,
/// a page with a journal on its snapshot, the image's asset and a thumbnail.
public enum SamplePackage {
    public static let documentID = SampleContent.uuid(0x5EED, 1)

    /// Package-relative paths and contents.
    public static func files() -> [(relativePath: String, data: Data)] {
        let asset = SampleContent.uuid(7, 7)
        let first = SampleContent.page(seed: 3, strokes: 4, images: [asset])
        let pageIDs = [SampleContent.uuid(0x5EED, 100), JournalFuzz.pageID]
        let created = Date(timeIntervalSince1970: 1_790_000_000.123)
        var doc = DocumentMetadata(id: documentID, title: "Seed notebook", created: created, modified: created)
        doc.pages = [PageEntry(id: pageIDs[0], canvas: first.canvasSize, created: created, modified: created,
                               elementCount: first.elements.count),
                     PageEntry(id: pageIDs[1], canvas: JournalFuzz.basePage.canvasSize, created: created, modified: created,
                               elementCount: JournalFuzz.basePage.elements.count)]
        return [
            ("manifest.json", Data(PackageJSON.encode(Manifest(doc)))),
            ("document.json", Data(PackageJSON.encode(doc))),
            ("pages/\(pageIDs[0].uuidString).content", Data(try! PageFile.encode(first))),
            ("pages/\(pageIDs[1].uuidString).content", Data(JournalFuzz.snapshots[0])),
            ("pages/\(pageIDs[1].uuidString).journal", Data(JournalFuzz.seeds()[0].1)),
            ("assets/\(asset.uuidString).jpg", Data(SampleContent.assetBytes(seed: 1, count: 400))),
            ("thumbnails/\(pageIDs[0].uuidString).jpg", Data(SampleContent.assetBytes(seed: 2, count: 200))),
        ]
    }
}
