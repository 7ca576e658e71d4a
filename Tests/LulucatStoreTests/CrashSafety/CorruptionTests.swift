// Every single-bit flip and every truncation of every file of a small package: detected with a
// clear error, never a crash, never a wrong page shown as good.

import Foundation
import LulucatInk
import Testing
@testable import LulucatStore
import LulucatStoreTesting

@Suite("Bit flips and truncations of a package")
struct CorruptionTests {
    /// A small package on a simulated disk: two pages (one with an image), and what they hold.
    static func smallPackage() async throws -> (tree: SimulatedTree, package: DocumentPackage, pages: [UUID: PageContent]) {
        let fs = SimulatedFileSystem()
        let library = Library(root: "/lib", fileSystem: fs)
        let package = try await library.createDocument(title: "Small", firstPage: nil)
        let s = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil))
        var pages: [UUID: PageContent] = [:]
        for i in 0..<2 {
            let page = try await s.addPage()
            try await s.append([.stroke(SampleContent.stroke(seed: UInt32(i), samples: 6))], to: page)
            if i == 1 {
                try await s.insertImage(Data(SampleContent.assetBytes(seed: 1, count: 40)), fileExtension: "png",
                                        frame: QuantizedRect(x: 0, y: 0, width: 10, height: 10), on: page)
            }
            pages[page] = try await s.content(of: page)
        }
        try await s.close()
        return (fs.snapshot, package, pages)
    }

    /// Every mutation of one file: each bit flipped alone, then each shorter length.
    static func mutations(_ bytes: [UInt8]) -> [(String, [UInt8])] {
        var out: [(String, [UInt8])] = []
        for i in 0..<bytes.count {
            for bit in 0..<8 {
                var b = bytes
                b[i] ^= 1 << bit
                out.append(("bit \(bit) of byte \(i) flipped", b))
            }
        }
        for n in 0..<bytes.count { out.append(("truncated to \(n) bytes", Array(bytes[0..<n]))) }
        return out
    }

    static func replacing(_ path: String, with bytes: [UInt8], in tree: SimulatedTree) throws -> SimulatedFileSystem {
        let fs = SimulatedFileSystem(tree: tree)
        try fs.put(path, bytes)
        return fs
    }

    @Test("a damaged page file is always reported, naming the page and the file")
    func pageFiles() async throws {
        let (tree, package, pages) = try await Self.smallPackage()
        var checked = 0, expected = 0
        for (page, content) in pages {
            let path = package.pagePath(page)
            let original = try SimulatedFileSystem(tree: tree).readFile(path)
            expected += original.count * 9  // 8 flips and 1 truncation per byte
            #expect(try SnapshotEngine.readSnapshot(path, page: page, fileSystem: SimulatedFileSystem(tree: tree)) == content)
            for (what, bytes) in Self.mutations(original) {
                let fs = try Self.replacing(path, with: bytes, in: tree)
                do {
                    let shown = try SnapshotEngine.readSnapshot(path, page: page, fileSystem: fs)
                    Issue.record("page \(page) \(what) was read as good (\(shown.elements.count) elements)")
                } catch {
                    guard case .corruptPage(let p, let at, _, _) = error, p == page, at == path else {
                        Issue.record("page \(what): unexpected error \(error)")
                        continue
                    }
                    #expect(error.description.contains(path))
                }
                checked += 1
            }
        }
        #expect(checked == expected && expected > 1000)
    }

    @Test("a damaged page file through the session and the verifier")
    func pageThroughSession() async throws {
        let (tree, package, pages) = try await Self.smallPackage()
        let page = pages.keys.sorted { $0.uuidString < $1.uuidString }[0]
        let original = try SimulatedFileSystem(tree: tree).readFile(package.pagePath(page))
        // A sample of the mutations through the whole stack: open, load, verify.
        for (what, bytes) in Self.mutations(original).enumerated().filter({ $0.offset % 7 == 0 }).map(\.element) {
            await Task.yield()  // a long loop: the run's other tests get the threads between mutations
            let fs = try Self.replacing(package.pagePath(page), with: bytes, in: tree)
            let s = try await DocumentSession.open(package, fileSystem: fs, options: SessionOptions(autosaveDelay: nil))
            // Salvaged, never silently: only elements that were written, and the open report names
            // the page with what was salvaged and lost.
            let written = Set(pages[page]!.elements)
            if let salvaged = try? await s.content(of: page) {
                #expect(salvaged.elements.allSatisfy(written.contains), "\(what)")
                #expect(await s.openReport.contains { $0.path == package.pagePath(page) && $0.message.contains("salvaged") }, "\(what)")
            }
            for (other, content) in pages where other != page {
                #expect(try await s.content(of: other) == content, "the other page survives \(what)")
            }
            await s.abandon()
            let errors = DocumentVerifier(fileSystem: fs).verify(package).filter { $0.severity == .error }
            #expect(errors.contains { $0.path == package.pagePath(page) }, "verify names the page file: \(what)")
        }
    }

    @Test("a damaged document.json: a clear error, or a document whose every shown page is exactly right")
    func documentJSON() async throws {
        let (tree, package, pages) = try await Self.smallPackage()
        let original = try SimulatedFileSystem(tree: tree).readFile(package.documentPath)
        var refused = 0, opened = 0
        for (what, bytes) in Self.mutations(original) {
            await Task.yield()  // a long loop: the run's other tests get the threads between mutations
            let fs = try Self.replacing(package.documentPath, with: bytes, in: tree)
            let session: DocumentSession
            do { session = try await DocumentSession.open(package, fileSystem: fs, options: SessionOptions(autosaveDelay: nil)) } catch {
                // The error names document.json; the package is left as it was.
                #expect(error.description.contains("document.json"), "\(what): \(error)")
                #expect(try fs.readFile(package.documentPath) == bytes)
                refused += 1
                continue
            }
            opened += 1
            for page in await session.pageIDs() {
                do {
                    let shown = try await session.content(of: page)
                    #expect(shown == pages[page], "\(what): page \(page) shown with other content")
                } catch {
                    #expect(error.description.contains(page.uuidString), "\(what): \(error)")
                }
            }
            await session.abandon()
        }
        #expect(refused > 0 && opened > 0)
        #expect(refused + opened == original.count * 9)
    }

    @Test("a damaged manifest: the library still lists the document, and opening rebuilds it")
    func manifestJSON() async throws {
        let (tree, package, _) = try await Self.smallPackage()
        let original = try SimulatedFileSystem(tree: tree).readFile(package.manifestPath)
        let truth = try PackageReader.readDocument(package, fileSystem: SimulatedFileSystem(tree: tree))
        for (what, bytes) in Self.mutations(original).enumerated().filter({ $0.offset % 3 == 0 }).map(\.element) {
            await Task.yield()  // a long loop: the run's other tests get the threads between mutations
            let fs = try Self.replacing(package.manifestPath, with: bytes, in: tree)
            let library = Library(root: "/lib", fileSystem: fs)
            let listed = try await library.documents()
            #expect(listed.count == 1 && listed[0].id == package.id, "\(what)")
            let s = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil))
            try await s.close()
            #expect(PackageReader.readManifest(package, fileSystem: fs) == Manifest(truth), "\(what)")
        }
    }
}
