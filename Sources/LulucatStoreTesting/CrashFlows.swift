// The write flows the crash checker runs, each through the real API: create, save, images, page
// structure, rename, duplicate, delete, close with orphan removal, manifest repair.

import Foundation
import LulucatStore
import LulucatStoreMaintenance
import LulucatInk

extension CrashFlow {
    /// Every flow, in the order `lnote-dev crashcheck` reports them.
    public static let all: [CrashFlow] = [
        createDocument, savePages, insertImage, pageStructure, rename, duplicate, delete, closeRemovesOrphans, manifestRepair,
        importPackage, workday, journalSaves, migration, sqliteSaves, sqliteDuplicate, sqliteMigration, repairSalvage,
        transactions, journalTransactions, sqliteTransactions,
    ]

    static let noAutosave = SessionOptions(autosaveDelay: nil)

    /// A document built through the API (not traced), and what it holds.
    public static func makeDocument(_ library: Library, title: String, pages: [(strokes: Int, images: Int)], seed: UInt32,
                             engine: EngineKind = .snapshot) async throws -> ExpectedDocument {
        let package = try await library.createDocument(title: title, engine: engine, firstPage: nil)
        let s = try await library.open(package.id, options: noAutosave)
        var doc = ExpectedDocument(id: package.id, title: title)
        for (i, p) in pages.enumerated() {
            let page = try await s.addPage()
            let content = SampleContent.page(seed: seed * 10 + UInt32(i), strokes: p.strokes)
            try await s.append(content.elements, to: page)
            for j in 0..<p.images {
                let bytes = SampleContent.assetBytes(seed: seed * 100 + UInt32(i * 10 + j))
                let image = try await s.insertImage(Data(bytes), fileExtension: "jpg",
                                                    frame: QuantizedRect(x: 50, y: 60, width: 300, height: 200), on: page)
                doc.assets[image.assetID] = bytes
            }
            doc.pages.append((page, try await s.content(of: page)))
        }
        try await s.close()
        return doc
    }

    /// A set-up that builds one document and expects it.
    public static func oneDocument(title: String, pages: [(strokes: Int, images: Int)], seed: UInt32,
                            engine: EngineKind = .snapshot) -> @Sendable (Library) async throws -> ExpectedLibrary {
        { library in
            var e = ExpectedLibrary()
            let doc = try await makeDocument(library, title: title, pages: pages, seed: seed, engine: engine)
            e.documents[doc.id] = doc
            return e
        }
    }

    static func open(_ library: Library, _ steps: FlowSteps, _ id: UUID) async throws -> DocumentSession {
        var session: DocumentSession?
        try await steps.step("open") { session = try await library.open(id, options: noAutosave) }
        return session!
    }

    static func close(_ session: DocumentSession, _ steps: FlowSteps) async throws {
        try await steps.step("close") { try await session.close() }
    }

    /// Edits in memory, through a step because loading a page reads the disk; nothing durable changes.
    static func edit(_ label: String, _ steps: FlowSteps, _ body: () async throws -> Void) async throws {
        try await steps.step(label, body)
    }

    // MARK: The flows

    public static let createDocument = CrashFlow(name: "create document", setUp: { library in
        // A brand-new library: its root folder is created by the first document.
        try library.fileSystem.makeDirectory("/notes-parent")
        return ExpectedLibrary()
    }, run: { library, steps in
        for (title, firstPage) in [("Lecture notes", true), ("Empty", false)] {
            var package: DocumentPackage?
            try await steps.step("create \"\(title)\"") {
                package = try library.createDocument(title: title, firstPage: firstPage ? .letter : nil)
            } expect: { e in
                let doc = try steps.peekDocument(package!)
                e.documents[package!.id] = ExpectedDocument(id: package!.id, title: title,
                                                            pages: doc.pages.map { ($0.id, PageContent(canvasSize: $0.canvasSize)) })
            }
        }
        // A document made whole from pages of ink (an InkML import): all of it or nothing.
        let contents = [SampleContent.page(seed: 21, strokes: 3), PageContent(canvasSize: .a4), SampleContent.page(seed: 22, strokes: 2)]
        var imported: DocumentPackage?
        try await steps.step("create \"Imported ink\" from pages") {
            imported = try library.createDocument(title: "Imported ink", pages: contents)
        } expect: { e in
            let doc = try steps.peekDocument(imported!)
            e.documents[imported!.id] = ExpectedDocument(id: imported!.id, title: "Imported ink",
                                                         pages: Array(zip(doc.pages.map(\.id), contents)))
        }
    })

