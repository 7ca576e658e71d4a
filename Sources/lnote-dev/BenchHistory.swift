// lnote-dev bench history: the figures of issue 35 (history, docs/sync.md §12). Release build:
//   swift build -c release --product lnote-dev
//   .build/release/lnote-dev bench history [--rounds N] [--edits N] [--pages N] [--pairs N] [--seed S] [--only states|bytes|time]
// states: --rounds (200) randomized rounds of three devices syncing through one remote (the local
//   Apache with mod_dav, started here as the sync benches start it, else a folder), every page state
//   each device published recorded, then listed and read back on every device; a random old version
//   restored and synced; then the requests of an idle round, of listing a page's history, of
//   refreshHistory and of reading one version.
// bytes: --edits (1,000) one-page edits of a --pages (200) page notebook, each synced, on two folder
//   remotes side by side (history kept as by default, and kept not at all), garbage collected, then
//   every file's bytes summed.
// time: a one-page round of a --pages page notebook with history and without, --pairs (15) pairs
//   taking turns, on the remote of `states`.

import Foundation
import LulucatHandwriting
import LulucatInk
import LulucatStore
import LulucatSync
import LulucatSyncTestSupport
import LnoteCommandLine

enum HistoryBench {
    typealias Rng = SeededRandom

    static func say(_ line: String) { SyncBench.say(line) }

    // MARK: Strokes

    /// Where the bench's strokes come from: real ink (`shared/data/ink`, as `bench codec` finds it)
    /// when there is some, else generated handwriting. Each stroke drawn gets a new id.
    struct StrokeSource {
        var pool: [Stroke] = []
        let generator = HandwritingGenerator(seed: 35)
        var name: String { pool.isEmpty ? "generated handwriting" : "real ink (\(pool.count) strokes of shared/data/ink)" }

        init() {
            guard let root = InkFolder.sharedInkRoot() else { return }
            for folder in InkFolder.subfolders(of: root) {
                if let page = try? InkFolder.page(folder) { pool += page.strokes.filter { $0.samples.count >= 6 } }
            }
        }

        func stroke(_ rng: inout Rng) -> Stroke {
            if !pool.isEmpty {
                var s = pool[rng.int(0...pool.count - 1)]
                s.id = UUID()
                return s
            }
            return generator.stroke(letters: rng.int(2...5), origin: (rng.uniform(40...500), rng.uniform(60...740)), variant: rng.next())
        }

        /// A page of a few strokes.
        func page(_ rng: inout Rng) -> PageContent {
            PageContent(canvasSize: .letter, elements: (0..<rng.int(3...5)).map { _ in .stroke(stroke(&rng)) })
        }
    }

    // MARK: Remotes

    /// Where a bench's remote lives: a folder of the local Apache, or a folder here.
    enum Place {
        case apache(URL)
        case folder(String)

        /// A remote of its own (its own request counts) on this place.
        func remote() throws -> any Remote {
            switch self {
            case .apache(let url): return try WebDAVRemote(url: url, credentials: nil, timeout: 60)
            case .folder(let path): return FolderRemote(root: path)
            }
        }
    }

    nonisolated(unsafe) static var server: ApacheServer?

    static func place(_ label: String) async throws -> Place {
        if let server {
            let url = server.url.appendingPathComponent(label + "/")
            try await WebDAVRemote(url: url, credentials: nil, timeout: 60).makeFolder("")
            return .apache(url)
        }
        return .folder(SyncBench.tempDir(label))
    }

    /// One device: a library syncing with its own remote object, under its own name.
    struct Device {
        let library: Library
        let sync: LibrarySync
        let options: SyncOptions

        init(_ label: String, name: String, place: Place, retention: HistoryRetention = .standard, garbage: GarbageOptions? = nil) throws {
            library = Library(root: SyncBench.tempDir(label))
            sync = try LibrarySync(library: library, remote: try place.remote())
            var o = SyncBench.options
            o.garbage = garbage
            o.history = HistoryOptions(retention: retention, deviceName: name)
            options = o
        }

        @discardableResult
        func round() async throws -> SyncReport { try await sync.sync(options: options) }
    }

    /// A page state: the content of one page of one document.
    struct State: Hashable {
        var document: UUID
        var page: UUID
        var content: PageContent
    }

    /// Every page of every document of `library`, read through a read-only session.
    static func states(_ library: Library) async throws -> [State] {
        var out: [State] = []
        for e in try await library.documents() {
            let s = try await library.openReadOnly(e.id)
            for p in await s.pageIDs() { out.append(State(document: e.id, page: p, content: try await s.content(of: p))) }
            await s.close()
        }
        return out
    }

