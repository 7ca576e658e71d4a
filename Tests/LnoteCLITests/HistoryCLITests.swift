// `lnote history`, `render --at`, `restore --at` and `restore --deleted` as a person runs them: two
// libraries syncing through a folder remote, ink drawn and erased between syncs (through a session
// of the store, as an app would), every version listed, drawn and brought back, and bad input
// refused with nothing changed.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreTesting
import Testing

@Suite struct HistoryCLITests {
    /// Two libraries, A and B, with a folder remote each side of them, and A's document "Notes".
    struct World {
        let dir = TempDir()
        var a: String { dir.path + "/a" }
        var b: String { dir.path + "/b" }
        var remote: String { dir.path + "/remote" }

        /// `lnote ARGS --library LIB`, which must succeed.
        @discardableResult
        func ok(_ args: [String], _ lib: String) async throws -> Run {
            let r = try await lnote(args + ["--library", lib])
            #expect(r.status == 0, "\(args): \(r.stderr)")
            return r
        }

        func sync(_ lib: String) async throws { try await ok(["sync"], lib) }

        /// Applies changes to a page of a document of `lib` through a session, as an app does.
        func edit(_ lib: String, _ doc: String, page index: Int, _ changes: [PageChange]) async throws {
            let s = try await Library(root: lib).open(try #require(UUID(uuidString: doc)))
            let page = await s.pageIDs()[index]
            _ = try await s.apply(changes, to: page)
            try await s.close()
        }

        func content(_ lib: String, _ doc: String, page index: Int) async throws -> PageContent {
            let s = try await Library(root: lib).open(try #require(UUID(uuidString: doc)))
            let page = await s.pageIDs()[index]
            let c = try await s.content(of: page)
            try await s.close()
            return c
        }

        func elements(_ lib: String, _ doc: String) async throws -> [Int] {
            let pages = try json(try await ok(["info", doc, "--json"], lib))["pages"] as? [[String: Any]] ?? []
            return pages.map { $0["elements"] as? Int ?? -1 }
        }

        func versions(_ lib: String, _ doc: String, _ extra: [String] = []) async throws -> [[String: Any]] {
            let r = try await ok(["history", doc, "--json"] + extra, lib)
            return try #require(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]], "\(r.stdout)")
        }
    }

    static func stroke(_ seed: UInt32) -> Element { .stroke(SampleContent.stroke(seed: seed, samples: 30)) }

    static func samples(_ c: PageContent) -> [[Sample]] {
        c.elements.compactMap { if case .stroke(let s) = $0 { return s.samples } else { return nil } }
    }

    /// Three versions of page 1 (1 stroke, 2 strokes, then the first erased) published by A, read
    /// by B: the table and the JSON, a version drawn, the erased stroke brought back on B and sent
    /// to A; a page removed and brought back as a new page.
    @Test func versionsAreListedDrawnAndBroughtBack() async throws {
        let w = World()
        let started = Date()
        let doc = try await newDocument("Notes", library: w.a)
        for lib in [w.a, w.b] { try await w.ok(["remote", "add", w.remote, "--create"], lib) }
        let deviceA = try json(try await w.ok(["sync", "--status", "--offline", "--json"], w.a))["device"] as? String
        try await w.edit(w.a, doc, page: 0, [.append([Self.stroke(1)])])
        try await w.sync(w.a)
        try await w.edit(w.a, doc, page: 0, [.append([Self.stroke(2)])])
        try await w.sync(w.a)
        let erased = try await w.content(w.a, doc, page: 0).elements[0]
        try await w.edit(w.a, doc, page: 0, [.delete([erased.id])])
        try await w.sync(w.a)
        try await w.sync(w.b)

        // The same three versions on both libraries, newest first; the current mark only where
        // the state is this library's last synced one (both: B pulled the newest).
        let listed = try await w.versions(w.a, doc)
        #expect(listed.count == 3, "\(listed)")
        #expect(listed.map { $0["strokes"] as? Int } == [1, 2, 1])
        #expect(listed.map { $0["current"] as? Bool } == [true, false, false])
        let pageID = try json(try await w.ok(["info", doc, "--json"], w.a))["pages"].flatMap { ($0 as? [[String: Any]])?.first?["id"] as? String }
        // The device's name by default: the host's (gethostname), at most 64 bytes of it kept.
        var buffer = [CChar](repeating: 0, count: 256)
        let host = gethostname(&buffer, 255) == 0 ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        var previous = Date.distantFuture
        for v in listed {
            #expect(Set(v.keys) == ["id", "page_id", "page", "time", "device", "device_name", "strokes", "current", "page_is_live"], "\(v)")
            let id = try #require(v["id"] as? String)
            #expect(id.count == 64 && id.allSatisfy { $0.isHexDigit && !$0.isUppercase }, "\(id)")
            #expect(v["page_id"] as? String == pageID && v["page"] as? Int == 1 && v["page_is_live"] as? Bool == true)
            #expect(v["device"] as? String == deviceA)
            if !host.isEmpty && host.utf8.count <= 64 { #expect(v["device_name"] as? String == host) }
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let time = try #require((v["time"] as? String).flatMap(f.date), "\(v)")
            #expect(time >= started.addingTimeInterval(-1) && time <= Date() && time <= previous, "\(v)")
            previous = time
        }
        let onB = try await w.versions(w.b, doc)
        #expect(onB.map { $0["id"] as? String } == listed.map { $0["id"] as? String })
        #expect(onB.map { $0["current"] as? Bool } == [true, false, false], "\(onB)")
        let ids = listed.compactMap { $0["id"] as? String }

        // The table: a line that says what it is, a header, a row per version.
        let table = try await w.ok(["history", "Notes"], w.b).stdout.split(separator: "\n").map(String.init)
        #expect(table.count == 5, "\(table)")
        #expect(table[0] == "3 versions of 'Notes', newest first (* the page's state as this library last synced it)", "\(table)")
        #expect(table[1].hasPrefix("  VERSION       PAGE  TIME") && table[1].hasSuffix("STROKES"), "\(table[1])")
        for (i, row) in table[2...].enumerated() {
            let cells = row.dropFirst(2).split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            #expect(row.hasPrefix(i == 0 ? "* " : "  "), "\(row)")
            #expect(cells[0] == String(ids[i].prefix(12)) && cells[1] == "1" && cells.last == String(listed[i]["strokes"] as! Int), "\(row)")
            #expect(row.contains(#/\s\d{4}-\d\d-\d\d \d\d:\d\d [+-]\d{4}\s/#), "\(row)")
        }
        let onePage = try await w.versions(w.a, doc, ["--page", "1"])
        #expect(onePage.count == 3)

        // The middle version drawn differs from the page as it is now.
        let past = w.dir.path + "/past.png", now = w.dir.path + "/now.png"
        let drawn = try await w.ok(["render", doc, "--at", String(ids[1].prefix(8)), "-o", past], w.b)
        #expect(drawn.stdout.hasPrefix("Wrote version \(ids[1].prefix(12)) ("), "\(drawn.stdout)")
        try await w.ok(["render", doc, "-o", now], w.b)
        let pastBytes = try Data(contentsOf: URL(fileURLWithPath: past)), nowBytes = try Data(contentsOf: URL(fileURLWithPath: now))
        #expect(pastBytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) && pastBytes != nowBytes)
        let drawnJSON = try json(try await w.ok(["render", doc, "--at", ids[1], "--page", "1", "-o", past, "--json"], w.b))
        #expect(drawnJSON["version"] as? String == ids[1] && drawnJSON["page"] as? Int == 1 && drawnJSON["page_id"] as? String == pageID)

        // Restored on B: the erased stroke's ink is back (a new id, the same samples), a new edit
        // that the next syncs carry to A.
        #expect(try await w.elements(w.b, doc) == [1])
        let restored = try await w.ok(["restore", doc, "--at", String(ids[1].prefix(6))], w.b)
        #expect(restored.stdout.hasPrefix("Restored page 1 of 'Notes' to version \(ids[1].prefix(12)) (") && restored.stdout.contains(", 2 strokes)")
                && restored.stdout.contains("the next 'lnote sync' sends it"), "\(restored.stdout)")
        #expect(try await w.elements(w.b, doc) == [2])
        let back = try await w.content(w.b, doc, page: 0)
        guard case .stroke(let lost) = erased else { Issue.record("not a stroke"); return }
        #expect(Self.samples(back).contains(lost.samples) && !back.elements.contains { $0.id == erased.id })
        try await w.sync(w.b)
        try await w.sync(w.a)
        #expect(try await w.elements(w.a, doc) == [2])
        #expect(Self.samples(try await w.content(w.a, doc, page: 0)).contains(lost.samples))
        // The restore is a version too, B's, newest.
        let after = try await w.versions(w.a, doc)
        #expect(after.count == 4 && after.first?["strokes"] as? Int == 2 && after.first?["device"] as? String != deviceA, "\(after)")
        let again = try json(try await w.ok(["restore", doc, "--at", String((after[0]["id"] as! String).prefix(12)), "--json"], w.a))
        #expect(again["changed"] as? Bool == false && again["new_page"] as? Bool == false && again["page"] as? Int == 1, "\(again)")

        // A page with ink removed after it synced: its versions say "removed", and a version of it
        // comes back as a new page at the end.
        try await w.ok(["page", "add", doc], w.a)
        try await w.edit(w.a, doc, page: 1, [.append([Self.stroke(7), Self.stroke(8), Self.stroke(9)])])
        try await w.sync(w.a)
        try await w.ok(["page", "remove", doc, "2", "--yes"], w.a)
        try await w.sync(w.a)
        let gone = try await w.versions(w.a, doc).filter { $0["page_is_live"] as? Bool == false }
        let three = try #require(gone.first { $0["strokes"] as? Int == 3 }, "\(gone)")
        #expect(three["page"] is NSNull && three["current"] as? Bool == false)
        let removedID = try #require(three["page_id"] as? String)
        let rows = try await w.ok(["history", doc, "--page", String(removedID.prefix(8))], w.a).stdout
        #expect(rows.contains("\((three["id"] as! String).prefix(12))  removed  "), "\(rows)")
        let revived = try await w.ok(["restore", doc, "--at", String((three["id"] as! String).prefix(10))], w.a)
        #expect(revived.stdout.hasPrefix("Version \((three["id"] as! String).prefix(12)) (") && revived.stdout.contains(", 3 strokes) of a removed page of 'Notes' came back as a new page 2;"), "\(revived.stdout)")
        #expect(try await w.elements(w.a, doc) == [2, 3])
        #expect(try await lnote(["verify", doc, "--library", w.a]).status == 0)
    }

    /// A document deleted on B and synced away: A still lists its history by id and makes it
    /// again, as a new document, once it is gone from A's trash too.
    @Test func aDeletedDocumentIsMadeAgainFromItsHistory() async throws {
        let w = World()
        let doc = try await newDocument("Journal", library: w.a)
        for lib in [w.a, w.b] { try await w.ok(["remote", "add", w.remote, "--create"], lib) }
        try await w.edit(w.a, doc, page: 0, [.append([Self.stroke(3), Self.stroke(4)])])
        try await w.sync(w.a)
        try await w.sync(w.b)
        // B's history folder lost (docs/sync.md §12.5: a mirror): none listed, --refresh reads it again.
        try FileManager.default.removeItem(atPath: w.b + "/.sync/history/\(doc)")
        #expect(try await w.ok(["history", doc], w.b).stdout.hasPrefix("No versions of 'Journal' are kept"))
        let refreshed = try await w.ok(["history", doc, "--refresh"], w.b).stdout
        #expect(refreshed.hasPrefix("Read the history of 'Journal' from \(w.remote) again (") && refreshed.contains("\n1 version of 'Journal', newest first"),
                "\(refreshed)")
        #expect(try await w.versions(w.b, doc).map { $0["strokes"] as? Int } == [2])
        try await w.ok(["delete", doc], w.b)
        try await w.ok(["empty-trash", "--yes"], w.b)
        try await w.sync(w.b)
        try await w.sync(w.a)
        let short = String(doc.prefix(8))
        // Still in A's trash: --deleted says so and changes nothing.
        #expect(!(try await w.ok(["list", "--json"], w.a)).stdout.contains(doc))
        #expect((try await w.ok(["list", "--trash", "--json"], w.a)).stdout.contains(doc))
        #expect(try await w.ok(["history", short], w.a).stdout.hasPrefix("1 version of 'Journal' (in the trash), newest first"))
        let inTrash = try await lnote(["restore", short, "--deleted", "--library", w.a])
        #expect(inTrash.status == 1 && inTrash.stderr == "lnote restore: document \(doc) is in the trash: 'lnote restore \(short)' brings it back as it was\n", "\(inTrash.stderr)")
        try await w.ok(["empty-trash", "--yes"], w.a)
        #expect(!(try await w.ok(["list", "--json"], w.a)).stdout.contains(doc))

        // Its history by id prefix: every page removed.
        let listed = try await w.versions(w.a, short)
        #expect(!listed.isEmpty && listed.allSatisfy { $0["page"] is NSNull && $0["page_is_live"] as? Bool == false }, "\(listed)")
        let table = try await w.ok(["history", short], w.a).stdout
        #expect(table.hasPrefix("1 version of the deleted document \(short), newest first"), "\(table)")

        // A version of it can be drawn; a page of it cannot be restored while it is gone.
        let version = try #require(listed.first?["id"] as? String)
        let png = w.dir.path + "/gone.png"
        let drawn = try await w.ok(["render", short, "--at", version, "-o", png], w.a)
        #expect(drawn.stdout.hasPrefix("Wrote version \(version.prefix(12)) (") && drawn.stdout.contains(" (removed) to "), "\(drawn.stdout)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: png)).starts(with: [0x89, 0x50, 0x4E, 0x47]))
        let notHere = try await lnote(["restore", short, "--at", version, "--library", w.a])
        #expect(notHere.status == 1 && notHere.stderr.hasPrefix("lnote restore: the deleted document \(short) is not in the library: bring it back first"),
                "\(notHere.stderr)")

