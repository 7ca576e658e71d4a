// Hostile places inside a library: FIFOs and devices where package files should be, symbolic links
// at every folder of a package. Every command refuses them with a clear error; none waits, and
// none reads or writes through a link (a sibling folder is compared before and after).

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
@testable import LulucatStoreMaintenance
@testable import LulucatStoreThumbnails
@testable import LulucatStoreSQLite
import LulucatStoreTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A library root and a sibling folder outside it, in one temporary folder.
struct HostileLibrary {
    let tmp = TemporaryFolder()
    var root: String { tmp.path + "/library" }
    var outside: String { tmp.path + "/outside" }
    var library: Library { Library(root: root) }

    init() {
        try! FileManager.default.createDirectory(atPath: tmp.path + "/library", withIntermediateDirectories: true)
        try! FileManager.default.createDirectory(atPath: tmp.path + "/outside", withIntermediateDirectories: true)
    }

    /// A document with a stroke, an image and a thumbnail on its first page.
    func document(_ title: String, engine: EngineKind = .snapshot) async throws -> (DocumentPackage, UUID, UUID) {
        let package = try await library.createDocument(title: title, engine: engine)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: ThumbnailOptions(width: 40)))
        let page = await session.pageIDs()[0]
        try await session.append(sampleStroke(), to: page)
        let image = try await session.insertImage(Data(SampleContent.assetBytes(seed: 1, count: 300)), fileExtension: "jpg",
                                                  frame: QuantizedRect(x: 0, y: 0, width: 100, height: 100), on: page)
        try await session.close()
        return (package, page, image.assetID)
    }
}

/// Every file under `path` (links not followed) with its bytes, or its link target.
func treeSnapshot(_ path: String) -> [String: Data] {
    var out: [String: Data] = [:]
    let fm = FileManager.default
    func walk(_ p: String, _ rel: String) {
        guard let attrs = try? fm.attributesOfItem(atPath: p), let type = attrs[.type] as? FileAttributeType else { return }
        switch type {
        case .typeDirectory:
            out[rel + "/"] = Data()
            for name in (try? fm.contentsOfDirectory(atPath: p)) ?? [] { walk(p + "/" + name, rel + "/" + name) }
        case .typeSymbolicLink: out[rel] = Data(((try? fm.destinationOfSymbolicLink(atPath: p)) ?? "?").utf8)
        case .typeRegular: out[rel] = fm.contents(atPath: p) ?? Data()
        default: out[rel] = Data("special".utf8)
        }
    }
    walk(path, "")
    return out
}

func makeFIFO(_ path: String) throws {
    try? FileManager.default.removeItem(atPath: path)
    guard mkfifo(path, 0o644) == 0 else { throw FileError("mkfifo", path: path, errno: errno) }
}

/// Moves a folder outside the library and leaves a symbolic link to it in its place.
func replaceWithLink(_ path: String, movingTo target: String) throws {
    try FileManager.default.moveItem(atPath: path, toPath: target)
    try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
}

func isRefusal(_ error: any Error, _ kind: String? = nil) -> Bool {
    let text = "\(error)"
    if let kind { return text.contains("it is a \(kind)") || text.contains(kind) }
    return text.contains("it is a ") || text.contains("symbolic link") || text.contains("FIFO")
}

@Suite struct HostilePlaceTests {
    init() { Library.enableSQLiteEngine(); Library.enableThumbnails() }
    // MARK: FIFOs and devices

