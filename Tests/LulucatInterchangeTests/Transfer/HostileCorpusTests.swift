// A hostile corpus of our own, bounded: FIFOs and links at every place of a package, archives that
// are bombs within the zip limits, ids that disagree, timestamps out of form. Every command is run
// on each; the suite asserts no crash, no hang (every open is non-blocking by design: no timeout
// is involved), no write outside the library (a sibling folder is compared before and after),
// and a clear error: one that names the file concerned.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreMaintenance
import LulucatStoreThumbnails
@testable import LulucatInterchange
import LulucatStoreTesting
import LulucatInterchangeTesting
#if canImport(Glibc)
import Glibc
#endif

/// Every file under `path` (links not followed) with its bytes or link target: the long run's own.
func siblingSnapshot(_ path: String) -> [String: Data] { HostileRun.snapshot(path) }

/// One hostile change to a package: what it plants, and which path the errors should name.
struct Plant: CustomStringConvertible {
    var description: String
    var apply: (DocumentPackage, UUID, UUID, String) throws -> String  // (package, page, asset, outside) -> planted path
}

@Suite struct HostileCorpusTests {
    init() { Library.enableThumbnails() }
    static func plants() -> [Plant] {
        func fifo(_ name: String, _ path: @escaping (DocumentPackage, UUID, UUID) -> String) -> Plant {
            Plant(description: "FIFO as \(name)") { package, page, asset, _ in
                let p = path(package, page, asset)
                try? FileManager.default.removeItem(atPath: p)
                guard mkfifo(p, 0o644) == 0 else { throw FileError("mkfifo", path: p, errno: errno) }
                return p
            }
        }
        func link(_ name: String, _ path: @escaping (DocumentPackage, UUID, UUID) -> String) -> Plant {
            Plant(description: "symbolic link as \(name)") { package, page, asset, outside in
                let p = path(package, page, asset)
                let target = outside + "/" + UUID().uuidString
                try FileManager.default.moveItem(atPath: p, toPath: target)
                try FileManager.default.createSymbolicLink(atPath: p, withDestinationPath: target)
                return p
            }
        }
        let places: [(String, (DocumentPackage, UUID, UUID) -> String)] = [
            ("manifest.json", { p, _, _ in p.manifestPath }),
            ("document.json", { p, _, _ in p.documentPath }),
            ("the page", { p, page, _ in p.pagePath(page) }),
            ("the asset", { p, _, a in p.assetPath(a, ext: "jpg") }),
            ("the thumbnail", { p, page, _ in p.thumbnailPath(page) }),
            ("the lock", { p, _, _ in p.lockPath }),
        ]
        var all = places.map { fifo($0.0, $0.1) } + places.filter { $0.0 != "the lock" }.map { link($0.0, $0.1) }
        for folder in ["pages", "assets", "thumbnails"] {
            all.append(link(folder + "/", { p, _, _ in p.path + "/" + folder }))
        }
        all.append(link("the package folder", { p, _, _ in p.path }))
        all.append(Plant(description: "document.json naming another document") { package, _, _, _ in
            var doc = try DocumentMetadata.read(package)
            doc.id = UUID()
            try Data(PackageJSON.encode(doc)).write(to: URL(fileURLWithPath: package.documentPath))
            return package.documentPath
        })
        all.append(Plant(description: "document.json with a time offset of +99:99") { package, _, _, _ in
            let text = try String(contentsOfFile: package.documentPath, encoding: .utf8)
            let bad = text.replacingOccurrences(of: "Z\"", with: "+99:99\"")
            try Data(bad.utf8).write(to: URL(fileURLWithPath: package.documentPath))
            return package.documentPath
        })
        all.append(Plant(description: "document.json with an id followed by a NUL") { package, _, _, _ in
            let text = try String(contentsOfFile: package.documentPath, encoding: .utf8)
            let bad = text.replacingOccurrences(of: "\"\(package.id.uuidString)\"", with: "\"\(package.id.uuidString)\\u0000x\"")
            try Data(bad.utf8).write(to: URL(fileURLWithPath: package.documentPath))
            return package.documentPath
        })
        all.append(Plant(description: "a sparse 2 GiB page") { package, page, _, _ in
            let fd = open(package.pagePath(page), O_WRONLY)
            defer { close(fd) }
            guard ftruncate(fd, off_t(2) << 30) == 0 else { throw FileError("truncate", path: package.pagePath(page), errno: errno) }
            return package.pagePath(page)
        })
        return all
    }