        let made = try json(try await w.ok(["restore", short, "--deleted", "--json"], w.a))
        let newID = try #require(made["id"] as? String)
        #expect(newID != doc && made["title"] as? String == "Journal" && made["deleted_id"] as? String == doc && made["pages"] as? Int == 1)
        #expect(try await w.elements(w.a, newID) == [2])
        try await w.sync(w.a)
        try await w.sync(w.b)
        #expect(try await w.elements(w.b, newID) == [2])
        // The deleted one stays deleted: the copy has a new id.
        #expect(try await lnote(["info", doc, "--library", w.b]).status == 1)
    }

    /// Bad input: each a clear message, the documented exit code, nothing changed.
    @Test func badInputIsRefusedWithNothingChanged() async throws {
        let w = World()
        let doc = try await newDocument("Notes", library: w.a)
        try await w.ok(["page", "add", doc], w.a)
        // A library without a remote has no history, and gets no .sync/ from being asked.
        let noRemote = try await lnote(["history", doc, "--library", w.a])
        #expect(noRemote.status == 1 && noRemote.stderr.hasPrefix("lnote history: no remote set for ") && noRemote.stderr.contains("history comes from sync"), "\(noRemote.stderr)")
        #expect(!exists(w.a + "/.sync"))
        try await w.ok(["remote", "add", w.remote, "--create"], w.a)
        // A document never synced: said in words (exit 0); --at fails (exit 1).
        let never = try await w.ok(["history", doc], w.a)
        #expect(never.stdout == "No history of 'Notes': it has never been synced from \(w.a) (each 'lnote sync' that changes a page adds a version of it).\n", "\(never.stdout)")
        #expect(try await w.versions(w.a, doc).isEmpty)
        let neverAt = try await lnote(["restore", doc, "--at", "abcdef", "--library", w.a])
        #expect(neverAt.status == 1 && neverAt.stderr == "lnote restore: 'Notes' has no history: it has never been synced from \(w.a) ('lnote sync' keeps its versions)\n", "\(neverAt.stderr)")

        try await w.edit(w.a, doc, page: 0, [.append([Self.stroke(5)])])
        try await w.sync(w.a)
        let versions = try await w.versions(w.a, doc)
        // Two pages: page 1 with a stroke, page 2 empty; both published.
        let first = try #require(versions.first { $0["page"] as? Int == 1 }?["id"] as? String)
        let info = try await w.ok(["info", doc, "--json"], w.a).stdout
        let out = w.dir.path + "/x.png"
        let hex = "0123456789abcdef"
        let unknown = try #require((0..<4096).lazy.map { n in String((0..<6).map { hex[hex.index(hex.startIndex, offsetBy: (n >> ($0 * 4)) & 15)] }) }
            .first { p in !versions.contains { ($0["id"] as! String).hasPrefix(p) } })

