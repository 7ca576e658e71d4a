// The zip fuzz check in bounded form: archives our exporter made, mutated a few thousand times by
// a seeded generator (the same inputs every run), each read as given and with its CRC-32s fixed.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
@testable import LulucatInterchange
import LulucatStoreTesting
import LulucatInterchangeTesting

@Suite struct ZipFuzzTests {
    @Test func seedsAreExportsThatImport() throws {
        let seeds = ZipFuzz.seeds()
        #expect(seeds.map(\.0) == ["package.zip", "no-top-folder.zip", "metadata-only.zip"])
        for (name, bytes) in seeds {
            #expect(ZipFuzz.problem(bytes) == nil, "\(name)")
            #expect(ZipFuzz.withChecksumsFixed(bytes) == bytes, "\(name)")
            let files = try PackageArchive.read(Data(bytes))
            #expect(files.contains { $0.relativePath == "document.json" })
        }
        let package = try PackageArchive.read(Data(seeds[0].1))
        let expected = Dictionary(uniqueKeysWithValues: SamplePackage.files().map { ($0.relativePath, $0.data) })
        #expect(Dictionary(uniqueKeysWithValues: package.map { ($0.relativePath, $0.data) }) == expected)
        #expect(package.prefix(2).map(\.relativePath) == ["manifest.json", "document.json"])
        // Seeds are the same bytes on every run.
        #expect(ZipFuzz.seeds().map(\.1) == seeds.map(\.1))
    }

    @Test func fixingChecksumsLetsChangedDataThrough() throws {
        let zip = ZipFuzz.seeds()[0].1
        let reader = try ZipReader(Data(zip))
        // A byte of a stored entry's data (the asset): the CRC-32 fails as given.
        let asset = try #require(reader.entries.first { $0.method == 0 && $0.uncompressedSize > 0 })
        var bad = zip
        bad[asset.dataOffset + 10] ^= 0x55
        let given = try ZipReader(Data(bad))
        #expect(archiveError { _ = try given.contents(of: asset) }?.kind == .checksumMismatch)
        let fixed = try ZipReader(Data(ZipFuzz.withChecksumsFixed(bad)))
        let contents = try fixed.contents(of: fixed.entry(asset.path)!)
        let original = try reader.contents(of: asset)
        #expect(contents.count == Int(asset.uncompressedSize) && contents != original)
        #expect(ZipFuzz.problem(bad) == nil)
    }

    /// 6,000 mutated archives (bit flips, byte and 32-bit field replacements, truncations,
    /// insertions, repeated runs), each as given and with its CRC-32s recomputed.
    @Test func mutatedArchivesImportOrFailCleanly() {
        let seeds = ZipFuzz.seeds().map(\.1)
        var mutator = ByteMutator(seed: 0x5A49_50)
        var imported = 0
        for i in 0..<6000 {
            let bytes = mutator.mutate(seeds[i % seeds.count])
            if let problem = ZipFuzz.problem(bytes) {
                Issue.record("mutation \(i): \(problem)")
                return
            }
            if (try? PackageArchive.read(Data(ZipFuzz.withChecksumsFixed(bytes)), limits: ZipFuzz.packageLimits)) != nil { imported += 1 }
        }
        #expect(imported > 250, "\(imported)")
    }
}
