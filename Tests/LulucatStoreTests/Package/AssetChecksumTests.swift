// Asset files carry a checksum in document.json (package-format.md): recorded when the store
// writes an asset, checked by verify, dropped with the orphan; packages from before have none and
// read as before.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct AssetChecksumTests {
    func documentWithImage(_ library: Library) async throws -> (DocumentPackage, UUID) {
        let package = try await library.createDocument(title: "Photo")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let image = try await session.insertImage(Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7) }), fileExtension: "jpg",
                                                  frame: QuantizedRect(x: 0, y: 0, width: 100, height: 100), on: await session.pageIDs()[0])
        try await session.close()
        return (package, image.assetID)
    }

    @Test func aWrittenAssetsChecksumIsRecordedAndVerified() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, asset) = try await documentWithImage(library)
        let doc = try DocumentMetadata.read(package)
        let bytes = try #require(readBytes(package.assetPath(asset, ext: "jpg")))
        #expect(doc.assetChecksums?[asset.uuidString] == AssetChecksum.of(bytes))
        #expect(AssetChecksum.of(Array("123456789".utf8)) == "crc32c:e3069283")  // the CRC-32C check value
        #expect(DocumentVerifier().verify(package).allSatisfy { $0.severity != .error })

        var damaged = bytes
        damaged[100] ^= 0x20
        try Data(damaged).write(to: URL(fileURLWithPath: package.assetPath(asset, ext: "jpg")))
        let findings = DocumentVerifier().verify(package)
        #expect(findings.contains { $0.severity == .error && $0.path == package.assetPath(asset, ext: "jpg") && $0.message.contains("checksum") })
    }

    @Test func aFileIsCheckedInPiecesWithTheSameResult() throws {
        let tmp = TemporaryFolder()
        let bytes = (0..<(3 << 20) + 12_345).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        try Data(bytes).write(to: URL(fileURLWithPath: tmp.path + "/a.jpg"))
        #expect(try AssetChecksum.ofFile(tmp.path + "/a.jpg", fileSystem: PosixFileSystem()) == AssetChecksum.of(bytes))
    }

    @Test func aPackageWithoutChecksumsReadsAsBefore() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, asset) = try await documentWithImage(library)
        var doc = try DocumentMetadata.read(package)
        doc.assetChecksums = nil
        let old = PackageJSON.encode(doc)
        #expect(!String(decoding: old, as: UTF8.self).contains("assetChecksums"))
        try Data(old).write(to: URL(fileURLWithPath: package.documentPath))
        #expect(DocumentVerifier().verify(package).allSatisfy { $0.severity != .error })
        // Damage goes unseen there (nothing to check against), as it did before.
        var bytes = try #require(readBytes(package.assetPath(asset, ext: "jpg")))
        bytes[0] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: package.assetPath(asset, ext: "jpg")))
        #expect(DocumentVerifier().verify(package).allSatisfy { $0.severity != .error })
    }

    @Test func aMalformedChecksumIsAnErrorAndAnOrphansChecksumGoesWithIt() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, asset) = try await documentWithImage(library)
        var doc = try DocumentMetadata.read(package)
        doc.assetChecksums = [asset.uuidString: "crc32c:XYZ"]
        try Data(PackageJSON.encode(doc)).write(to: URL(fileURLWithPath: package.documentPath))
        #expect(DocumentVerifier().verify(package).contains { $0.severity == .error && $0.message.contains("not crc32c") })

        // The image deleted: at close the orphan asset and its checksum are removed.
        let (second, image) = try await documentWithImage(library)
        let session = try await library.open(second.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        let element = try #require(try await session.content(of: page).elements.first { if case .image = $0 { return true } else { return false } })
        try await session.delete([element.id], from: page)
        try await session.close()
        #expect(readBytes(second.assetPath(image, ext: "jpg")) == nil)
        #expect(try DocumentMetadata.read(second).assetChecksums?[image.uuidString] == nil)
    }
}
