// withConsistentFiles takes no lock and returns only a read during which no file changed: counted
// attempts, a page rewritten under the first read, a document that never stops changing.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
#if canImport(Glibc)
import Glibc
#endif

@Suite struct ConsistentFilesTests {
    static func library() throws -> (Library, DocumentPackage, UUID, String) {
        let root = NSTemporaryDirectory() + "lnote-consistent-" + UUID().uuidString
        let library = Library(root: root)
        let package = try library.createDocument(title: "Read while written")
        return (library, package, try DocumentMetadata.read(package).pages[0].id, root)
    }

    @Test func aFileReplacedDuringTheReadMakesItReadAgain() throws {
        let (library, package, page, root) = try Self.library()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var calls = 0
        let pagePath = package.pagePath(page)
        let original = try Data(contentsOf: URL(fileURLWithPath: pagePath))
        let read = try library.withConsistentFiles(package.id) { p, files -> Data in
            calls += 1
            let bytes = try Data(contentsOf: URL(fileURLWithPath: pagePath))
            if calls == 1 {
                // A save lands: the page is replaced by rename, as the store writes it.
                try PosixFileSystem().writeAtomically(Array(original), to: pagePath)
            }
            #expect(files.contains("pages/\(page.uuidString).content"))
            return bytes
        }
        #expect(calls == 2)
        #expect(read == original)
        // No lock was taken: a session opens while the files are read.
        try library.withConsistentFiles(package.id) { p, _ in
            let lock = try p.lockForWriting(library.fileSystem)
            library.fileSystem.unlock(lock)
        }
    }

    /// manifest.json is a cache: a package without it is still read (found by re-checking issue 18
    /// against the binary: `lnote export` failed on such a package); a FIFO in its place is not.
    @Test func aMissingManifestIsLeftOutAndAFIFOManifestIsRefused() throws {
        let (library, package, page, root) = try Self.library()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.removeItem(atPath: package.manifestPath)
        let files = try library.withConsistentFiles(package.id) { p, files in
            try files.map { try library.fileSystem.readFile(p.path + "/" + $0).count }.count == files.count ? files : []
        }
        #expect(files == ["document.json", "pages/\(page.uuidString).content"])
        #expect(mkfifo(package.manifestPath, 0o644) == 0)
        #expect(throws: (any Error).self) {
            try library.withConsistentFiles(package.id) { p, files in
                for f in files { _ = try library.fileSystem.readFile(p.path + "/" + f) }
            }
        }
    }

    @Test func aDocumentThatNeverStopsChangingIsRefusedAfterTheAttempts() throws {
        let (library, package, page, root) = try Self.library()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var calls = 0
        let pagePath = package.pagePath(page)
        let original = try Data(contentsOf: URL(fileURLWithPath: pagePath))
        let error = #expect(throws: StoreError.self) {
            try library.withConsistentFiles(package.id) { _, _ in
                calls += 1
                try PosixFileSystem().writeAtomically(Array(original), to: pagePath)
            }
        }
        #expect("\(String(describing: error))".contains("changed while it was read, \(Library.consistentReadAttempts) times"))
        #expect(calls == Library.consistentReadAttempts)
        // A failure of the read itself while nothing changed is the caller's error, at once.
        calls = 0
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try library.withConsistentFiles(package.id) { _, _ in calls += 1; throw Refused() }
        }
        #expect(calls == 1)
    }
}