        for (args, status, message) in [
            (["render", doc, "--at", "abc12", "-o", out], Int32(64), "lnote render: --at takes a version: 6 to 64 hex characters of it"),
            (["restore", doc, "--at", "xyzxyz"], 64, "lnote restore: --at takes a version: 6 to 64 hex characters of it"),
            (["restore", doc, "--page", "1"], 64, "lnote restore: --page goes with --at VERSION"),
            (["restore", doc, "--at", first, "--deleted"], 64, "lnote restore: --at restores a version of a page, --deleted a whole document"),
            (["render", doc, "--at", unknown, "-o", out], 1, "lnote render: no version \(unknown) of 'Notes'; 'lnote history \(doc.prefix(8))' lists them"),
            (["restore", doc, "--at", unknown.uppercased()], 1, "lnote restore: no version \(unknown.uppercased()) of 'Notes'; 'lnote history \(doc.prefix(8))' lists them"),
            (["restore", doc, "--at", String(first.prefix(12)), "--page", "2"], 1,
             "lnote restore: version \(first.prefix(12)) is not a version of page 2 of 'Notes' (it is of page 1); 'lnote history \(doc.prefix(8)) --page 2' lists them"),
            (["render", doc, "--at", String(first.prefix(12)), "--page", "3", "-o", out], 64, "lnote render: --page 3 is outside 1...2"),
            (["restore", doc, "--deleted"], 1, "lnote restore: document \(doc) is in the library; --deleted makes a document deleted for good again"),
            (["restore", "00000000", "--deleted"], 1, "lnote restore: no deleted document '00000000' known to the sync of \(w.a)"),
            (["history", "No such title"], 1, "lnote history: "),
        ] {
            let r = try await lnote(args + ["--library", w.a])
            #expect(r.status == status && r.stderr.hasPrefix(message), "\(args): \(r.status) \(r.stderr)")
            #expect(r.stdout.isEmpty, "\(args)")
        }
        #expect(!exists(out))
        #expect(try await w.ok(["info", doc, "--json"], w.a).stdout == info)
        #expect(try await w.versions(w.a, doc).count == versions.count)