    public static let savePages = CrashFlow(name: "save pages", setUp: oneDocument(title: "Journal", pages: [(3, 0), (0, 0)], seed: 1), run: { library, steps in
        let id = steps.expected.documents.keys.first!
        let pages = steps.expected.documents[id]!.pages.map(\.id)
        let s = try await open(library, steps, id)
        // First save of an empty page, then an overwrite of a page with content, then two at once.
        for (label, targets, seed) in [("first save of page 2", [pages[1]], UInt32(20)), ("overwrite page 1", [pages[0]], 30),
                                       ("save two pages", pages, 40)] {
            try await edit("draw", steps) {
                for (k, p) in targets.enumerated() {
                    for i in 0..<2 { try await s.append(SampleContent.stroke(seed: seed + UInt32(k * 10 + i)), to: p) }
                }
            }
            var contents: [UUID: PageContent] = [:]
            try await steps.step(label) {
                try await s.flush()
                for p in targets { contents[p] = try await s.content(of: p) }
            } expect: { e in
                for (p, c) in contents { e.documents[id]!.setContent(c, of: p) }
            }
        }
        // Erasing splits a stroke into pieces: the saved page holds the pieces, or the stroke.
        try await edit("erase", steps) {
            let stroke = try await s.content(of: pages[0]).strokes[0]
            try await s.erase(stroke: stroke.id, keeping: [0..<3, 5..<stroke.samples.count], on: pages[0])
        }
        var erased: PageContent?
        try await steps.step("save erase") {
            try await s.flush()
            erased = try await s.content(of: pages[0])
        } expect: { e in e.documents[id]!.setContent(erased!, of: pages[0]) }
        try await close(s, steps)
    })

    /// The journal engine: durable appends (one frame and a data sync each), a compaction when the
    /// frame threshold is passed (new snapshot, then a new journal generation), replay on reopen.
    /// Compaction after three frames; frames of at most 2,000 bytes, so that a save of several
    /// strokes is larger than a frame and is written as a compaction (docs/journal-format.md).
    static let journalOptions: JournalOptions = {
        var o = JournalOptions(compactAfterFrames: 3)
        o.maxFramePayload = 2_000
        return o
    }()