    static let zero = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!

    /// `content` with every id made the same: a restore re-adds erased elements under new ids.
    static func withoutIDs(_ content: PageContent) -> [Element] {
        content.elements.map { e in
            switch e {
            case .stroke(var s): s.id = zero; return .stroke(s)
            case .image(var i): i.id = zero; return .image(i)
            case .unknown: return e
            }
        }
    }

    static func pct(_ x: Int, _ y: Int) -> String { String(format: "%.1f", y == 0 ? 100 : 100 * Double(x) / Double(y)) }

    // MARK: States published, restorable byte for byte

    /// One to three edits of `doc` on `device`: strokes drawn, strokes partly erased, pages added or
    /// removed. Returns a page it drew on, if any.
    static func randomEdits(_ library: Library, _ doc: UUID, _ rng: inout Rng, _ ink: StrokeSource) async throws -> UUID? {
        var r = rng
        let drawn = try await SyncBench.withSession(library, doc) { s -> UUID? in
            var drawn: UUID?
            for _ in 0..<r.int(1...3) {
                let pages = await s.pageIDs()
                let p = pages[r.int(0...pages.count - 1)]
                switch r.int(0...9) {
                case 0...4:
                    try await s.append(ink.stroke(&r), to: p)
                    drawn = p
                case 5, 6:
                    let strokes = try await s.content(of: p).strokes
                    guard !strokes.isEmpty else { continue }
                    let victim = strokes[r.int(0...strokes.count - 1)]
                    let n = victim.samples.count
                    _ = try await s.erase(stroke: victim.id, keeping: [0..<n / 3, min(n, 2 * n / 3 + 1)..<n].filter { !$0.isEmpty }, on: p)
                case 7:
                    _ = try await s.addPage(at: r.int(0...pages.count))
                case 8 where pages.count > 2:
                    try await s.removePage(p)
                default:
                    try await s.append(ink.stroke(&r), to: p)
                    drawn = p
                }
            }
            return drawn
        }
        rng = r
        return drawn
    }