        // The remote folder gone (an unmounted drive): the list needs no request and is still
        // there; what reads the remote says where it looked.
        try FileManager.default.moveItem(atPath: w.remote, toPath: w.remote + "-away")
        #expect(try await w.versions(w.a, doc).count == versions.count)
        let away = "the remote folder \(w.remote) does not exist (an unmounted drive, or a mistyped path?); past versions are read from it\n"
        for args in [["render", doc, "--at", first, "-o", out], ["restore", doc, "--at", first], ["history", doc, "--refresh"]] {
            let r = try await lnote(args + ["--library", w.a])
            #expect(r.status == 1 && r.stderr == "lnote \(args[0]): " + away, "\(args): \(r.stderr)")
        }
        try FileManager.default.moveItem(atPath: w.remote + "-away", toPath: w.remote)
        #expect(!exists(out))
        #expect(try await w.ok(["info", doc, "--json"], w.a).stdout == info)

        // A title with a terminal control is shown escaped, once, in the table and in errors.
        try await w.ok(["rename", doc, "Notes\u{1B}[2J"], w.a)
        #expect(try await w.ok(["history", doc], w.a).stdout.hasPrefix("2 versions of 'Notes\\e[2J', newest first"))
        let escaped = try await lnote(["restore", doc, "--at", unknown, "--library", w.a])
        #expect(escaped.status == 1 && escaped.stderr.hasPrefix("lnote restore: no version \(unknown) of 'Notes\\e[2J';"), "\(escaped.stderr)")
        try await w.ok(["rename", doc, "Notes"], w.a)

