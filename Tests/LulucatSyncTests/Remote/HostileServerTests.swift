// Replies from a hostile server (HostileServer): each ends with a clear error within the limits
// (short ones here: a second of silence or of slow reply, a few seconds per request), the reply
// held is never larger than its cap (the transport's own counter, not the process's memory),
// and a round that meets one loses nothing here (`verify` clean, every stroke still there).

import Foundation
import LulucatInk
import LulucatStore
import LulucatSyncTesting
import Testing
import LulucatStoreTesting
@testable import LulucatSync
import LulucatSyncTestSupport

/// Limits short enough that a test never waits long: two seconds of silence or of slow reply.
let hostileTestLimits = TransferLimits(silence: .seconds(2), minimumRate: 1024, rateWindow: .seconds(2), requestDeadline: .seconds(6))

@Suite(.serialized, .timeLimit(.minutes(3)))
struct HostileServerTests {
    static let cap = 1 << 20
    static let headName = "00000000-0000-4000-8000-000000000001.00000000-0000-4000-8000-000000000002.head"

    func remote(_ server: HostileServer) throws -> WebDAVRemote {
        try WebDAVRemote(url: server.url, credentials: nil, limits: hostileTestLimits)
    }

    /// The error `body` throws (nil when it succeeds).
    func failure<T>(_ body: () async throws(RemoteError) -> T) async -> RemoteError? {
        do { _ = try await body(); return nil } catch { return error }
    }

