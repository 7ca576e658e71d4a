import Foundation
import Testing
import LulucatInk
import LulucatRender
@testable import LulucatStore
@testable import LulucatStoreThumbnails
import LulucatStoreTesting

@Suite struct ThumbnailTests {
    init() { Library.enableThumbnails() }
    @Test func savedPagesGetThumbnailsAndTheCoverIsTheFirstPage() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Covers")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: ThumbnailOptions(width: 120)))
        let first = await session.pageIDs()[0]
        let second = try await session.addPage()
        try await session.append(sampleStroke(), to: first)
        try await session.append(sampleStroke(), to: second)
        try await session.close()  // waits for the thumbnails
        for page in [first, second] {
            let jpeg = try #require(readBytes(package.thumbnailPath(page)))
            let image = try RGBAImage(decoding: Data(jpeg))
            #expect(image.width == 120)
            #expect(image.height == 155)  // letter aspect ratio, 792 / 612 * 120 rounded down
        }
        #expect(try await library.documents()[0].coverThumbnailPath == package.thumbnailPath(first))
        // Ink shows: some pixel is dark.
        let cover = try RGBAImage(decoding: Data(readBytes(package.thumbnailPath(first))!))
        var dark = 0
        for y in 0..<cover.height { for x in 0..<cover.width where cover.pixel(x: x, y: y).r < 240 { dark += 1 } }
        #expect(dark > 0)
    }

    @Test func thumbnailsOffWritesNone() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "None")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        try await session.append(sampleStroke(), to: await session.pageIDs()[0])
        try await session.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: package.thumbnailsPath).isEmpty)
    }

    @Test func missingAndStaleThumbnailsAreRegenerated() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Stale")
        let page = try DocumentMetadata.read(package).pages[0].id
        var findings = ThumbnailWriter.rebuild(package)
        #expect(findings.contains { $0.severity == .repaired })
        #expect(readBytes(package.thumbnailPath(page)) != nil)
        // Up to date now: nothing to do.
        #expect(ThumbnailWriter.rebuild(package).isEmpty)
        // --rebuild redoes all.
        findings = ThumbnailWriter.rebuild(package, all: true)
        #expect(findings.count == 1)
    }

    @Test func aMissingAssetIsAPlaceholderNotAFailure() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Asset")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        try await session.insertImage(Data([0xFF, 0xD8, 0x00]), fileExtension: "jpg",
                                      frame: QuantizedRect(x: 100, y: 100, width: 1000, height: 800), on: page)
        try await session.close()
        let findings = ThumbnailWriter.rebuild(package, all: true)
        #expect(findings.contains { $0.severity == .warning })  // the undecodable asset, reported
        #expect(readBytes(package.thumbnailPath(page)) != nil)   // the thumbnail still written
    }
}