    @Test func everyOpenModeRefusesAFIFOWithoutWaiting() throws {
        let tmp = TemporaryFolder()
        let fifo = tmp.path + "/x.content"
        try makeFIFO(fifo)
        let fs = PosixFileSystem()
        for mode in [OpenMode.read, .append, .readWrite] {
            #expect {
                _ = try fs.open(fifo, mode)
            } throws: { ($0 as? FileError)?.found == "FIFO" }
        }
        #expect { _ = try fs.readFile(fifo) } throws: { ($0 as? FileError)?.found == "FIFO" }
        #expect { _ = try fs.lock(fifo) } throws: { ($0 as? FileError)?.found == "FIFO" }
        #expect(try fs.info(fifo)?.kind == .other)
        #expect("\(FileError("open", path: fifo, errno: EINVAL, found: "FIFO"))".contains("it is a FIFO"))
    }

    @Test func aDeviceIsNotReadAsAFile() throws {
        #expect { _ = try PosixFileSystem().readFile("/dev/zero") } throws: { ($0 as? FileError)?.found == "character device" }
        #expect { _ = try PosixFileSystem().readFile("/dev/null") } throws: { ($0 as? FileError)?.found == "character device" }
    }

    @Test func listShowsTheOtherDocumentsAndFlagsTheOneWithAFIFOManifest() async throws {
        let h = HostileLibrary()
        let a = try await h.library.createDocument(title: "A")
        let b = try await h.library.createDocument(title: "B")
        let c = try await h.library.createDocument(title: "C")
        try makeFIFO(b.manifestPath)
        var entries = try await h.library.documents()
        #expect(entries.count == 3)
        #expect(entries.first { $0.id == a.id }?.problem == nil)
        #expect(entries.first { $0.id == c.id }?.problem == nil)
        let flagged = try #require(entries.first { $0.id == b.id })
        #expect(flagged.title == "B" && flagged.problem != nil)
        // Both JSON files FIFOs: still listed, as unreadable.
        try makeFIFO(b.documentPath)
        entries = try await h.library.documents()
        #expect(entries.count == 3)
        #expect(entries.first { $0.id == b.id }?.title == "(unreadable)")
    }

    @Test func everyPackageFileAsAFIFOIsRefusedByEveryReader() async throws {
        let h = HostileLibrary()
        let (template, page, asset) = try await h.document("Template")
        let targets: [(String, (DocumentPackage) -> String)] = [
            ("document.json", { $0.documentPath }),
            ("page", { $0.pagePath(page) }),
            ("asset", { $0.assetPath(asset, ext: "jpg") }),
            ("thumbnail", { $0.thumbnailPath(page) }),
            ("lock", { $0.lockPath }),
        ]
        for (name, path) in targets {
            let copy = try await h.library.duplicate(template.id, title: name)
            let copied = DocumentPackage(id: copy.id, libraryRoot: h.root)
            try makeFIFO(path(copied))
            let findings = DocumentVerifier().verify(copied)
            if name != "lock" {
                #expect(findings.contains { $0.severity == .error }, "verify with a FIFO as the \(name)")
            }
            #expect(findings.contains { $0.path == path(copied) && $0.message.contains("FIFO") || $0.message.contains("FIFO") } || name == "thumbnail" || name == "lock",
                    "verify names the FIFO (\(name)): \(findings)")
            // Opening for writing: refused, or (page, asset, thumbnail) the FIFO is found by what reads it.
            do {
                let session = try await h.library.open(copied.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
                if name == "page" {
                    await #expect(throws: (any Error).self) { _ = try await session.content(of: page) }
                }
                try await session.close()
                #expect(name != "document.json" && name != "lock", "open should refuse a FIFO \(name)")
            } catch {
                #expect(isRefusal(error), "\(name): \(error)")
            }
            if name == "page" || name == "document.json" {
                #expect(throws: (any Error).self) { _ = try StoredPage.read(copied, page: page) }
            }
            // The FIFO is still there, untouched.
            #expect(try PosixFileSystem().info(path(copied))?.kind == .other, "\(name)")
        }
    }

    @Test func aFIFOAsTheSQLiteDatabaseIsRefused() async throws {
        let h = HostileLibrary()
        let (package, page, _) = try await h.document("SQLite", engine: .sqlite)
        try makeFIFO(package.contentDatabasePath)
        #expect { _ = try StoredPage.read(package, page: page) } throws: { "\($0)".contains("not a regular file") }
        #expect(DocumentVerifier().verify(package).contains { $0.severity == .error })
        await #expect(throws: (any Error).self) { _ = try await h.library.open(package.id) }
        #expect(try PosixFileSystem().info(package.contentDatabasePath)?.kind == .other)
    }

    // MARK: Symbolic links at each folder of a package

    @Test func aSymlinkedPackageFolderIsRefusedByEveryCommand() async throws {
        let h = HostileLibrary()
        let (package, page, _) = try await h.document("Linked")
        try replaceWithLink(package.path, movingTo: h.outside + "/" + DocumentPackage.directoryName(package.id))
        let before = treeSnapshot(h.outside)

        let entry = try await #require(try h.library.documents().first { $0.id == package.id })
        #expect(entry.problem != nil)
        await #expect { _ = try await h.library.open(package.id) } throws: { isRefusal($0, "symbolic link") }
        #expect(DocumentVerifier().verify(package).contains { $0.severity == .error && $0.message.contains("symbolic link") })
        #expect(throws: (any Error).self) { _ = try StoredPage.read(package, page: page) }
        #expect(throws: (any Error).self) { _ = try DocumentMetadata.read(package) }
        #expect(throws: (any Error).self) { _ = try EngineMigration().migrate(package, to: .journal) }
        #expect(throws: (any Error).self) { _ = try EngineMigration().migrate(package, to: .sqlite) }
        #expect(throws: (any Error).self) { _ = try h.library.withConsistentFiles(package.id) { _, _ in 0 } }
        #expect(throws: (any Error).self) { _ = try h.library.duplicate(package.id) }
        let rebuilt = ThumbnailWriter.rebuild(package, all: true)
        #expect(rebuilt.contains { $0.severity == .error })
        _ = try? DocumentRepair().repair(package)
        #expect(treeSnapshot(h.outside) == before, "nothing written through the link")
    }

    @Test(arguments: ["pages", "assets", "thumbnails"])
    func aSymlinkedFolderInsideAPackageIsRefused(_ folder: String) async throws {
        let h = HostileLibrary()
        let (package, page, _) = try await h.document("Inner link")
        let inner = package.path + "/" + folder
        try replaceWithLink(inner, movingTo: h.outside + "/" + folder)
        let before = treeSnapshot(h.outside)

        #expect(DocumentVerifier().verify(package).contains { $0.severity == .error && $0.path == inner })
        #expect(throws: (any Error).self) { _ = try h.library.withConsistentFiles(package.id) { _, files in files } }
        if folder == "pages" {
            #expect { _ = try StoredPage.read(package, page: page) } throws: { isRefusal($0, "symbolic link") }
        }
        await #expect(throws: (any Error).self) {
            let s = try await h.library.open(package.id, options: SessionOptions(autosaveDelay: nil))
            try await s.append(sampleStroke(seed: 9), to: page)
            try await s.close()
        }
        if folder != "thumbnails" {  // a migration never touches thumbnails
            #expect(throws: (any Error).self) { _ = try EngineMigration().migrate(package, to: .journal) }
        }
        _ = ThumbnailWriter.rebuild(package, all: true)
        _ = try? DocumentRepair().repair(package)
        #expect(treeSnapshot(h.outside) == before, "nothing written through the \(folder) link")
    }

    @Test func aLinkedLibraryRootIsTheUsersChoiceAndWorks() async throws {
        let h = HostileLibrary()
        let linked = h.tmp.path + "/root-link"
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: h.root)
        let library = Library(root: linked)
        let package = try await library.createDocument(title: "Through the root link")
        let session = try await library.open(package.id)
        try await session.append(sampleStroke(), to: await session.pageIDs()[0])
        try await session.close()
        #expect(DocumentVerifier().verify(package).allSatisfy { $0.severity != .error })
    }

    @Test func aSparseTwoGigabytePageIsRefusedByItsSizeBeforeItIsRead() async throws {
        let h = HostileLibrary()
        let (package, page, _) = try await h.document("Sparse")
        let fd = open(package.pagePath(page), O_WRONLY)
        #expect(fd >= 0)
        #expect(ftruncate(fd, off_t(2) << 30) == 0)  // 2 GiB, no blocks: reading it whole would cost 2 GB
        close(fd)
        let fs = CountingFileSystem()
        #expect {
            _ = try StoredPage.read(package, page: page, fileSystem: fs)
        } throws: { "\($0)".contains("larger than the limit of \(PackageLimits.maxPageFileSize)") }
        #expect(DocumentVerifier().verify(package).contains { $0.severity == .error && $0.path == package.pagePath(page) })
    }

    @Test func aDotDotInsideAPackagePathIsRefused() throws {
        let h = HostileLibrary()
        let package = try h.library.createDocument(title: "Dots")
        #expect(throws: FileError.self) { _ = try PosixFileSystem().readFile(package.path + "/pages/../document.json") }
    }
}