    @Test func aHugeAnnouncedBodyIsRefusedBeforeAByteIsRead() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        server.on("GET", "/blobs/", .hugeBody(bytes: 1 << 30))
        let r = try remote(server)
        let e = await failure { () async throws(RemoteError) in try await r.get("blobs/x", maxBytes: Self.cap) }
        guard case .invalidResponse(let p, let m)? = e else { Issue.record("\(String(describing: e))"); return }
        #expect(p == "blobs/x" && m.contains("announced \(1 << 30) bytes, more than \(Self.cap)"), "\(m)")
        #expect(r.transport.counters.largestBody == 0)
        #expect(r.transport.counters.cappedReplies == 1)
        #expect(server.bytesSent < 1 << 30)
    }

    @Test func anEndlessChunkedBodyIsCutAtTheCap() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        server.on("GET", "/heads/", .endlessChunked)
        server.on("PROPFIND", "/heads", .endlessChunked)
        let r = try remote(server)
        let e = await failure { () async throws(RemoteError) in try await r.get("heads/x", maxBytes: Self.cap) }
        guard case .invalidResponse(_, let m)? = e else { Issue.record("\(String(describing: e))"); return }
        #expect(m.contains("larger than \(Self.cap) bytes"), "\(m)")
        #expect(r.transport.counters.largestBody <= Self.cap)
        // The listing has its own cap, given by the caller.
        let l = await failure { () async throws(RemoteError) in try await r.list("heads", maxBytes: Self.cap / 2) }
        guard case .invalidResponse(let p, let lm)? = l else { Issue.record("\(String(describing: l))"); return }
        #expect(p == "heads" && lm.contains("larger than \(Self.cap / 2) bytes"), "\(lm)")
        #expect(r.transport.counters.largestBody <= Self.cap)
        #expect(r.transport.counters.cappedReplies == 2)
    }

    /// A failure's status is the answer: its body is not kept, however long (a 404 is not
    /// "too large" for a small cap, and an endless one does not run on).
    @Test func aFailuresBodyIsNotKept() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        server.on("GET", "/heads/", .endlessFailure(status: 404))
        server.on("GET", "/blobs/", .answer(status: 404, body: [UInt8](repeating: 0x3C, count: 5000)))
        let r = try remote(server)
        for path in ["heads/x", "blobs/x"] {
            let e = await failure { () async throws(RemoteError) in try await r.get(path, maxBytes: 10) }
            #expect(e == .notFound(path), "\(String(describing: e))")
        }
        #expect(r.transport.counters.largestBody == 0)
    }

    @Test func aContentLengthThatLiesNeverLetsMoreThanTheCapIn() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        // Announces little, sends far more than the cap: what follows the announced length is not
        // the reply's.
        server.on("GET", "/heads/small", .lyingLength(claimed: 1000, sent: 8 << 20))
        // Announces less than the cap, sends more, with no length to stop at: never past the cap.
        server.on("GET", "/heads/none", .endlessChunked)
        let r = try remote(server)
        let got = try await r.get("heads/small", maxBytes: Self.cap)
        #expect(got.bytes == [UInt8](repeating: 0x61, count: 1000))
        let e = await failure { () async throws(RemoteError) in try await r.get("heads/none", maxBytes: Self.cap) }
        guard case .invalidResponse? = e else { Issue.record("\(String(describing: e))"); return }
        #expect(r.transport.counters.largestBody <= Self.cap)
    }

    @Test func aReplyCutMidBodyIsAnError() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        server.on("GET", "/blobs/", .cutMidBody(bytes: 200_000))
        server.on("GET", "/heads/", .lyingLength(claimed: 5000, sent: 2000))
        let r = try remote(server)
        for path in ["blobs/x", "heads/x"] {
            let e = await failure { () async throws(RemoteError) in try await r.get(path, maxBytes: Self.cap) }
            switch e {
            case .failed(let p, _)?, .invalidResponse(let p, _)?: #expect(p == path)
            default: Issue.record("\(path): \(String(describing: e))")
            }
        }
        #expect(r.transport.counters.largestBody <= 200_000)
    }

    @Test func aTrickleEndsAtTheMinimumRate() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        server.on("GET", "/heads/", .trickle(bytes: 100_000, interval: .milliseconds(300)))
        let r = try remote(server)
        let e = await failure { () async throws(RemoteError) in try await r.get("heads/x", maxBytes: Self.cap) }
        guard case .timedOut(let p, .tooSlow(let bytes, _, 1024))? = e else { Issue.record("\(String(describing: e))"); return }
        #expect(p == "heads/x" && bytes < 1024)
        #expect(e!.description.contains("the server answered too slowly"), "\(e!)")
        #expect(r.transport.counters.timedOut == 1)
    }

    @Test func aTrickleAboveTheRateEndsAtTheRequestDeadline() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        server.on("GET", "/heads/", .trickle(bytes: 100_000, interval: .milliseconds(20)))
        let limits = TransferLimits(silence: .seconds(1), minimumRate: 1, rateWindow: .seconds(1), requestDeadline: .seconds(2))
        let r = try WebDAVRemote(url: server.url, credentials: nil, limits: limits)
        let e = await failure { () async throws(RemoteError) in try await r.get("heads/x", maxBytes: Self.cap) }
        guard case .timedOut(_, .requestDeadline(2))? = e else { Issue.record("\(String(describing: e))"); return }
        #expect(e!.description.contains("the request took more than 2 s"), "\(e!)")
    }

    @Test func aSilentServerEndsAtTheSilenceLimit() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        server.on("*", "", .silent)
        let r = try remote(server)
        let e = await failure { () async throws(RemoteError) in try await r.list("heads") }
        guard case .timedOut("heads", .silent(let s))? = e else { Issue.record("\(String(describing: e))"); return }
        #expect(s >= 2)
        #expect(e!.description.contains("the server sent nothing for"), "\(e!)")
        #expect(e!.localizedDescription.contains("The sync server sent nothing for"), "\(e!.localizedDescription)")
        // A write that meets it may have happened: ambiguous, in the same words.
        let w = await failure { () async throws(RemoteError) in try await r.put("blobs/x", [1, 2, 3]) }
        guard case .ambiguous("blobs/x", let m)? = w else { Issue.record("\(String(describing: w))"); return }
        #expect(m.contains("the server sent nothing for"), "\(m)")
    }

    @Test func theRoundsDeadlineEndsARequestInFlight() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        server.on("*", "", .silent)
        let r = try WebDAVRemote(url: server.url, credentials: nil, timeout: 60)
        let budget = TransferBudget(limits: TransferLimits(silence: .seconds(60)), roundDeadline: .seconds(1))
        let e = await TransferBudget.$current.withValue(budget) {
            await failure { () async throws(RemoteError) in try await r.get("heads/x", maxBytes: Self.cap) }
        }
        guard case .timedOut(_, .roundDeadline(1))? = e else { Issue.record("\(String(describing: e))"); return }
        // Once it has passed, nothing more is sent.
        let before = server.requests.count
        let again = await TransferBudget.$current.withValue(budget) {
            await failure { () async throws(RemoteError) in try await r.get("heads/y", maxBytes: Self.cap) }
        }
        guard case .timedOut(_, .roundDeadline)? = again else { Issue.record("\(String(describing: again))"); return }
        #expect(server.requests.count == before)
    }

    // MARK: Rounds

    /// A library with one document of five strokes, synced once to a friendly folder (so it has a
    /// base and a change to push), then edited.
    func library() async throws -> (Library, UUID) {
        let lib = Library(root: temporaryFolder("hostile"))
        var rng = TestRandom(seed: 30)
        let doc = try lib.createDocument(title: "Hostile").id
        _ = try await edit(lib, doc) { s in
            for _ in 0..<5 { try await s.append(makeStroke(&rng), to: await s.pageIDs()[0]) }
        }
        return (lib, doc)
    }

    /// The library lost nothing: every document verifies clean and holds what it held.
    func checkIntact(_ lib: Library, _ before: LibraryContents, _ label: String) async throws {
        #expect(try await contents(of: lib) == before, "\(label): the library changed")
        for e in try lib.list() {
            let findings = DocumentVerifier(fileSystem: lib.fileSystem).verify(e.package).filter { $0.severity == .error }
            #expect(findings.isEmpty, "\(label): verify \(e.id): \(findings)")
        }
    }

    static let behaviors: [HostileServer.Behavior] = [
        .hugeBody(bytes: 1 << 30), .lyingLength(claimed: 100, sent: 4 << 20), .endlessChunked,
        .trickle(bytes: 10_000, interval: .seconds(1)), .silent, .cutMidBody(bytes: 300_000),
    ]

    var roundOptions: SyncOptions {
        var o = testSyncOptions
        o.transfer = hostileTestLimits
        o.roundDeadline = .seconds(300)  // a backstop: each behaviour ends by the 2 s and 6 s limits
        o.garbage = nil
        return o
    }

    /// The listing of heads answered by a hostile server: the round fails with a clear error,
    /// nothing here changes.
    @Test(arguments: behaviors)
    func aHostileListingFailsTheRoundAndLosesNothing(_ behavior: HostileServer.Behavior) async throws {
        let (lib, _) = try await library()
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        let server = try HostileServer()
        server.pace = 32 << 20
        defer { server.stop() }
        server.on("PROPFIND", "/heads", behavior)
        let r = try remote(server)
        let before = try await contents(of: lib)
        do {
            let report = try await lib.sync(with: r, options: roundOptions)
            // A lying length that stops short of the cap gives a reply that is not a listing.
            Issue.record("\(behavior): the round passed: \(report)")
        } catch {
            guard case .remote(let e) = error else { Issue.record("\(behavior): \(error)"); return }
            switch e {
            case .invalidResponse("heads", _), .timedOut("heads", _), .failed("heads", _): break
            default: Issue.record("\(behavior): \(e)")
            }
            #expect(!error.localizedDescription.isEmpty)
        }
        #expect(r.transport.counters.largestBody <= RemoteLimits.listingBytes)
        try await checkIntact(lib, before, "\(behavior)")
    }

    /// A head answered by a hostile server: left out and reported, the rest of the round goes on
    /// (the document changed here is pushed), nothing here changes.
    @Test(arguments: behaviors)
    func aHostileHeadIsLeftOutAndTheRoundGoesOn(_ behavior: HostileServer.Behavior) async throws {
        let (lib, doc) = try await library()
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        let server = try HostileServer()
        server.pace = 32 << 20
        defer { server.stop() }
        let listing = """
        <?xml version="1.0" encoding="utf-8"?>
        <D:multistatus xmlns:D="DAV:">\
        <D:response><D:href>/notes/heads/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype></D:prop>\
        <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>\
        <D:response><D:href>/notes/heads/\(Self.headName)</D:href><D:propstat><D:prop><D:getetag>"e1"</D:getetag>\
        <D:getcontentlength>100</D:getcontentlength><D:resourcetype/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>\
        </D:multistatus>
        """
        server.on("PROPFIND", "/heads", .answer(status: 207, body: Array(listing.utf8)))
        server.on("GET", "/heads/" + Self.headName, behavior)
        let r = try remote(server)
        let before = try await contents(of: lib)
        let report = try await lib.sync(with: r, options: roundOptions)
        #expect(report.problems.contains { $0.contains(Self.headName) }, "\(behavior): \(report.problems)")
        #expect(report.skipped.isEmpty, "\(behavior): \(report.skipped)")
        #expect(report.documentsPushed == 1, "\(behavior): the document here was not pushed")
        #expect(server.requests.contains { $0.hasPrefix("PUT ") && $0.contains("/heads/\(doc.uuidString)") }, "\(server.requests)")
        #expect(r.transport.counters.largestBody <= RemoteLimits.headBytes)
        try await checkIntact(lib, before, "\(behavior)")
    }

    /// A server silent to everything: the round ends by its deadline, with that sentence.
    @Test func aStalledServerCostsTheRoundItsDeadlineAtMost() async throws {
        try await checkStalledRound { server throws in try WebDAVRemote(url: server.url, credentials: nil, timeout: 60) }
    }

    /// A round with the remote `makeRemote` gives for a server silent to everything (limits far
    /// longer than the round's deadline of a second): it fails by its deadline, with that
    /// sentence, and the library is as it was.
    func checkStalledRound(_ makeRemote: (HostileServer) throws -> any Remote) async throws {
        let (lib, _) = try await library()
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        let server = try HostileServer()
        server.pace = 32 << 20
        defer { server.stop() }
        server.on("*", "", .silent)
        let r = try makeRemote(server)
        var options = testSyncOptions
        options.transfer = TransferLimits(silence: .seconds(60))
        options.roundDeadline = .seconds(1)
        let before = try await contents(of: lib)
        do {
            _ = try await lib.sync(with: r, options: options)
            Issue.record("the round passed")
        } catch {
            guard case .remote(.timedOut(_, .roundDeadline(1))) = error else { Issue.record("\(error)"); return }
            #expect(error.localizedDescription.contains("took longer than its time limit"), "\(error.localizedDescription)")
        #expect(error.description.contains("took more than its deadline of 1 s"), "\(error)")
        }
        try await checkIntact(lib, before, "stalled")
    }

    /// A blob answered by a hostile server: the head naming it is left out (both kept, reported),
    /// the document here still goes out, nothing here changes.
    @Test(arguments: behaviors)
    func aHostileBlobLeavesItsHeadOutAndLosesNothing(_ behavior: HostileServer.Behavior) async throws {
        let root = temporaryFolder("hostile-root")
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Another device's document, on the server.
        let other = Library(root: temporaryFolder("hostile-other"))
        defer { try? FileManager.default.removeItem(atPath: other.root) }
        var rng = TestRandom(seed: 31)
        let theirs = try other.createDocument(title: "Theirs").id
        _ = try await edit(other, theirs) { s in try await s.append(makeStroke(&rng), to: await s.pageIDs()[0]) }
        _ = try await other.sync(with: FolderRemote(root: root), options: roundOptions)
        let (lib, doc) = try await library()
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        let server = try HostileServer(root: root)
        server.pace = 32 << 20
        defer { server.stop() }
        server.on("GET", "/blobs/", behavior)
        let r = try remote(server)
        let before = try await contents(of: lib)
        let report = try await lib.sync(with: r, options: roundOptions)
        #expect(report.problems.contains { $0.contains("document \(theirs)") && $0.contains("left out") }, "\(behavior): \(report.problems)")
        #expect(report.documentsPushed == 1, "\(behavior): \(report)")
        #expect(try lib.list().map(\.id) == [doc], "\(behavior): a document whose blob was refused was made here")
        #expect(r.transport.counters.largestBody <= RemoteLimits.blobBytes)
        try await checkIntact(lib, before, "\(behavior)")
        // The server behaves again: the other document arrives whole.
        server.clearRules()
        let again = try await lib.sync(with: r, options: roundOptions)
        #expect(again.problems.isEmpty && again.documentsPulled == 1, "\(again)")
    }

    /// A document changed here is not locked while the round waits on the network: the app can
    /// open it, draw and save while the listing (or a blob upload) is outstanding.
    @Test func noDocumentIsLockedWhileTheRoundWaitsOnTheServer() async throws {
        let root = temporaryFolder("hostile-root")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (lib, doc) = try await library()
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        let server = try HostileServer(root: root)
        server.pace = 32 << 20
        defer { server.stop() }
        let r = try remote(server)
        // Synced once: the document has a base, and the remote is known to hold no encryption,
        // so the next round prepares the document and starts its upload before the listing.
        _ = try await lib.sync(with: r, options: roundOptions)
        var rng = TestRandom(seed: 32)
        _ = try await edit(lib, doc) { s in try await s.append(makeStroke(&rng), to: await s.pageIDs()[0]) }
        server.on("PROPFIND", "/heads", .silent)
        var options = roundOptions
        options.transfer = TransferLimits(silence: .seconds(30), minimumRate: 1, rateWindow: .seconds(30), requestDeadline: .seconds(30))
        let round = Task { try await lib.sync(with: r, options: options) }
        // The round has read and coded the document once its blob's upload reaches the server.
        let seen = await eventually { server.requests.contains { $0.hasPrefix("PUT /notes/blobs/") } }
        #expect(seen, "the round did not start its upload: \(server.requests)")
        // The listing is still outstanding: the app draws and saves.
        let drawn = makeStroke(&rng)
        try await edit(lib, doc) { s in try await s.append(drawn, to: await s.pageIDs()[0]) }
        server.stop()
        _ = try? await round.value
        // A friendly server again: the stroke drawn meanwhile goes out.
        let again = try HostileServer(root: root)
        defer { again.stop() }
        let report = try await lib.sync(with: try remote(again), options: roundOptions)
        #expect(report.problems.isEmpty && report.documentsPushed == 1, "\(report)")
        #expect(try await contents(of: lib).documents[doc]!.allElements.contains(drawn.id))
    }

    /// A document changed here and on another device goes through a session: its lock is not
    /// held while the other device's blob is fetched, nor while its own blobs go up, so the app
    /// can draw and save then.
    @Test(arguments: ["GET /notes/blobs/", "PUT /notes/blobs/"])
    func noDocumentIsLockedWhileAMergedDocumentsBlobsMove(_ stalled: String) async throws {
        var rng = TestRandom(seed: 33)
        let theirs = makeStroke(&rng), ours = makeStroke(&rng)
        try await checkTheAppSavesWhileTheRoundWaits(on: stalled, seed: 35) { other, doc in
            try await edit(other, doc) { s in try await s.append(theirs, to: await s.pageIDs()[0]) }
            return theirs.id
        } ours: { lib, doc in
            try await edit(lib, doc) { s in try await s.append(ours, to: await s.pageIDs()[0]) }
            return [ours.id]
        } then: { _, _ in }
    }

    /// An image another device put on a page: its asset's blob is fetched with the page's blob,
    /// before the document is locked, so the app can draw and save while the server holds it.
    @Test func noDocumentIsLockedWhileAnImagesAssetArrives() async throws {
        let picture = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<900).map { UInt8(truncatingIfNeeded: $0 &* 11) })
        nonisolated(unsafe) var image: ImageElement?
        try await checkTheAppSavesWhileTheRoundWaits(on: "GET /notes/blobs/" + BlobName(of: Array(picture)).hex, seed: 34) { other, doc in
            let made = try await edit(other, doc) { s in
                try await s.insertImage(picture, fileExtension: "png", frame: QuantizedRect(x: 10, y: 20, width: 300, height: 200),
                                        on: await s.pageIDs()[0])
            }
            image = made
            return made.id
        } ours: { _, _ in [] } then: { lib, doc in
            let shown = try await edit(lib, doc) { s in try await s.assetPath(of: image!) }
            #expect(FileManager.default.contents(atPath: shown) == picture, "the image's asset did not arrive whole")
        }
    }

    /// A library synced with a folder that another library syncs with too: the other makes an
    /// edit (`theirs`, returning the element it added) and syncs, this one makes its own
    /// (`ours`, returning the elements it added), then syncs through a server that keeps `stalled` (method and path prefix)
    /// unanswered. While the round waits there, the app draws and saves on the document: never
    /// refused as in use. Then both converge with every element, and `then` checks more.
    func checkTheAppSavesWhileTheRoundWaits(on stalled: String, seed: UInt64,
                                           theirs: (Library, UUID) async throws -> UUID,
                                           ours: (Library, UUID) async throws -> [UUID],
                                           then: (Library, UUID) async throws -> Void) async throws {
        let root = temporaryFolder("hostile-root")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (lib, doc) = try await library()
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        let other = Library(root: temporaryFolder("hostile-other"))
        defer { try? FileManager.default.removeItem(atPath: other.root) }
        let folder = FolderRemote(root: root)
        let friendly = try HostileServer(root: root)
        _ = try await lib.sync(with: try remote(friendly), options: roundOptions)
        friendly.stop()
        _ = try await other.sync(with: folder, options: roundOptions)
        let added = try await theirs(other, doc)
        _ = try await other.sync(with: folder, options: roundOptions)
        let kept = try await ours(lib, doc)
        let server = try HostileServer(root: root)
        defer { server.stop() }
        let parts = stalled.split(separator: " ")
        server.on(String(parts[0]), String(parts[1]), .silent)
        var options = roundOptions
        options.transfer = TransferLimits(silence: .seconds(30), minimumRate: 1, rateWindow: .seconds(30), requestDeadline: .seconds(30))
        let r = try remote(server)
        let round = Task { try await lib.sync(with: r, options: options) }
        let seen = await eventually { server.requests.contains { $0.hasPrefix(stalled) } }
        #expect(seen, "the round did not reach \(stalled): \(server.requests)")
        // The round waits on the server: the app draws and saves.
        var rng = TestRandom(seed: seed)
        let drawn = makeStroke(&rng)
        try await edit(lib, doc) { s in try await s.append(drawn, to: await s.pageIDs()[0]) }
        server.stop()
        _ = try? await round.value
        let again = try HostileServer(root: root)
        defer { again.stop() }
        for _ in 0..<2 { _ = try await lib.sync(with: try remote(again), options: roundOptions) }
        _ = try await other.sync(with: folder, options: roundOptions)
        let mine = try await contents(of: lib).documents[doc]!.allElements
        for l in [lib, other] {
            let have = try await contents(of: l).documents[doc]!.allElements
            #expect(have.isSuperset(of: [added, drawn.id] + kept) && have == mine, "an element was lost")
        }
        try await then(lib, doc)
        try await checkIntact(lib, try await contents(of: lib), "after")
    }
}
