// Locations as URLs (issue 32, item 7): a library opened with a file URL is the same library as
// with its path, and the URL forms of its locations (root, cover thumbnail, asset) name the same
// files as the path forms.

import Foundation
import Testing
import LulucatInk
import LulucatHandwriting
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct LibraryURLTests {
    init() { Library.enableThumbnails() }

    /// A root with a space in its name (percent-encoded in the URL, not in the path) and a
    /// trailing slash: the URL form and the path form list the same documents, and each URL
    /// (root, cover thumbnail, asset) is a file URL whose path is the path form's, on files that
    /// are there with the bytes written.
    @Test func urlAndPathFormsNameTheSameFiles() async throws {
        let tmp = TemporaryFolder()
        let rootPath = tmp.path + "/My Notes"
        let byURL = Library(root: URL(fileURLWithPath: rootPath + "/", isDirectory: true))
        let byPath = Library(root: rootPath)
        #expect(byURL.root == rootPath && byPath.root == rootPath)
        #expect(byURL.rootURL == byPath.rootURL)
        #expect(byPath.rootURL.isFileURL && byPath.rootURL.path == rootPath && byPath.rootURL.absoluteString.hasSuffix("/My%20Notes/"))

        let package = try await byURL.createDocument(title: "Both ways")
        #expect(package.path == byPath.package(package.id).path)
        let session = try await byPath.open(package.id, options: SessionOptions(autosaveDelay: nil))
        let page = await session.pageIDs()[0]
        try await session.append(HandwritingGenerator(seed: 3213).page(strokes: 3, canvas: .letter).strokes[0], to: page)
        let bytes = Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3, 4])
        let image = try await session.insertImage(bytes, fileExtension: "png", frame: QuantizedRect(x: 0, y: 0, width: 80, height: 80), on: page)
        let assetPath = try await session.assetPath(of: image)
        let assetURL = try await session.assetURL(of: image)
        #expect(assetURL.isFileURL && assetURL.path == assetPath)
        #expect(try Data(contentsOf: assetURL) == bytes && FileManager.default.contents(atPath: assetPath) == bytes)
        try await session.close()

        let listedByURL = try await byURL.documents(), listedByPath = try await byPath.documents()
        #expect(listedByURL == listedByPath && listedByURL.map(\.id) == [package.id])
        let entry = try #require(listedByURL.first)
        let cover = try #require(entry.coverThumbnailURL)
        #expect(cover.isFileURL && cover.path == entry.coverThumbnailPath)
        #expect(FileManager.default.fileExists(atPath: cover.path), "the cover was drawn when the page was saved")

        // A document with no page has no cover, in either form.
        let empty = try await byURL.createDocument(title: "No pages", firstPage: nil)
        let emptyEntry = try #require(try await byPath.documents().first { $0.id == empty.id })
        #expect(emptyEntry.coverThumbnailPath == nil && emptyEntry.coverThumbnailURL == nil)
    }
}
