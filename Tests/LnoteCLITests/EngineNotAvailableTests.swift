// A build without the SQLite engine (LulucatStoreSQLite not enabled) meets a SQLite document: it
// lists it with its title, refuses every call that would read or change it with
// StoreError.engineNotAvailable, treats it as no damage, and leaves every byte of it as it was.
// A build without thumbnails (LulucatStoreThumbnails not enabled) saves whole and writes none.
// Each is enabled once for a whole process and never disabled, so the build without it is a
// process of its own: `lnote-dev without-sqlite` and `without-thumbnails`, whose main skips it.

import Foundation
import Testing
import LulucatInk
import LulucatStore
import LulucatStoreSQLite
import LulucatStoreThumbnails

@Suite struct EngineNotAvailableTests {
    init() { Library.enableSQLiteEngine(); Library.enableThumbnails() }

    /// Every file under `root` but the lock file (an empty file `flock` works on), with its bytes.
    static func files(under root: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        let walker = FileManager.default.enumerator(atPath: root)
        while let relative = walker?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory)
            if isDirectory.boolValue { out[relative + "/"] = Data(); continue }
            if (relative as NSString).lastPathComponent == ".lock" { continue }
            out[relative] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + relative))
        }
        return out
    }

    @Test("a SQLite document without the engine: listed, refused with engineNotAvailable, not damage, its bytes unchanged")
    func sqliteDocumentWithoutTheEngine() async throws {
        let tmp = TempDir()
        let root = tmp.path + "/lib"
        let library = Library(root: root)
        let package = try await library.createDocument(title: "Tables of notes", engine: .sqlite)
        let session = try await library.open(package.id)
        let first = try #require(await session.pageIDs().first)
        var samples: [Sample] = []
        for i in 0..<30 {
            samples.append(Sample(x: Int32(100 + i * 9), y: Int32(200 + i), radius: 12, pressure: 500, time: UInt32(i * 4)))
        }
        let stroke = Stroke(ink: Ink(tool: .pen, color: RGBA8(r: 1, g: 2, b: 3), width: 20), samples: samples)
        try await session.append(stroke, to: first)
        _ = try await session.addPage()
        try await session.close()
        let before = try Self.files(under: root)
        #expect(before.keys.contains(package.id.uuidString + ".lnote/content.sqlite"), "\(before.keys.sorted())")

        let run = try await lnoteDev(["without-sqlite", root, package.id.uuidString])
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        var lines: [String: String] = [:]
        for line in run.stdout.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            lines[String(line[..<colon])] = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        }
        #expect(lines["available"] == "sqlite false", "\(run.stdout)")
        // Listed with its title, flagged as needing the engine, not as needing repair.
        let listed = try #require(lines["list"], "\(run.stdout)")
        #expect(listed.hasPrefix("Tables of notes | unavailable sqlite | needs repair false | "), "\(listed)")
        #expect(listed.contains("sqlite engine, which this build does not include"), "\(listed)")
        // Every call that reads or changes it is refused with the typed error, naming the package.
        for call in ["open", "read", "repair", "migrate", "duplicate"] {
            let outcome = lines[call] ?? "(no line)"
            #expect(outcome.hasPrefix("engine-not-available sqlite: " + package.path + " uses the sqlite engine"), "\(call): \(outcome)")
        }
        // Verify says why it checked nothing, as a warning: no error, so not damage.
        let verify = try #require(lines["verify"], "\(run.stdout)")
        #expect(verify.hasPrefix("0 errors, 1 warnings: ") && verify.contains("its pages were not checked"), "\(verify)")

        // Not a byte of the library changed: no marker, no repair, no copy, no cleanup.
        let after = try Self.files(under: root)
        #expect(after.keys.sorted() == before.keys.sorted())
        for (path, bytes) in before { #expect(after[path] == bytes, "\(path) changed") }

        // With the engine (this process) the document opens whole.
        let reader = try await library.openReadOnly(package.id)
        let content = try await reader.content(of: first)
        #expect(content.elements.count == 1)
        await reader.close()
        #expect(try await library.documents().first?.unavailableEngine == nil)
    }

    @Test("without thumbnails a session saves whole and writes none; readers and verify do not miss them")
    func savesWithoutThumbnails() async throws {
        let tmp = TempDir()
        let root = tmp.path + "/lib"
        let run = try await lnoteDev(["without-thumbnails", root])
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("available: thumbnails false\n"), "\(run.stdout)")
        #expect(run.stdout.contains("thumbnails written: 0\n"), "\(run.stdout)")
        #expect(run.stdout.contains("rebuild: warning ") && run.stdout.contains("draws no thumbnails"), "\(run.stdout)")
        let idLine = try #require(run.stdout.split(separator: "\n").first { $0.hasPrefix("document: ") })
        let id = try #require(UUID(uuidString: String(idLine.dropFirst("document: ".count))))

        let library = Library(root: root)
        let package = library.package(id)
        #expect(try FileManager.default.contentsOfDirectory(atPath: package.thumbnailsPath).isEmpty)
        #expect(DocumentVerifier().verify(package).filter { $0.severity != .info }.isEmpty)
        let entry = try await #require(try library.documents().first { $0.id == id })
        let cover = try #require(entry.coverPageID)
        #expect(entry.problem == nil && entry.coverThumbnailPath == package.thumbnailPath(cover))
        let reader = try await library.openReadOnly(id)
        let page = try #require(await reader.pageIDs().first)
        #expect(try await reader.content(of: page).elements.count == 1)
        await reader.close()
        // This process draws them: the missing one is regenerated from the page.
        let rebuilt = ThumbnailWriter.rebuild(package)
        #expect(rebuilt.contains { $0.severity == .repaired }, "\(rebuilt)")
        #expect(FileManager.default.fileExists(atPath: package.thumbnailPath(page)))
    }
}