    /// Runs every command on the planted package; returns the errors they gave (by command).
    static func everyCommand(_ library: Library, _ package: DocumentPackage, page: UUID, zipTo: String) async -> [(String, String)] {
        var errors: [(String, String)] = []
        func run(_ name: String, _ body: () throws -> Void) {
            do { try body() } catch { errors.append((name, "\(error)")) }
        }
        run("list") { _ = try library.documents() }
        run("info") { _ = try DocumentMetadata.read(package) }
        run("render") { _ = try StoredPage.read(package, page: page) }
        let findings = DocumentVerifier().verify(package).filter { $0.severity == .error }
        if !findings.isEmpty { errors.append(("verify", findings.map(\.description).joined(separator: "; "))) }
        run("export") { try DocumentTransfer.exportArchive(package.id, from: library, to: zipTo) }
        run("duplicate") { _ = try library.duplicate(package.id) }
        run("migrate") { _ = try EngineMigration().migrate(package, to: .journal) }
        let thumbs = ThumbnailWriter.rebuild(package, all: true).filter { $0.severity == .error }
        if !thumbs.isEmpty { errors.append(("thumbnails", thumbs.map(\.description).joined(separator: "; "))) }
        run("repair") { _ = try DocumentRepair().repair(package) }
        do {
            let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
            do {
                try await session.append(Stroke(samples: [Sample(x: 1, y: 2, radius: 10, pressure: 500, time: 0)]), to: page)
                try await session.close()
            } catch {
                await session.abandon()
                errors.append(("edit", "\(error)"))
            }
        } catch { errors.append(("open", "\(error)")) }
        return errors
    }

