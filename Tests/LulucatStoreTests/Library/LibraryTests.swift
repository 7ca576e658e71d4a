import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct LibraryTests {
    @Test func listingOpensOneFilePerDocument() async throws {
        let tmp = TemporaryFolder()
        let fs = CountingFileSystem()
        let library = Library(root: tmp.path, fileSystem: fs)
        for i in 0..<12 { try library.createDocument(title: "Doc \(i)") }
        fs.reset()
        let entries = try library.list()
        #expect(entries.count == 12)
        #expect(fs.readOpens.count == 12)
        #expect(fs.readOpens.allSatisfy { $0.hasSuffix("/manifest.json") })
        #expect(Set(entries.map(\.title)) == Set((0..<12).map { "Doc \($0)" }))
        #expect(entries.allSatisfy { $0.pageCount == 1 && $0.coverPageID != nil && $0.problem == nil })
    }

    /// Newest first, equal times by id (the greater `uuidString` first), every document once, with
    /// its package path and cover; `forEachDocument` hands out the same entries in the same order;
    /// other names in the folder are not documents.
    @Test func listingIsNewestFirstThenByIdAcrossEqualTimes() throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        var ids: [UUID] = []
        for i in 0..<40 { ids.append(try library.createDocument(title: i % 3 == 0 ? "A title longer than a small string, \(i)" : "Doc \(i)").id) }
        // Five times, a millisecond apart (as the parser makes them), for forty documents: most
        // share theirs with others.
        func time(_ i: Int) -> Date { Date(timeIntervalSince1970: Double(1_800_000_000_000 + i % 5) / 1000) }
        for (i, id) in ids.enumerated() {
            let path = library.package(id).manifestPath
            var m = try PackageJSON.decodeManifest([UInt8](Data(contentsOf: URL(fileURLWithPath: path))), path: path)
            m.modified = time(i)
            try Data(PackageJSON.encode(m)).write(to: URL(fileURLWithPath: path))
        }
        try Data("x".utf8).write(to: URL(fileURLWithPath: tmp.path + "/notes.txt"))
        try FileManager.default.createDirectory(atPath: tmp.path + "/other.lnote", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: tmp.path + "/" + UUID().uuidString.lowercased() + ".lnote", withIntermediateDirectories: true)

        let entries = try library.list()
        #expect(Set(entries.map(\.id)) == Set(ids) && entries.count == ids.count)
        let expected = entries.sorted { a, b in a.modified != b.modified ? a.modified > b.modified : a.id.uuidString > b.id.uuidString }
        #expect(entries.map(\.id) == expected.map(\.id))
        for e in entries {
            let i = try #require(ids.firstIndex(of: e.id))
            #expect(e.modified == time(i))
            #expect(e.title == (i % 3 == 0 ? "A title longer than a small string, \(i)" : "Doc \(i)"))
            #expect(e.package.path == tmp.path + "/" + e.id.uuidString + ".lnote" && e.problem == nil && !e.needsRepair)
            #expect(e.coverThumbnailPath == e.coverPageID.map { e.package.path + "/thumbnails/" + $0.uuidString + ".jpg" })
        }
        var streamed: [LibraryEntry] = []
        try library.forEachDocument { streamed.append($0) }
        #expect(streamed == entries)
    }

    @Test func corruptManifestIsShownFromTruthAndRebuiltOnOpen() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try library.createDocument(title: "Cache")
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: package.manifestPath))
        let entry = try #require(try library.list().first)
        #expect(entry.title == "Cache" && entry.problem != nil)
        #expect(DocumentVerifier().verify(package).contains { $0.severity == .error && $0.path == package.manifestPath })
        let session = try await library.open(package.id)
        #expect(await session.openReport.contains { $0.severity == .repaired && $0.path == package.manifestPath })
        try await session.close()
        #expect(try library.list().first?.problem == nil)
    }

    @Test func corruptDocumentJSONIsAnErrorAndLeftUntouched() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try library.createDocument(title: "Truth")
        let garbage = Data("{\"format\": \"lulucat.document\", \"formatVersion\": 1, \"id\": 12}".utf8)
        try garbage.write(to: URL(fileURLWithPath: package.documentPath))
        await #expect {
            _ = try await library.open(package.id)
        } throws: { error in
            guard case StoreError.corruptFile(let path, _) = error else { return false }
            return path == package.documentPath
        }
        #expect(FileManager.default.contents(atPath: package.documentPath) == garbage)
        // The lock was released: a repaired file opens.
        #expect(DocumentVerifier().verify(package).contains { $0.severity == .error })
    }

    @Test func newerFormatVersionIsAClearError() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try library.createDocument(title: "Future")
        var text = String(decoding: readBytes(package.documentPath)!, as: UTF8.self)
        text = text.replacingOccurrences(of: "\"formatVersion\" : 1", with: "\"formatVersion\" : 7")
        try Data(text.utf8).write(to: URL(fileURLWithPath: package.documentPath))
        await #expect {
            _ = try await library.open(package.id)
        } throws: { error in
            guard case StoreError.unsupportedVersion(_, let found, _) = error else { return false }
            return found == 7
        }
    }

    @Test func missingOrCorruptPageIsNamedAndOtherPagesStillWork() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try library.createDocument(title: "Damaged")
        var session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil))
        let good = await session.pageIDs()[0]
        let bad = try await session.addPage()
        let gone = try await session.addPage()
        try await session.append(sampleStroke(), to: bad)
        try await session.close()
        var bytes = readBytes(package.pagePath(bad))!
        bytes[40] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: package.pagePath(bad)))
        try FileManager.default.removeItem(atPath: package.pagePath(gone))

        session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil))
        // The damaged page is salvaged (its one stroke's record was hit: nothing checks), named in
        // the open report, its damaged file kept in recovered/.
        #expect(try await session.content(of: bad).elements.isEmpty)
        #expect(await session.openReport.contains { $0.severity == .error && $0.path == package.pagePath(bad) && $0.message.contains("0 elements salvaged, 1 lost") })
        #expect(readBytes(package.recoveredPath + "/" + bad.uuidString + ".content")! == bytes)
        await #expect {
            _ = try await session.content(of: gone)
        } throws: { error in
            guard case StoreError.missingPage(let page, _) = error else { return false }
            return page == gone
        }
        try await session.append(sampleStroke(), to: good)
        try await session.close()
        #expect(try PageFile.decode(readBytes(package.pagePath(good))!).elements.count == 1)
        // The damaged page was rewritten with what was salvaged; its original is in recovered/.
        #expect(try PageFile.decode(readBytes(package.pagePath(bad))!).elements.isEmpty)
        let findings = DocumentVerifier().verify(package).filter { $0.severity == .error }
        #expect(!findings.contains { $0.path == package.pagePath(bad) })
        #expect(findings.contains { $0.path == package.pagePath(gone) })
    }

    @Test func identifiersAndLinksAreValidated() async throws {
        #expect(UUID(strictString: "not-a-uuid") == nil)
        #expect(UUID(strictString: "../../etc/passwd") == nil)
        #expect(UUID(strictString: "{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}") == nil)
        #expect(UUID(strictString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") != nil)
        #expect(throws: StoreError.self) { try DocumentPackage(path: "/tmp/../evil.lnote") }
        #expect(throws: StoreError.self) { try DocumentPackage(path: "/tmp/x/notes") }
        #expect(DocumentPackage.parseName("E621E1F8-C36C-495A-93FC-0C247A3E6E5F.jpg/../x", extensions: ["jpg"]) == nil)
        #expect(DocumentPackage.parseName("E621E1F8-C36C-495A-93FC-0C247A3E6E5F.exe", extensions: ["jpg"]) == nil)

        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try library.createDocument(title: "Links")
        let page = try PackageReader.readDocument(package, fileSystem: PosixFileSystem()).pages[0].id
        let target = tmp.path + "/elsewhere.content"
        try FileManager.default.moveItem(atPath: package.pagePath(page), toPath: target)
        try FileManager.default.createSymbolicLink(atPath: package.pagePath(page), withDestinationPath: target)
        let session = try await library.open(package.id)
        await #expect {
            _ = try await session.content(of: page)
        } throws: { error in
            if case StoreError.unexpectedFileKind(_, .symlink) = error { return true } else { return false }
        }
        await session.abandon()
        #expect(DocumentVerifier().verify(package).contains { $0.severity == .error && $0.message.contains("symbolic link") })
        // A link in place of document.json is refused too.
        try FileManager.default.moveItem(atPath: package.documentPath, toPath: tmp.path + "/doc.json")
        try FileManager.default.createSymbolicLink(atPath: package.documentPath, withDestinationPath: tmp.path + "/doc.json")
        await #expect(throws: StoreError.self) { _ = try await library.open(package.id) }
    }

    @Test func renameDuplicateTrashRestore() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try library.createDocument(title: "Original")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil))
        let page = await session.pageIDs()[0]
        try await session.append(sampleStroke(), to: page)
        let image = try await session.insertImage(Data([1, 2, 3]), fileExtension: "png", frame: QuantizedRect(x: 0, y: 0, width: 10, height: 10), on: page)
        try await session.close()

        try await library.rename(package.id, to: "Renamed")
        #expect(try library.list().map(\.title) == ["Renamed"])

        let copy = try library.duplicate(package.id)
        #expect(copy.id != package.id)
        let titles = try library.list().map(\.title).sorted()
        #expect(titles == ["Renamed", "Renamed copy"])
        #expect(DocumentVerifier().verify(copy).isEmpty)
        let copySession = try await library.open(copy.id)
        #expect(try await copySession.content(of: page).elements.count == 2)
        try await copySession.close()
        #expect(FileManager.default.fileExists(atPath: copy.assetPath(image.assetID, ext: "png")))

        try library.moveToTrash(package.id)
        #expect(try library.list().map(\.id) == [copy.id])
        #expect(try library.trashedDocuments().map(\.id) == [package.id])
        try library.restoreFromTrash(package.id)
        #expect(try library.list().count == 2)
        try library.moveToTrash(package.id)
        try library.emptyTrash()
        #expect(try library.trashedDocuments().isEmpty)
        #expect(try library.resolve("Renamed copy") == copy.id)
        #expect(throws: StoreError.self) { try library.resolve("nothing") }
    }

    @Test func titlesResolveInAnyCaseAndByTheirStartWithCandidatesWhenAmbiguous() throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let meeting = try library.createDocument(title: "Meeting notes").id
        let meetup = try library.createDocument(title: "Meet-up plan").id
        let exact = try library.createDocument(title: "meet").id
        let upper = try library.createDocument(title: "GROCERIES").id
        // The exact title first, even where it is also the start of others.
        #expect(try library.resolve("meet") == exact)
        // Any case, then the start of a title in any case.
        #expect(try library.resolve("groceries") == upper)
        #expect(try library.resolve("meeting") == meeting)
        #expect(try library.resolve("MEET-") == meetup)
        #expect(try library.resolve("Ｍeeting notes") == meeting)  // a full-width letter
        // Ambiguous: every candidate is named, with the start of its id.
        do {
            _ = try library.resolve("Mee")
            Issue.record("an ambiguous prefix resolved")
        } catch {
            let text = "\(error)"
            #expect(text.contains("matches 3 documents"), "\(text)")
            for id in [meeting, meetup, exact] { #expect(text.contains(String(id.uuidString.prefix(8))), "\(text)") }
            #expect(text.contains("'Meeting notes'") && text.contains("'Meet-up plan'"), "\(text)")
        }
        // An id prefix in any case still works; nothing and the empty string find nothing.
        #expect(try library.resolve(String(upper.uuidString.prefix(8)).lowercased()) == upper)
        #expect(throws: StoreError.self) { try library.resolve("zebra") }
        #expect(throws: StoreError.self) { try library.resolve("") }
    }

    @Test func titlesInOtherScriptsResolveInAnyCaseAndWithoutTheirAccents() throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let street = try library.createDocument(title: "Straße 5").id
        let greek = try library.createDocument(title: "Σημειώσεις μαθήματος").id
        let russian = try library.createDocument(title: "Документ").id
        let resume = try library.createDocument(title: "Résumé").id
        let resumeDraft = try library.createDocument(title: "Résumé draft").id
        let istanbul = try library.createDocument(title: "İstanbul trip").id
        let kana = try library.createDocument(title: "ノート").id
        #expect(try library.resolve("STRASSE 5") == street)       // ß folds to ss
        #expect(try library.resolve("ΣΗΜΕΙΏΣΕΙΣ") == greek)       // Greek capitals, final sigma
        #expect(try library.resolve("σημειωσεις") == greek)       // and without the tonos
        #expect(try library.resolve("документ") == russian)
        #expect(try library.resolve("résumé") == resume)          // with its accents, in any case
        #expect(try library.resolve("resume") == resume)          // without: the one whole title
        #expect(try library.resolve("resume d") == resumeDraft)   // and the start of a title
        #expect(try library.resolve("istanbul") == istanbul)      // the dot of İ is a mark
        #expect(try library.resolve("ﾉｰﾄ") == kana)                // half-width katakana
        // A title matched with its marks never falls through to one matched without them.
        let cafe = try library.createDocument(title: "Cafe").id
        _ = try library.createDocument(title: "Café")
        #expect(try library.resolve("cafe") == cafe)
        do {
            _ = try library.resolve("resum")
            Issue.record("an ambiguous accentless prefix resolved")
        } catch {
            #expect("\(error)".contains("matches 2 documents"), "\(error)")
        }
    }

    @Test func defaultRootHonoursEnvironment() {
        #expect(Library.defaultRoot(environment: ["LNOTE_LIBRARY": "/x/y", "HOME": "/h"]) == "/x/y")
        #if canImport(Darwin)
        #expect(Library.defaultRoot(environment: ["HOME": "/h"]) == "/h/Documents/Notes")
        #else
        #expect(Library.defaultRoot(environment: ["HOME": "/h"]) == "/h/.local/share/lulucat/Notes")
        #expect(Library.defaultRoot(environment: ["HOME": "/h", "XDG_DATA_HOME": "/d"]) == "/d/lulucat/Notes")
        // The XDG specification: a relative XDG_DATA_HOME is ignored.
        #expect(Library.defaultRoot(environment: ["HOME": "/h", "XDG_DATA_HOME": "rel"]) == "/h/.local/share/lulucat/Notes")
        #endif
    }

    @Test func iso8601RoundTrips() {
        for t in [0.0, 1_700_000_000.123, -86_400.5, 4_102_444_800.999] {
            let d = Date(timeIntervalSince1970: t)
            let s = ISO8601.string(d)
            let back = ISO8601.date(s)!
            #expect(abs(back.timeIntervalSince1970 - (t * 1000).rounded(.down) / 1000) < 0.0005, "\(s)")
        }
        #expect(ISO8601.string(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601.date("2026-11-30T16:31:45+01:00")?.timeIntervalSince1970 == ISO8601.date("2026-11-30T15:31:45Z")?.timeIntervalSince1970)
        #expect(ISO8601.date("2026-13-30T16:31:45Z") == nil)
        #expect(ISO8601.date("yesterday") == nil)
    }
}