    static func statesAndRequests(_ place: Place, rounds: Int, seed: UInt64, ink: StrokeSource) async throws {
        var rng = Rng(seed: seed)
        // Every round collects garbage with no grace: a blob a version names must survive it.
        let garbage = GarbageOptions(grace: 0, interval: 0)
        let devices = try (0..<3).map { try Device("states\($0)", name: "device \($0)", place: place, garbage: garbage) }
        var docs: [UUID] = []
        for (i, title) in ["Notes", "Sketches"].enumerated() {
            var pages: [PageContent] = []
            for _ in 0..<3 { pages.append(ink.page(&rng)) }
            docs.append(try await devices[i].library.createDocument(title: title, pages: pages).id)
        }
        var published = Set<State>()
        var syncs = 0, sameBeforeSync = 0
        func syncAndRecord(_ d: Int) async throws {
            let report = try await devices[d].round()
            syncs += 1
            if !report.skipped.isEmpty || !report.problems.isEmpty {
                say("  round of device \(d): skipped \(report.skipped.values.map { String($0.prefix(160)) }), problems \(report.problems.map { String($0.prefix(160)) })")
            }
            published.formUnion(try await states(devices[d].library))
        }
        for _ in 0..<2 { for d in 0..<3 { try await syncAndRecord(d) } }
        for _ in 0..<rounds {
            let d = rng.int(0...2)
            let doc = docs[rng.int(0...docs.count - 1)]
            let drawn = try await randomEdits(devices[d].library, doc, &rng, ink)
            // Sometimes another device draws on the same page before either syncs.
            if let drawn, rng.int(0...3) == 0 {
                let e = (d + rng.int(1...2)) % 3
                if try await SyncBench.withSession(devices[e].library, doc, { s in
                    guard await s.pageIDs().contains(drawn) else { return false }
                    try await s.append(ink.stroke(&rng), to: drawn)
                    return true
                }) { sameBeforeSync += 1 }
            }
            try await syncAndRecord(d)
        }
        // Every device reads the others' last heads.
        for _ in 0..<2 { for d in 0..<3 { try await syncAndRecord(d) } }
        say("states: \(rounds) randomized rounds of 3 devices (seed \(seed)), \(syncs) syncs, \(sameBeforeSync) times two devices drew on one page before syncing, "
            + "garbage collected in every round (grace 0): \(published.count) page states published")

        // Every state, listed and read back on every device.
        var restorable = 0
        var examples: [String] = []
        for (i, device) in devices.enumerated() {
            var found = Set<State>()
            var gone = 0, unreadable = 0, versions = 0
            for doc in docs {
                for v in device.sync.history(of: doc, options: device.options.history) {
                    versions += 1
                    do {
                        found.insert(State(document: doc, page: v.page, content: try await device.sync.content(of: doc, page: v.page, at: v)))
                    } catch SyncError.remote(.notFound) {
                        gone += 1
                    } catch {
                        unreadable += 1
                        if examples.count < 5 { examples.append("device \(i): version \(v.id.prefix(12)) of page \(v.page): \(error)") }
                    }
                }
            }
            let missing = published.filter { !found.contains($0) }
            restorable += published.count - missing.count
            say("  device \(i): \(versions) versions listed; \(published.count - missing.count) of \(published.count) states read back equal; "
                + "not listed \(missing.count), version blob gone \(gone), unreadable \(unreadable)")
            for m in missing.prefix(max(0, 5 - examples.count)) {
                let ofPage = device.sync.history(of: m.document, page: m.page, options: device.options.history)
                examples.append("device \(i): page \(m.page) with \(m.content.elements.count) elements (\(m.content.strokes.count) strokes) has no equal version; "
                                + "its page lists \(ofPage.count) versions, stroke counts \(ofPage.map(\.strokes))")
            }
        }
        for e in examples { say("  missing: " + e) }
        let total = published.count * devices.count
        say("restorable byte for byte: \(restorable) of \(total) (\(pct(restorable, total)) %)")

        // A random old version of a page in the document restored on one device, then synced
        // everywhere; then, when there is one, a version of a removed page (restored as a new page).
        let r = rng.int(0...2)
        let doc = docs[rng.int(0...docs.count - 1)]
        let old = devices[r].sync.history(of: doc, options: devices[r].options.history).filter { !$0.isCurrent }
        if let version = old.filter(\.pageIsLive).randomElement(using: &rng) {
            try await restore(version, on: r, devices, label: "restore")
        } else {
            say("restore: no old version of a page in the document to restore; converged NO")
        }
        if let version = docs.flatMap({ devices[r].sync.history(of: $0, options: devices[r].options.history) }).filter({ !$0.pageIsLive }).randomElement(using: &rng) {
            try await restore(version, on: r, devices, label: "restore of a removed page")
        }

        // Requests.
        let device = devices[0]
        try await device.round()
        var idle: [Int] = []
        for _ in 0..<3 { idle.append(try await device.round().requests) }
        let stats = device.sync.remote.statistics
        // The page of the document with the most versions.
        let counts = Dictionary(grouping: device.sync.history(of: doc, options: device.options.history), by: \.page).mapValues(\.count)
        let page = counts.max { ($0.value, $1.key.uuidString) < ($1.value, $0.key.uuidString) }!.key
        var before = stats.requests
        let versions = device.sync.history(of: doc, page: page, options: device.options.history)
        let listing = stats.requests - before
        before = stats.requests
        let refreshed = try await device.sync.refreshHistory(of: doc)
        let refresh = stats.requests - before
        before = stats.requests
        _ = try await device.sync.content(of: doc, page: page, at: versions[versions.count / 2])
        let read = stats.requests - before
        say("requests: idle round \(idle.map(String.init).joined(separator: ", ")); listing a page's history (\(versions.count) versions) \(listing) "
            + "(\(listing) beyond a round); refreshHistory \(refresh) (it says \(refreshed)); reading one version's content \(read)")
    }

    /// Restores `version` on device `r`, syncs every device twice, and says whether the three
    /// hold the same page, equal to the version (ids aside: re-added elements get new ids).
    static func restore(_ version: PageVersion, on r: Int, _ devices: [Device], label: String) async throws {
        let doc = version.document
        let target = try await devices[r].sync.content(of: doc, page: version.page, at: version)
        let restored = try await devices[r].sync.restore(page: version.page, of: doc, to: version)
        for _ in 0..<2 { for d in devices { try await d.round() } }
        var contents: [PageContent?] = []
        for d in devices {
            let s = try await d.library.openReadOnly(doc)
            contents.append(await s.pageIDs().contains(restored.page) ? try await s.content(of: restored.page) : nil)
            await s.close()
        }
        let same = contents.allSatisfy { $0 != nil && $0 == contents[0] }
        let equal = contents[0].map { withoutIDs($0) == withoutIDs(target) && $0.canvasSize == target.canvasSize } ?? false
        say("\(label): device \(r) brought back version \(version.id.prefix(12)) of \(version.deviceName) (\(target.elements.count) elements, "
            + "\(restored.isNewPage ? "as a new page" : "on its page"), \(restored.undo.count) undo changes); after 2 rounds of each device "
            + "the 3 devices hold the same page: \(same ? "yes" : "NO"), equal to the version (ids aside): \(equal ? "yes" : "NO"); converged \(same && equal ? "yes" : "NO")")
    }