    public static let journalSaves = CrashFlow(name: "journal saves", setUp: oneDocument(title: "Ledger", pages: [(2, 0)], seed: 7, engine: .journal), run: { library, steps in
        let id = steps.expected.documents.keys.first!
        let page = steps.expected.documents[id]!.pages[0].id
        var session: DocumentSession?
        try await steps.step("open") {
            session = try await library.open(id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil,
                                                                          journal: journalOptions))
        }
        let s = session!
        for k in 0..<4 {
            try await edit("draw", steps) { try await s.append(SampleContent.stroke(seed: 70 + UInt32(k)), to: page) }
            var content: PageContent?
            // The fourth save passes the threshold: the page is compacted into a new snapshot.
            try await steps.step("append \(k + 1)") {
                try await s.save()
                content = try await s.content(of: page)
            } expect: { e in e.documents[id]!.setContent(content!, of: page) }
        }
        try await edit("erase", steps) {
            let stroke = try await s.content(of: page).strokes[0]
            try await s.erase(stroke: stroke.id, keeping: [0..<2], on: page)
        }
        var erased: PageContent?
        try await steps.step("save erase") {
            try await s.save()
            erased = try await s.content(of: page)
        } expect: { e in e.documents[id]!.setContent(erased!, of: page) }
        try await edit("draw six", steps) {
            for i in 0..<6 { try await s.append(SampleContent.stroke(seed: 80 + UInt32(i)), to: page) }
        }
        var large: PageContent?
        try await steps.step("save larger than a frame") {
            try await s.save()
            large = try await s.content(of: page)
        } expect: { e in e.documents[id]!.setContent(large!, of: page) }
        try await close(s, steps)
    })

    /// Verified migration between the file engines, both ways: whatever step a crash hits, the
    /// document opens with every page and asset (in the old form or the new).
    public static let migration = CrashFlow(name: "migrate engines", setUp: oneDocument(title: "Moving", pages: [(3, 1), (2, 0)], seed: 8), run: { library, steps in
        let id = steps.expected.documents.keys.first!
        let migration = EngineMigration(fileSystem: library.fileSystem)
        for target in [EngineKind.journal, .snapshot] {
            try await steps.step("migrate to \(target.rawValue)", atomic: true) {
                _ = try migration.migrate(library.package(id), to: target)
            } expect: { _ in }
        }
    })

    /// The SQLite engine, all of its I/O on the simulated disk (SQLiteFileSystemVFS): a document
    /// created, strokes appended over several saves (WAL commits, synchronous FULL), an idle
    /// (passive) checkpoint, an erase (a replaced stroke), a page added, then the close (a TRUNCATE
    /// checkpoint and the WAL removed).
    public static let sqliteSaves = CrashFlow(name: "sqlite saves", testFaultStride: 10, setUp: { library in
        try library.fileSystem.makeDirectory("/notes-parent")
        return ExpectedLibrary()
    }, run: { library, steps in
        var package: DocumentPackage?
        try await steps.step("create a SQLite document") {
            package = try library.createDocument(title: "Database notes", engine: .sqlite, firstPage: .letter)
        } expect: { e in
            let doc = try steps.peekDocument(package!)
            e.documents[package!.id] = ExpectedDocument(id: package!.id, title: "Database notes",
                                                        pages: doc.pages.map { ($0.id, PageContent(canvasSize: $0.canvasSize)) })
        }
        let id = package!.id
        let page = steps.expected.documents[id]!.pages[0].id
        let s = try await open(library, steps, id)
        for k in 0..<3 {
            try await edit("draw", steps) {
                for i in 0..<2 { try await s.append(SampleContent.stroke(seed: 110 + UInt32(k * 10 + i)), to: page) }
            }
            var content: PageContent?
            try await steps.step("save \(k + 1)") {
                try await s.save()
                content = try await s.content(of: page)
            } expect: { e in e.documents[id]!.setContent(content!, of: page) }
            // What a quiet moment after an autosave does: a passive checkpoint, the WAL kept.
            if k == 1 { try await steps.step("idle checkpoint") { try await s.idle() } }
        }
        try await edit("erase", steps) {
            let stroke = try await s.content(of: page).strokes[1]
            try await s.erase(stroke: stroke.id, keeping: [0..<3, 5..<stroke.samples.count], on: page)
        }
        var erased: PageContent?
        try await steps.step("save erase") {
            try await s.save()
            erased = try await s.content(of: page)
        } expect: { e in e.documents[id]!.setContent(erased!, of: page) }
        var added: UUID?
        try await steps.step("add a page", atomic: true) { added = try await s.addPage() } expect: { e in
            e.documents[id]!.pages.append((added!, PageContent(canvasSize: .letter)))
        }
        try await close(s, steps)
    })

    /// A copy of a SQLite document: the source's WAL checkpointed into content.sqlite (TRUNCATE,
    /// checked), the database file copied with the package.
    public static let sqliteDuplicate = CrashFlow(name: "duplicate a sqlite document",
                                                  setUp: oneDocument(title: "Shared tables", pages: [(3, 0), (1, 0)], seed: 14, engine: .sqlite),
                                                  run: { library, steps in
        try await duplicateTheDocument(library, steps)
    })

    /// Verified migration to the SQLite engine and back, the database built on the simulated disk.
    public static let sqliteMigration = CrashFlow(name: "migrate to and from sqlite", testFaultStride: 10, setUp: oneDocument(title: "Moving in", pages: [(3, 1), (2, 0)], seed: 13), run: { library, steps in
        let id = steps.expected.documents.keys.first!
        let migration = EngineMigration(fileSystem: library.fileSystem)
        for target in [EngineKind.sqlite, .snapshot] {
            try await steps.step("migrate to \(target.rawValue)", atomic: true) {
                _ = try migration.migrate(library.package(id), to: target)
            } expect: { _ in }
        }
    })

    public static let insertImage = CrashFlow(name: "insert image", setUp: oneDocument(title: "Scrapbook", pages: [(2, 0)], seed: 2), run: { library, steps in
        let id = steps.expected.documents.keys.first!
        let page = steps.expected.documents[id]!.pages[0].id
        let s = try await open(library, steps, id)
        let bytes = SampleContent.assetBytes(seed: 99, count: 700)
        // The asset is durable when insertImage returns; the page refers to it only after the save.
        var image: ImageElement?
        try await steps.step("insert image") {
            image = try await s.insertImage(Data(bytes), fileExtension: "jpg",
                                            frame: QuantizedRect(x: 10, y: 20, width: 640, height: 480), on: page)
        }
        var content: PageContent?
        try await steps.step("save page with image") {
            try await s.flush()
            content = try await s.content(of: page)
        } expect: { e in
            e.documents[id]!.setContent(content!, of: page)
            e.documents[id]!.assets[image!.assetID] = bytes
        }
        try await close(s, steps)
    })

    public static let pageStructure = CrashFlow(name: "add, remove, reorder pages", setUp: oneDocument(title: "Sketches", pages: [(2, 0), (1, 0)], seed: 3), run: { library, steps in
        let id = steps.expected.documents.keys.first!
        let s = try await open(library, steps, id)
        var added: UUID?
        try await steps.step("add page at the end", atomic: true) { added = try await s.addPage() } expect: { e in
            e.documents[id]!.pages.append((added!, PageContent(canvasSize: .letter)))
        }
        try await steps.step("insert an A4 page first", atomic: true) { added = try await s.addPage(canvas: .a4, at: 0) } expect: { e in
            e.documents[id]!.pages.insert((added!, PageContent(canvasSize: .a4)), at: 0)
        }
        let last = steps.expected.documents[id]!.pages.last!.id
        try await steps.step("move the last page to the front", atomic: true) { try await s.movePage(last, to: 0) } expect: { e in
            let p = e.documents[id]!.pages.removeLast()
            e.documents[id]!.pages.insert(p, at: 0)
        }
        let victim = steps.expected.documents[id]!.pages[2].id
        try await steps.step("remove a page", atomic: true) { try await s.removePage(victim) } expect: { e in
            e.documents[id]!.pages.removeAll { $0.id == victim }
        }
        try await close(s, steps)
    })

    /// Transactions over several pages and the page list, and the undo of one: at every crash
    /// state the document is wholly before or wholly after each (`ExpectedDocument.allOrNone`).
    public static let transactions = transactionFlow(name: "transactions", engine: .snapshot, seed: 14)
    public static let journalTransactions = transactionFlow(name: "journal transactions", engine: .journal, seed: 15, faultStride: 5)
    public static let sqliteTransactions = transactionFlow(name: "sqlite transactions", engine: .sqlite, seed: 16, faultStride: 10)

    static func transactionFlow(name: String, engine: EngineKind, seed: UInt32, faultStride: Int = 2) -> CrashFlow {
        CrashFlow(name: name, testFaultStride: faultStride,
                  setUp: oneDocument(title: "Seminar", pages: [(3, 0), (2, 0), (1, 0)], seed: seed, engine: engine), run: { library, steps in
            let id = steps.expected.documents.keys.first!
            let pages = steps.expected.documents[id]!.pages.map(\.id)
            var session: DocumentSession?
            var options = SessionOptions(autosaveDelay: nil)
            options.undoLevels = 10
            try await steps.step("open") { session = try await library.open(id, options: options) }
            let s = session!
            func current() async throws -> [(id: UUID, content: PageContent)] {
                var out: [(id: UUID, content: PageContent)] = []
                for p in await s.pageIDs() { out.append((p, try await s.content(of: p))) }
                return out
            }
            // Every page read first, so the steps below read nothing from the disk after their call.
            var after: [(id: UUID, content: PageContent)] = []
            try await edit("read every page", steps) { after = try await current() }
            // Cut two strokes from the first page and paste them on the second.
            try await steps.step("cut and paste across pages", atomic: true) {
                try await s.transaction("Cut and paste") { s in
                    let moved = Array(try s.content(of: pages[0]).elements.prefix(2))
                    try s.delete(moved.map(\.id), from: pages[0])
                    try s.append(moved, to: pages[1])
                }
                after = try await current()
            } expect: { e in
                e.documents[id]!.pages = after
                e.documents[id]!.allOrNone = true
            }
            // A page added and drawn on, the last page moved first, the second removed, a title.
            try await steps.step("restructure in one transaction", atomic: true) {
                try await s.transaction("Restructure") { s in
                    let added = try s.addPage(canvas: .a4)
                    try s.append([.stroke(SampleContent.stroke(seed: seed * 7))], to: added)
                    try s.movePage(pages[2], to: 0)
                    try s.removePage(pages[1])
                    try s.rename(to: "Seminar, restructured")
                }
                after = try await current()
            } expect: { e in
                e.documents[id]!.pages = after
                e.documents[id]!.title = "Seminar, restructured"
            }
            try await steps.step("undo the restructuring", atomic: true) {
                _ = try await s.undo()
                after = try await current()
            } expect: { e in
                e.documents[id]!.pages = after
                e.documents[id]!.title = "Seminar"
            }
            try await close(s, steps)
        })
    }

    public static let rename = CrashFlow(name: "rename", setUp: oneDocument(title: "Untitled", pages: [(1, 0)], seed: 4), run: { library, steps in
        let id = steps.expected.documents.keys.first!
        try await steps.step("rename from the library", atomic: true) { try await library.rename(id, to: "Physics 101") } expect: { e in
            e.documents[id]!.title = "Physics 101"
        }
        let s = try await open(library, steps, id)
        try await steps.step("rename in a session", atomic: true) { try await s.rename(to: "Physics 101 — week 2") } expect: { e in
            e.documents[id]!.title = "Physics 101 — week 2"
        }
        try await close(s, steps)
    })

    /// The one step of the duplicate flows: copy the set-up's document; the copy is expected to be
    /// the original under a new id, its title with " copy".
    static func duplicateTheDocument(_ library: Library, _ steps: FlowSteps) async throws {
        let id = steps.expected.documents.keys.first!
        var copy: DocumentPackage?
        try await steps.step("duplicate") { copy = try library.duplicate(id) } expect: { e in
            var d = e.documents[id]!
            d.id = copy!.id
            d.title += " copy"
            e.documents[copy!.id] = d
        }
    }

    public static let duplicate = CrashFlow(name: "duplicate", setUp: oneDocument(title: "Recipes", pages: [(2, 1), (1, 0)], seed: 5), run: { library, steps in
        try await duplicateTheDocument(library, steps)
    })

    public static let delete = CrashFlow(name: "delete", setUp: { library in
        var e = ExpectedLibrary()
        for (i, title) in ["Old", "Older"].enumerated() {
            let doc = try await makeDocument(library, title: title, pages: [(1, 0)], seed: 6 + UInt32(i))
            e.documents[doc.id] = doc
        }
        return e
    }, run: { library, steps in
        let ids = steps.expected.documents.values.sorted { $0.title < $1.title }.map(\.id)
        func trash(_ id: UUID) async throws {
            try await steps.step("move to trash") { try library.moveToTrash(id) } expect: { e in
                e.trash[id] = e.documents.removeValue(forKey: id)
            }
        }
        try await trash(ids[0])
        try await steps.step("restore") { try library.restoreFromTrash(ids[0]) } expect: { e in
            e.documents[ids[0]] = e.trash.removeValue(forKey: ids[0])
        }
        try await trash(ids[1])
        try await steps.step("empty trash") { try library.emptyTrash() } expect: { e in e.trash = [:] }
    })

    public static let closeRemovesOrphans = CrashFlow(name: "close with orphan removal", setUp: { library in
        var e = ExpectedLibrary()
        var doc = try await makeDocument(library, title: "Collage", pages: [(1, 2)], seed: 8)
        // An orphan a crash could leave: an asset no page shows.
        let orphan = library.package(doc.id).assetPath(SampleContent.uuid(77, 77), ext: "png")
        try library.fileSystem.writeAtomically(SampleContent.assetBytes(seed: 77), to: orphan)
        doc.assets[SampleContent.uuid(77, 77)] = nil
        e.documents[doc.id] = doc
        return e
    }, run: { library, steps in
        let id = steps.expected.documents.keys.first!
        let page = steps.expected.documents[id]!.pages[0].id
        let s = try await open(library, steps, id)
        try await edit("delete an image", steps) {
            let image = try await s.content(of: page).images[0]
            try await s.delete([image.id], from: page)
        }
        var content: PageContent?
        try await steps.step("save") {
            try await s.flush()
            content = try await s.content(of: page)
        } expect: { e in e.documents[id]!.setContent(content!, of: page) }
        try await steps.step("close removes orphans") {
            try await s.close()
            let orphans = DocumentVerifier(fileSystem: library.fileSystem).verify(library.package(id)).filter { $0.message.hasPrefix("orphan") }
            if !orphans.isEmpty { throw FlowError("orphans left after close: \(orphans)") }
        }
    })

    public static let manifestRepair = CrashFlow(name: "manifest repair", setUp: { library in
        var e = ExpectedLibrary()
        let corrupt = try await makeDocument(library, title: "Corrupt manifest", pages: [(1, 0)], seed: 9)
        let stale = try await makeDocument(library, title: "Stale manifest", pages: [(2, 0), (0, 0)], seed: 10)
        e.documents[corrupt.id] = corrupt
        e.documents[stale.id] = stale
        let fs = library.fileSystem
        try fs.writeAtomically(Array("{\"format\": \"lulucat.manif".utf8), to: library.package(corrupt.id).manifestPath)
        var m = Manifest(try PackageReader.readDocument(library.package(stale.id), fileSystem: fs))
        m.title = "An old title"
        m.pageCount = 7
        try fs.writeAtomically(PackageJSON.encode(m), to: library.package(stale.id).manifestPath)
        return e
    }, run: { library, steps in
        for id in steps.expected.documents.keys.sorted(by: { $0.uuidString < $1.uuidString }) {
            let s = try await open(library, steps, id)
            try await steps.step("list after repair") {
                let entry = try library.documents().first { $0.id == id }
                if entry?.title != steps.expected.documents[id]!.title || entry?.problem != nil {
                    throw FlowError("the library still shows the old manifest: \(String(describing: entry))")
                }
            }
            try await close(s, steps)
        }
    })

    /// `lnote repair` of a document with a damaged page (salvaged in place, its original bytes kept
    /// in recovered/) and a page file document.json does not list (moved to recovered/): recovered/
    /// is made durable before anything goes in, so the moved file is never in no folder.
    public static let repairSalvage = CrashFlow(name: "repair: salvage and move aside", setUp: { library in
        var e = ExpectedLibrary()
        var doc = try await makeDocument(library, title: "Water damage", pages: [(6, 0), (2, 0)], seed: 14)
        let fs = library.fileSystem
        let package = library.package(doc.id)
        // Bytes flipped in the middle of the first page: its other records still check.
        let damagedPage = doc.pages[0].id
        var bytes = try fs.readFile(package.pagePath(damagedPage))
        for i in (bytes.count / 2)..<(bytes.count / 2 + 12) { bytes[i] ^= 0x5A }
        try fs.writeAtomically(bytes, to: package.pagePath(damagedPage))
        let salvaged = PageFile.salvage(bytes, canvasSize: doc.pages[0].content.canvasSize).content
        guard salvaged.elements.count < doc.pages[0].content.elements.count, !salvaged.elements.isEmpty else {
            throw FlowError("the damage should cost some elements of the page, not all: \(salvaged.elements.count)")
        }
        doc.pages[0].content = salvaged
        // A page file no page list names.
        let stray = try PageFile.encode(SampleContent.page(seed: 1400, strokes: 3))
        try fs.writeAtomically(stray, to: package.pagePath(SampleContent.uuid(14, 99)))
        doc.keptBytes = [bytes, stray]
        e.documents[doc.id] = doc
        return e
    }, run: { library, steps in
        let id = steps.expected.documents.keys.first!
        try await steps.step("repair") { _ = try DocumentRepair(fileSystem: library.fileSystem).repair(library.package(id)) }
        let s = try await open(library, steps, id)
        try await close(s, steps)
    })

    public static let importPackage = CrashFlow(name: "import", setUp: oneDocument(title: "From a friend", pages: [(2, 1), (1, 0)], seed: 11), run: { library, steps in
        let id = steps.expected.documents.keys.first!
        // The files as an export reads them; imported again they need a new id.
        var files: [(String, Data)] = []
        try await steps.step("read for export") {
            files = try library.withConsistentFiles(id) { package, names in
                try names.map { ($0, Data(try library.fileSystem.readFile(package.path + "/" + $0))) }
            }
        }
        var imported: ImportResult?
        try await steps.step("import") {
            // The bounded import an archive's import goes through, fed from memory.
            let document = files.first { $0.0 == "document.json" }!.1
            let byPath = Dictionary(files, uniquingKeysWith: { a, _ in a })
            imported = try library.importPackage(document: document, files: files.map { ImportFile(path: $0.0, size: UInt64($0.1.count)) }) { path, append in
                try byPath[path]!.withUnsafeBytes { try append($0) }
            }
        } expect: { e in
            var d = e.documents[id]!
            d.id = imported!.package.id
            e.documents[d.id] = d
        }
    })

    /// A long session as the app drives it: autosaves (pages only; document.json lags until the
    /// flush), images, a new page and a move between them, then a flush and a close.
    public static let workday = CrashFlow(name: "a working session (autosave)", setUp: oneDocument(title: "Lab notebook", pages: [(2, 0), (1, 0), (0, 0)], seed: 12), run: { library, steps in
        let id = steps.expected.documents.keys.first!
        let s = try await open(library, steps, id)
        for round in 0..<9 {
            let pages = steps.expected.documents[id]!.pages.map(\.id)
            let page = pages[round % pages.count]
            var image: (ImageElement, [UInt8])?
            try await edit("write on a page", steps) {
                try await s.append(SampleContent.stroke(seed: 500 + UInt32(round), samples: 10 + round), to: page)
            }
            try await edit("insert an image", steps) {
                if round % 3 == 2 {
                    let bytes = SampleContent.assetBytes(seed: 600 + UInt32(round), count: 200)
                    image = (try await s.insertImage(Data(bytes), fileExtension: "png",
                                                     frame: QuantizedRect(x: 5, y: 5, width: 50, height: 50), on: page), bytes)
                }
            }
            var content: PageContent?
            try await steps.step("autosave \(round)") {
                try await s.save()
                content = try await s.content(of: page)
            } expect: { e in
                e.documents[id]!.setContent(content!, of: page)
                if let (element, bytes) = image { e.documents[id]!.assets[element.assetID] = bytes }
            }
            if round == 3 {
                var added: UUID?
                try await steps.step("add a page", atomic: true) { added = try await s.addPage(at: 1) } expect: { e in
                    e.documents[id]!.pages.insert((added!, PageContent(canvasSize: .letter)), at: 1)
                }
            }
            if round == 6 {
                try await steps.step("move a page", atomic: true) { try await s.movePage(pages[0], to: 2) } expect: { e in
                    let p = e.documents[id]!.pages.remove(at: 0)
                    e.documents[id]!.pages.insert(p, at: 2)
                }
            }
        }
        try await steps.step("flush") { try await s.flush() }
        try await close(s, steps)
    })
}
