// The one-file package export: its layout rules, its round trip and the archives it refuses.

import Foundation
import Testing
@testable import LulucatInterchange

@Suite struct PackageArchiveTests {
    static let doc = UUID(uuidString: "6F1C1F1E-8E55-4C1B-9D0A-3A5B7C2D1E0F")!
    static let page = "0D7B7E3A-2B1C-4F5E-8A9B-1C2D3E4F5A6B"
    static let asset = "A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D"

    static var files: [(relativePath: String, data: Data)] {
        [("pages/\(page).content", Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 * 7) })),
         ("thumbnails/\(page).jpg", Data(repeating: 0xD8, count: 500)),
         ("assets/\(asset).png", Data(repeating: 0x89, count: 700)),
         ("document.json", Data(#"{"id":"\#(doc.uuidString)","pages":["\#(page)"]}"#.utf8)),
         ("manifest.json", Data(#"{"title":"Notes"}"#.utf8)),
         ("pages/\(page).journal", Data([1, 2, 3]))]
    }

    @Test func roundTripWithAndWithoutTopFolder() throws {
        for top in [nil, Self.doc] {
            let zip = try PackageArchive.export(files: Self.files, topFolder: top)
            let back = try PackageArchive.read(zip)
            let expected = Self.files.sorted { a, b in
                func rank(_ p: String) -> Int { p == "manifest.json" ? 0 : p == "document.json" ? 1 : 2 }
                return rank(a.relativePath) != rank(b.relativePath) ? rank(a.relativePath) < rank(b.relativePath)
                    : a.relativePath < b.relativePath
            }
            #expect(back.map(\.relativePath) == expected.map(\.relativePath))
            #expect(back.map(\.data) == expected.map(\.data))
            let reader = try ZipReader(zip)
            let prefix = top.map { "\($0.uuidString).lnote/" } ?? ""
            #expect(reader.entries.allSatisfy { $0.path.hasPrefix(prefix) })
            // Images are stored, the rest deflated.
            #expect(reader.entry(prefix + "assets/\(Self.asset).png")?.method == 0)
            #expect(reader.entry(prefix + "thumbnails/\(Self.page).jpg")?.method == 0)
            #expect(reader.entry(prefix + "document.json")?.method == 8)
            // Same files, any order: the same bytes.
            #expect(try PackageArchive.export(files: Self.files.reversed(), topFolder: top) == zip)
        }
    }

    @Test func loadingFilesOneByOneIntoASinkGivesTheSameBytes() throws {
        let files = Dictionary(uniqueKeysWithValues: Self.files.map { ($0.relativePath, $0.data) })
        var streamed = Data()
        let writer = ZipWriter(sink: { streamed.append(contentsOf: $0) })
        var loaded: [String] = []
        try PackageArchive.write(paths: Array(files.keys), topFolder: Self.doc, to: writer) { path in
            loaded.append(path)
            return files[path]!
        }
        _ = try writer.finish()
        #expect(streamed == (try PackageArchive.export(files: Self.files, topFolder: Self.doc)))
        #expect(loaded.first == "manifest.json" && loaded.count == files.count)
    }

    @Test func streamingReadSeesEveryFile() throws {
        let zip = try PackageArchive.export(files: Self.files, topFolder: Self.doc)
        var seen: [String: Int] = [:]
        try PackageArchive.forEachFile(in: zip) { path, data in seen[path] = data.count }
        #expect(seen.count == Self.files.count)
        for f in Self.files { #expect(seen[f.relativePath] == f.data.count) }
    }

    @Test func layoutPredicate() {
        let ok = ["manifest.json", "document.json", "content.sqlite", "pages/\(Self.page).content",
                  "pages/\(Self.page).journal", "assets/\(Self.asset).jpg", "assets/\(Self.asset).jpeg",
                  "assets/\(Self.asset).heic", "thumbnails/\(Self.page).jpg"]
        for p in ok { #expect(PackageLayout.allowsFile(p), "\(p)") }
        let bad = ["Document.json", "content.sqlite-wal", "pages/\(Self.page.lowercased()).content",
                   "pages/\(Self.page).txt", "pages/\(Self.page)", "pages/\(Self.page).content.bak",
                   "pages/sub/\(Self.page).content", "assets/\(Self.asset).gif", "assets/\(Self.asset).JPG",
                   "thumbnails/\(Self.page).png", "pages/0D7B7E3A2B1C4F5E8A9B1C2D3E4F5A6B.content",
                   "pages/\(Self.page.dropLast())G.content", "x/\(Self.page).content", ".DS_Store"]
        for p in bad { #expect(!PackageLayout.allowsFile(p), "\(p)") }
        #expect(PackageArchive.allowsArchiveName("pages/"))
        #expect(PackageArchive.allowsArchiveName("\(Self.doc.uuidString).lnote/"))
        #expect(PackageArchive.allowsArchiveName("\(Self.doc.uuidString).lnote/pages/"))
        #expect(!PackageArchive.allowsArchiveName("\(Self.doc.uuidString).lnote/\(Self.doc.uuidString).lnote/document.json"))
        #expect(!PackageArchive.allowsArchiveName("notes.lnote/document.json"))
    }

    @Test func exportRefusesPathsOutsideTheLayout() {
        let e = archiveError { _ = try PackageArchive.export(files: [("document.json", Data()), ("../x", Data())]) }
        #expect(e?.kind == .outsideLayout)
        #expect(e?.entry == "../x")
    }

    @Test func readRefusesForeignArchives() {
        let json = Array("{}".utf8)
        func refusal(_ entries: [RawEntry]) -> ArchiveError? {
            archiveError { _ = try PackageArchive.read(RawZip.build(entries)) }
        }
        #expect(refusal([.stored("document.json", json), .stored("evil.sh", json)])?.kind == .outsideLayout)
        #expect(refusal([.stored("document.json", json), .stored("../document.json", json)])?.kind == .unsafeName)
        #expect(refusal([.stored("document.json", json), .stored("content.sqlite-wal", json)])?.kind == .outsideLayout)
        // Entries under two different package folders, or mixed with loose ones.
        let other = UUID().uuidString
        #expect(refusal([.stored("\(Self.doc.uuidString).lnote/document.json", json),
                         .stored("\(other).lnote/manifest.json", json)])?.kind == .outsideLayout)
        #expect(refusal([.stored("\(Self.doc.uuidString).lnote/document.json", json),
                         .stored("manifest.json", json)])?.kind == .outsideLayout)
        // No document.json.
        #expect(refusal([.stored("manifest.json", json)])?.kind == .malformed)
        // A symlink in the right place is still a symlink.
        var link = RawEntry.stored("pages/\(Self.page).content", Array("/etc/passwd".utf8))
        link.externalAttributes = 0o120777 << 16
        #expect(refusal([.stored("document.json", json), link])?.kind == .symlink)
    }

    /// What `zip -r` or Finder make of a package folder: folder entries and one top folder.
    @Test func acceptsAZippedPackageFolder() throws {
        let top = "\(Self.doc.uuidString).lnote/"
        var folder = RawEntry.stored(top, [])
        folder.externalAttributes = 0o040755 << 16
        var pages = RawEntry.stored(top + "pages/", [])
        pages.externalAttributes = 0o040755 << 16
        let data = RawZip.build([folder, .deflated(top + "document.json", Array("{}".utf8)), pages,
                                 .stored(top + "pages/\(Self.page).content", [1, 2, 3])])
        let files = try PackageArchive.read(data)
        #expect(files.map(\.relativePath) == ["document.json", "pages/\(Self.page).content"])
        #expect(files[1].data == Data([1, 2, 3]))
    }
}