    // MARK: Remote bytes with history and without

    /// The bytes of every file under `root`, and how many files.
    static func folderBytes(_ root: String) -> (bytes: Int, files: Int) {
        var bytes = 0, files = 0
        let e = FileManager.default.enumerator(atPath: root)
        while let name = e?.nextObject() as? String {
            guard let a = try? FileManager.default.attributesOfItem(atPath: root + "/" + name), a[.type] as? FileAttributeType == .typeRegular else { continue }
            bytes += (a[.size] as? NSNumber)?.intValue ?? 0
            files += 1
        }
        return (bytes, files)
    }

    static func fileSize(_ path: String) -> Int? {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue
    }

    /// A notebook of `pages` pages on two folder remotes, one keeping history, one not; `edits`
    /// one-page edits, each made on both (taking turns) and synced.
    static func remoteBytes(pages: Int, edits: Int, seed: UInt64, ink: StrokeSource) async throws {
        var rng = Rng(seed: seed)
        var notebook: [PageContent] = []
        for _ in 0..<pages { notebook.append(ink.page(&rng)) }
        let roots = [SyncBench.tempDir("bytes-with"), SyncBench.tempDir("bytes-without")]
        let runs = try [HistoryRetention.standard, .keepNothing].enumerated().map { k, retention in
            try Device("bytes\(k)", name: "bytes \(k)", place: .folder(roots[k]), retention: retention)
        }
        var docs: [UUID] = []
        for run in runs {
            docs.append(try await run.library.createDocument(title: "\(pages) pages", pages: notebook).id)
            try await run.round()
        }
        for e in 0..<edits {
            // The same edit on both: a stroke drawn (3 in 4) or one deleted, on a random page.
            let index = rng.int(0...pages - 1)
            let draw = rng.int(0...3) > 0
            let stroke = ink.stroke(&rng)
            let pick = rng.int(0...1_000_000)
            for j in 0..<2 {
                let k = (e + j) % 2
                try await SyncBench.withSession(runs[k].library, docs[k]) { s in
                    let p = await s.pageIDs()[index]
                    let strokes = try await s.content(of: p).strokes
                    if draw || strokes.count < 2 { try await s.append(stroke, to: p) } else { try await s.delete([strokes[pick % strokes.count].id], from: p) }
                }
                try await runs[k].round()
            }
        }
        // What the remotes hold inside the grace period (superseded history chunks included), then
        // once it has passed: collected twice (the first sees, the second deletes).
        let early = (folderBytes(roots[0]), folderBytes(roots[1]))
        say("bytes before garbage collection: with history \(early.0.bytes) bytes (\(early.0.files) files), without \(early.1.bytes) bytes (\(early.1.files) files)")
        for run in runs { for _ in 0..<2 { _ = try await run.sync.collectGarbage(GarbageOptions(grace: 0, interval: 0)) } }
        let with = folderBytes(roots[0]), without = folderBytes(roots[1])
        // The old versions' page blobs: every version's blob but the current pages'.
        let versions = runs[0].sync.history(of: docs[0], options: runs[0].options.history)
        let current = Set(versions.filter(\.isCurrent).map(\.id))
        let old = Set(versions.map(\.id)).subtracting(current)
        var oldBytes = 0, oldMissing = 0
        for name in old {
            if let n = fileSize(roots[0] + "/blobs/" + name) { oldBytes += n } else { oldMissing += 1 }
        }
        let blobs = (try? FileManager.default.contentsOfDirectory(atPath: roots[0] + "/blobs")) ?? []
        let others = blobs.filter { !old.contains($0) && !current.contains($0) }
        let otherBytes = others.reduce(0) { $0 + (fileSize(roots[0] + "/blobs/" + $1) ?? 0) }
        let ratio = Double(with.bytes - oldBytes) / Double(max(without.bytes, 1))
        say("bytes: \(edits) one-page edits (each then a sync) of a \(pages)-page notebook of \(ink.name), two folder remotes taking turns, "
            + "after garbage collection (grace 0): with history \(with.bytes) bytes (\(with.files) files), without \(without.bytes) bytes (\(without.files) files); "
            + "old-version page blobs \(oldBytes) bytes (\(old.count - oldMissing) blobs of \(versions.count) versions listed, \(oldMissing) missing), "
            + "other blobs beside the pages' (history chunks) \(otherBytes) bytes (\(others.count)); "
            + "ratio (with - old-version page blobs) / without = \(String(format: "%.3f", ratio))")
    }