@Suite struct StagingCleanupTests {
    static func makeStaging(_ path: String, age: TimeInterval, lock: Bool = false) throws {
        try FileManager.default.createDirectory(atPath: path + "/pages", withIntermediateDirectories: true)
        if lock { _ = FileManager.default.createFile(atPath: path + "/.lock", contents: nil) }
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: path)
    }

    @Test func staleStagingFoldersAreRemovedYoungOnesKept() throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        try library.prepare()
        let old = tmp.path + "/" + temporaryFilePrefix + UUID().uuidString + ".lnote"
        let young = tmp.path + "/" + temporaryFilePrefix + "import-" + UUID().uuidString
        try StagingCleanupTests.makeStaging(old, age: 7200)
        try StagingCleanupTests.makeStaging(young, age: 0)
        #expect(library.removeStaleStagingFolders() == [old])
        #expect(!FileManager.default.fileExists(atPath: old))
        #expect(FileManager.default.fileExists(atPath: young))
    }

    /// The library's open (its first `prepare` in this process: the first create, here) removes
    /// what crashes left, in the root and the trash; a later create lists nothing and leaves a
    /// folder that went stale meanwhile to the next open or to `cleanUpStagingFolders`.
    @Test func staleStagingFoldersAreRemovedAtOpenOnly() async throws {
        let tmp = TemporaryFolder()
        let root = tmp.path + "/library"
        let stale = root + "/" + temporaryFilePrefix + UUID().uuidString + ".lnote"
        let killedImport = root + "/" + temporaryFilePrefix + "import-" + UUID().uuidString
        let inTrash = root + "/.trash/" + temporaryFilePrefix + UUID().uuidString + ".lnote"
        try StagingCleanupTests.makeStaging(stale, age: 7200)
        try StagingCleanupTests.makeStaging(killedImport, age: 120, lock: true)
        try StagingCleanupTests.makeStaging(inTrash, age: 7200)
        let fs = CountingFileSystem()
        let library = Library(root: root, fileSystem: fs)
        try library.createDocument(title: "After a crash")
        for path in [stale, killedImport, inTrash] { #expect(!FileManager.default.fileExists(atPath: path), "\(path)") }
        #expect(fs.listings.filter { $0 == root || $0 == root + "/.trash" }.sorted() == [root, root + "/.trash"])

        let later = root + "/" + temporaryFilePrefix + UUID().uuidString + ".lnote"
        try StagingCleanupTests.makeStaging(later, age: 7200)
        fs.reset()
        try library.createDocument(title: "Second")
        #expect(fs.listings.isEmpty)
        #expect(FileManager.default.fileExists(atPath: later))
        #expect(await library.cleanUpStagingFolders() == [later])
        #expect(try library.list().count == 2)
    }

    /// An import holds its staging folder's lock while it runs: the folder is never removed then,
    /// however old, at the open or by an explicit clean; once the lock is free it goes.
    @Test func stagingFolderInUseIsNeverRemoved() throws {
        let tmp = TemporaryFolder()
        let root = tmp.path + "/library"
        let running = root + "/" + temporaryFilePrefix + "import-" + UUID().uuidString
        try StagingCleanupTests.makeStaging(running, age: 7200, lock: true)
        let fs = PosixFileSystem()
        let held = try fs.lock(running + "/.lock")
        let library = Library(root: root)
        try library.prepare()
        #expect(FileManager.default.fileExists(atPath: running))
        #expect(library.removeStaleStagingFolders().isEmpty)
        #expect(library.removeStaleStagingFolders(olderThan: 0).isEmpty)
        #expect(FileManager.default.fileExists(atPath: running))
        fs.unlock(held)
        #expect(library.removeStaleStagingFolders() == [running])
    }

    /// Creating, renaming, duplicating, trashing and restoring lists neither the library nor its
    /// trash: each costs the same in a library of any size.
    @Test func libraryOperationsListNothing() async throws {
        let tmp = TemporaryFolder()
        let fs = CountingFileSystem()
        let library = Library(root: tmp.path + "/library", fileSystem: fs)
        try library.prepare()  // the open: its one listing
        for i in 0..<20 { try library.createDocument(title: "Doc \(i)") }
        fs.reset()
        let a = try library.createDocument(title: "A")
        try await library.rename(a.id, to: "A renamed")
        let b = try library.duplicate(a.id)
        try library.moveToTrash(b.id)
        try library.restoreFromTrash(b.id)
        try library.moveToTrash(b.id)
        _ = try await library.newDocument(title: "Async")
        try await library.trashDocument(a.id)
        let roots = [library.root, library.trashPath]
        #expect(fs.listings.allSatisfy { !roots.contains($0) }, "\(fs.listings)")
        #expect(try library.list().count == 21)
        #expect(fs.listings.contains(library.root))
    }
}