    @Test(arguments: HostileCorpusTests.plants().indices)
    func aHostilePlaceIsRefusedClearlyAndNothingOutsideChanges(_ index: Int) async throws {
        let plant = HostileCorpusTests.plants()[index]
        let root = NSTemporaryDirectory() + "lnote-corpus-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let outside = root + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try #require(FileManager.default.createFile(atPath: outside + "/bystander.txt", contents: Data("untouched".utf8)))
        let library = Library(root: root + "/library")
        let package = try await library.createDocument(title: "Target")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: ThumbnailOptions(width: 32)))
        let page = await session.pageIDs()[0]
        try await session.append(Stroke(samples: (0..<20).map { Sample(x: Int32($0 * 10), y: 50, radius: 10, pressure: 500, time: UInt32($0 * 4)) }), to: page)
        let asset = try await session.insertImage(Data(repeating: 7, count: 300), fileExtension: "jpg",
                                                  frame: QuantizedRect(x: 0, y: 0, width: 50, height: 50), on: page).assetID
        try await session.close()
        let bystander = try await library.createDocument(title: "Bystander")

        let planted = try plant.apply(package, page, asset, outside)
        let before = siblingSnapshot(outside)
        let errors = await HostileCorpusTests.everyCommand(library, package, page: page, zipTo: root + "/out.zip")

        #expect(siblingSnapshot(outside) == before, "\(plant): something was written outside the library")
        #expect(!errors.isEmpty, "\(plant): no command noticed")
        // Verify names the planted file (or the folder or package it sits in).
        let named = errors.contains { $0.0 == "verify" && ($0.1.contains(planted) || $0.1.contains(package.path)) }
        #expect(named || plant.description.contains("lock") || plant.description.contains("thumbnail"), "\(plant): \(errors)")
        // The other document is untouched and still listed.
        #expect(try await library.documents().contains { $0.id == bystander.id && $0.problem == nil })
        #expect(DocumentVerifier().verify(bystander).allSatisfy { $0.severity != .error })
    }

    /// Archives that must be refused, or imported without their hostile part, writing nothing
    /// outside the library and leaving no staging folder.
    @Test func hostileArchivesCostNoMoreThanTheirBounds() async throws {
        let root = NSTemporaryDirectory() + "lnote-corpus-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let source = Library(root: root + "/source")
        let package = try await source.createDocument(title: "Source")
        let doc = try DocumentMetadata.read(package)
        let page = doc.pages[0].id
        let pageBytes = try Data(contentsOf: URL(fileURLWithPath: package.pagePath(page)))
        let docBytes = Data(PackageJSON.encode(doc))
        func zip(_ files: [(String, Data)], top: UUID? = nil) throws -> Data {
            let w = ZipWriter()
            let prefix = top.map { "\($0.uuidString).lnote/" } ?? ""
            for (p, d) in files { try w.add(path: prefix + p, data: d, method: .deflated) }
            return try w.finish()
        }
        var otherID = doc
        otherID.id = UUID()
        let badTime = Data(String(decoding: docBytes, as: UTF8.self).replacingOccurrences(of: "Z\"", with: "+99:99\"").utf8)
        // A journal of 20,000 moves on a page of 20,000 strokes: 8 x 10^8 element visits to
        // replay, over the import's budget (ImportLimits.maxReplayScan), held in a small archive.
        let journalPackage = try await source.createDocument(title: "Moves", engine: .journal)
        var journalDoc = try DocumentMetadata.read(journalPackage)
        let journalPage = journalDoc.pages[0].id
        let moves = try HostileJournal(elements: 20_000, frames: 20_000)
        journalDoc.pages[0].elementCount = 20_000
        let movesZip = try zip([("document.json", Data(PackageJSON.encode(journalDoc))),
                                ("pages/\(journalPage.uuidString).content", Data(moves.snapshot)),
                                ("pages/\(journalPage.uuidString).journal", Data(moves.journal))])
        #expect(moves.scanCost > 2 * ImportLimits.maxReplayScan)
        #expect(movesZip.count < 512 << 10)  // about 275 KB with page and journal format 2 records
        let corpus: [(String, Data, Bool)] = [  // (what, archive, may import)
            ("a journal of 20,000 moves on a page of 20,000 strokes", movesZip, false),
            ("4,000 orphan assets of 64 KiB zeros", try zip([("document.json", docBytes), ("pages/\(page.uuidString).content", pageBytes)]
                + (0..<4000).map { _ in ("assets/\(UUID().uuidString).png", Data(count: 64 << 10)) }), true),
            ("2,000 unlisted pages", try zip([("document.json", docBytes), ("pages/\(page.uuidString).content", pageBytes)]
                + (0..<2000).map { _ in ("pages/\(UUID().uuidString).content", Data(count: 1024)) }), true),
            ("an invalid document.json after 64 MiB of zeros", try zip([("pages/\(page.uuidString).content", Data(count: 64 << 20)),
                                                                        ("document.json", Data("{\"format\": 1}".utf8))]), false),
            ("a listed page of 16 MiB of zeros", try zip([("document.json", docBytes), ("pages/\(page.uuidString).content", Data(count: 16 << 20))]), false),
            ("a top folder that names another document", try zip([("document.json", Data(PackageJSON.encode(otherID))),
                                                                  ("pages/\(page.uuidString).content", pageBytes)], top: doc.id), false),
            ("a time offset of +99:99", try zip([("document.json", badTime), ("pages/\(page.uuidString).content", pageBytes)]), false),
        ]
        let outside = root + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try #require(FileManager.default.createFile(atPath: outside + "/bystander.txt", contents: Data("untouched".utf8)))
        for (what, archive, mayImport) in corpus {
            let target = Library(root: root + "/target-" + UUID().uuidString)
            let before = siblingSnapshot(outside)
            do {
                let result = try DocumentTransfer.importArchive(archive, into: target)
                #expect(mayImport, "\(what) was imported")
                let bytes = siblingSnapshot(target.root).values.reduce(0) { $0 + $1.count }
                #expect(UInt64(bytes) <= ImportLimits.maxOrphanBytes + UInt64(pageBytes.count) + (1 << 20), "\(what): \(bytes) bytes stored")
                #expect(result.findings.contains { $0.message.hasPrefix("not imported") }, "\(what)")
            } catch {
                #expect(!mayImport, "\(what): \(error)")
                #expect(!"\(error)".isEmpty)
                #expect(try await target.documents().isEmpty)
            }
            #expect(target.stagingFolders().isEmpty, "\(what)")
            #expect(siblingSnapshot(outside) == before, "\(what)")
        }
    }
}