    // MARK: Time of a one-page round, with history and without

    static func roundTime(pages: Int, pairs: Int, seed: UInt64, ink: StrokeSource, where placeName: String) async throws {
        var rng = Rng(seed: seed ^ 0x5EED)
        var notebook: [PageContent] = []
        for _ in 0..<pages { notebook.append(ink.page(&rng)) }
        var runs: [Device] = []
        var docs: [UUID] = []
        for (k, retention) in [HistoryRetention.standard, .keepNothing].enumerated() {
            let run = try Device("time\(k)", name: "time \(k)", place: try await place("time\(k)"), retention: retention)
            docs.append(try await run.library.createDocument(title: "\(pages) pages", pages: notebook).id)
            try await run.round()
            runs.append(run)
        }
        var times: [[Double]] = [[], []], ratios: [Double] = []
        // One unmeasured pair first (warm-up), then the measured pairs, the first run alternating.
        for pair in 0...pairs {
            let index = rng.int(0...pages - 1)
            let stroke = ink.stroke(&rng)
            var t = [0.0, 0.0]
            for j in 0..<2 {
                let k = (pair + j) % 2
                try await SyncBench.withSession(runs[k].library, docs[k]) { s in
                    let p = await s.pageIDs()[index]
                    try await s.append(stroke, to: p)
                }
                t[k] = try await measureAsync { _ = try await runs[k].round() } * 1000
            }
            guard pair > 0 else { continue }
            for k in 0..<2 { times[k].append(t[k]) }
            ratios.append(t[0] / t[1])
        }
        say("time: a one-page round of a \(pages)-page notebook (\(placeName)), \(pairs) pairs taking turns: with history \(SyncBench.spread(times[0])) ms, "
            + "without \(SyncBench.spread(times[1])) ms, median of the pairs' ratios (with / without) \(SyncBench.spread(ratios, 2))")
    }

    // MARK: Main

    static let help = "lnote-dev bench history [--rounds N (200)] [--edits N (1000)] [--pages N (200)] [--pairs N (15)] [--seed S] [--only states|bytes|time]"

    static func run(arguments: [String]) async throws {
        let a = try Arguments(arguments, valued: ["rounds", "edits", "pages", "pairs", "seed", "only"], flags: [])
        guard a.positionals.isEmpty else { throw UsageError("bench history: unexpected argument '\(a.positionals[0])'\n" + help) }
        let rounds = try a.int("rounds", in: 1...1_000_000) ?? 200
        let edits = try a.int("edits", in: 1...1_000_000) ?? 1000
        let pages = try a.int("pages", in: 1...100_000) ?? 200
        let pairs = try a.int("pairs", in: 1...100_000) ?? 15
        var seed: UInt64 = 1
        if let s = a.value("seed") {
            guard let v = UInt64(s) else { throw UsageError("bench history: --seed takes a whole number, not '\(s)'") }
            seed = v
        }
        let only = a.value("only")
        if let only, !["states", "bytes", "time"].contains(only) { throw UsageError("bench history: --only takes states, bytes or time, not '\(only)'") }
        defer {
            server?.stop()
            SyncBench.removeFolders()
        }
        let placeName: String
        if ApacheServer.isAvailable {
            let s = try ApacheServer()
            server = s
            placeName = "Apache mod_dav on 127.0.0.1:\(s.port)"
        } else {
            placeName = "a folder"
        }
        say("remote: \(placeName)" + (server == nil ? " (apache2 with mod_dav is not installed: apt-get install apache2-bin)" : "") + "; bytes on folder remotes")
        let ink = StrokeSource()
        if only == nil || only == "states" { try await statesAndRequests(try await place("states"), rounds: rounds, seed: seed, ink: ink) }
        if only == nil || only == "bytes" { try await remoteBytes(pages: pages, edits: edits, seed: seed, ink: ink) }
        if only == nil || only == "time" { try await roundTime(pages: pages, pairs: pairs, seed: seed, ink: ink, where: placeName) }
    }
}