        // Two pages in the same state (two empty pages) are one blob: a version of both, and
        // --page says which.
        try await w.ok(["page", "add", doc], w.a)
        try await w.sync(w.a)
        let empties = try await w.versions(w.a, doc).filter { $0["strokes"] as? Int == 0 }
        if empties.count == 2, let id = empties[0]["id"] as? String, empties[1]["id"] as? String == id {
            let both = try await lnote(["render", doc, "--at", id, "-o", out, "--library", w.a])
            #expect(both.status == 1 && both.stderr.contains("is a version of 2 pages of 'Notes' (pages 2, 3); say which with --page N"), "\(both.stderr)")
            try await w.ok(["render", doc, "--at", id, "--page", "3", "-o", out], w.a)
        } else {
            Issue.record("two empty pages are expected to publish one blob: \(empties)")
        }

        // Two versions whose names share 12 characters, from a device with no name, whose page
        // blobs the remote no longer has (collected): written into A's history folder as its
        // rounds would have mirrored that device's head (docs/sync.md §12.5).
        let stranger = "0BADC0DE-0000-4000-8000-000000000001"
        let twins = ["abcdef0123451", "abcdef0123452"].map { $0 + String(repeating: "0", count: 51) }
        let page1 = try #require(versions.first { $0["page"] as? Int == 1 }?["page_id"] as? String)
        let nowMS = Int(Date().timeIntervalSince1970 * 1000)
        let mirrored: [String: Any] = ["name": "", "inline": twins.enumerated().map { i, blob in
            ["page": page1, "time": nowMS - 1000 + i, "blob": blob, "strokes": 9] as [String: Any]
        }]
        try JSONSerialization.data(withJSONObject: mirrored).write(to: URL(fileURLWithPath: w.a + "/.sync/history/\(doc)/\(stranger).json"))
        let rows = try await w.ok(["history", doc, "--page", "1"], w.a).stdout
        #expect(rows.contains("  abcdef012345  1     ") && rows.contains("  0BADC0DE  9\n"), "\(rows)")
        let before = try await w.ok(["info", doc, "--json"], w.a).stdout
        try FileManager.default.removeItem(atPath: out)
        let twinsAt = try await lnote(["render", doc, "--at", "ABCDEF012345", "-o", out, "--library", w.a])
        #expect(twinsAt.status == 1 && twinsAt.stderr == "lnote render: version ABCDEF012345 matches 2 versions of 'Notes' (abcdef012345, abcdef012345); "
                + "give more of it, as 'lnote history \(doc.prefix(8))' lists them\n", "\(twinsAt.stderr)")
        let collected = try await lnote(["restore", doc, "--at", "abcdef0123452", "--library", w.a])
        #expect(collected.status == 1 && collected.stderr.hasPrefix("lnote restore: version abcdef012345 (")
                && collected.stderr.hasSuffix(", 0BADC0DE, 9 strokes) is no longer on the remote \(w.remote) (collected, or lost), nothing was changed; "
                                              + "'lnote history \(doc.prefix(8)) --refresh' lists what the remote keeps\n"), "\(collected.stderr)")
        #expect(!exists(out))
        #expect(try await w.ok(["info", doc, "--json"], w.a).stdout == before)
    }

    /// Through an encrypted remote: the versions listed, one drawn and one restored on the other
    /// library (the page blobs are read sealed and opened with the library's key).
    @Test func historyThroughAnEncryptedRemote() async throws {
        let w = World()
        let phrase = ["LNOTE_PASSPHRASE": "tr0ub4dor & 3 plus some"]
        let doc = try await newDocument("Sealed", library: w.a)
        for lib in [w.a, w.b] {
            let r = try await lnote(["remote", "add", w.remote, "--create", "--encrypt", "--library", lib], environment: phrase)
            #expect(r.status == 0, "\(r.stderr)")
        }
        try await w.edit(w.a, doc, page: 0, [.append([Self.stroke(11), Self.stroke(12)])])
        try await w.sync(w.a)
        try await w.edit(w.a, doc, page: 0, [.append([Self.stroke(13)])])
        try await w.sync(w.a)
        try await w.sync(w.b)
        let listed = try await w.versions(w.b, doc)
        #expect(listed.map { $0["strokes"] as? Int } == [3, 2], "\(listed)")
        let older = try #require(listed.last?["id"] as? String)
        try await w.ok(["render", doc, "--at", older, "-o", w.dir.path + "/sealed.svg"], w.b)
        #expect(try String(contentsOfFile: w.dir.path + "/sealed.svg", encoding: .utf8).hasPrefix("<"))
        try await w.ok(["restore", doc, "--at", older], w.b)
        #expect(try await w.elements(w.b, doc) == [2])
        try await w.sync(w.b)
        try await w.sync(w.a)
        #expect(try await w.elements(w.a, doc) == [2])
    }

    /// A version's images are drawn from the document's assets: the version that is the page's
    /// state now draws byte for byte as the page does, image included.
    @Test func aVersionsImagesComeFromTheDocumentsAssets() async throws {
        let w = World()
        let doc = try await newDocument("Pictures", library: w.a)
        try await w.ok(["remote", "add", w.remote, "--create"], w.a)
        try await w.edit(w.a, doc, page: 0, [.append([Self.stroke(21), Self.stroke(22)])])
        // The picture: the page itself, drawn small.
        let picture = w.dir.path + "/picture.png"
        try await w.ok(["render", doc, "-o", picture, "--scale", "0.25"], w.a)
        let s = try await Library(root: w.a).open(try #require(UUID(uuidString: doc)))
        let page = await s.pageIDs()[0]
        _ = try await s.insertImage(try Data(contentsOf: URL(fileURLWithPath: picture)), fileExtension: "png",
                                    frame: QuantizedRect(x: 1000, y: 1000, width: 1500, height: 2000), on: page)
        try await s.close()
        try await w.sync(w.a)
        let version = try #require(try await w.versions(w.a, doc).first?["id"] as? String)
        let then = w.dir.path + "/then.png", now = w.dir.path + "/now.png"
        let drawn = try await w.ok(["render", doc, "--at", version, "-o", then], w.a)
        #expect(drawn.stderr.isEmpty, "\(drawn.stderr)")
        try await w.ok(["render", doc, "-o", now], w.a)
        #expect(try Data(contentsOf: URL(fileURLWithPath: then)) == Data(contentsOf: URL(fileURLWithPath: now)))
    }
}
