// The server's name kept between processes (`.sync/server`, docs/sync.md §6 and §9): a new
// WebDAVRemote's first round sends a blob before its listing answers as one conditional PUT on
// Apache, as a remote that has had a reply does, instead of a PUT and a MOVE.

import Foundation
import LulucatInk
import LulucatStore
import LulucatSyncTesting
import Testing
@testable import LulucatSync
import LulucatSyncTestSupport

@Suite(.serialized)
struct ServerNameTests {
    @Test(.enabled(if: ApacheServer.isAvailable, "apache2 with mod_dav is not installed (apt-get install apache2-bin)"))
    func aNewRemoteCreatesWithOnePutFromItsFirstRound() async throws {
        let server = try ApacheServer()
        defer { server.stop() }
        // A slow link, so the listing is still on its way when the blob goes up (if the machine is
        // slower still, the blob waits for the listing and the figures are the same).
        let relay = try LinkRelay(upstreamPort: server.port, link: .init(delay: .milliseconds(150), bitsPerSecond: 0))
        defer { relay.stop() }
        let lib = Library(root: temporaryFolder("lib"))
        let doc = try await lib.createDocument(title: "Named").id
        var rng = TestRandom(seed: 31)
        let first = makeStroke(&rng), second = makeStroke(&rng)
        try await edit(lib, doc) { s in try await s.append(first, to: await s.pageIDs()[0]) }
        let url = relay.url("/notes/")
        _ = try await lib.sync(with: try WebDAVRemote(url: url, credentials: nil, timeout: 120), options: testSyncOptions)
        let recorded = try String(contentsOfFile: lib.root + "/.sync/server", encoding: .utf8)
        #expect(recorded.hasPrefix(url.absoluteString + "\nApache"), "\(recorded)")
        try await edit(lib, doc) { s in try await s.append(second, to: await s.pageIDs()[0]) }
        let before = server.accessLog().count
        // Another process's remote: no reply yet.
        let r = try await lib.sync(with: try WebDAVRemote(url: url, credentials: nil, timeout: 120), options: testSyncOptions)
        #expect(r.skipped.isEmpty && r.problems.isEmpty, "\(r)")
        let lines = server.accessLog().dropFirst(before)
        #expect(r.requests == 3 && lines.count == 3, "\(lines)")
        #expect(!lines.contains { $0.contains("\"MOVE ") }, "\(lines)")
        #expect(lines.filter { $0.contains("\"PUT /notes/blobs/") }.count == 1, "\(lines)")
    }

    @Test func theNameIsKeptForItsRemoteOnlyAndCleaned() throws {
        let lib = Library(root: temporaryFolder("lib"))
        try lib.prepare()
        let store = SyncStateStore(library: lib)
        try store.prepare()
        #expect(store.serverName("http://127.0.0.1:1/notes/") == nil)
        store.recordServerName("http://127.0.0.1:1/notes/", "Apache/2.4.57\r\n(Debian)\u{7}é")
        #expect(store.serverName("http://127.0.0.1:1/notes/") == "Apache/2.4.57(Debian)")
        #expect(store.serverName("http://127.0.0.1:2/notes/") == nil)
        #expect(store.serverName("") == nil)
        store.recordServerName("http://127.0.0.1:1/notes/", String(repeating: "x", count: 5000))
        #expect(store.serverName("http://127.0.0.1:1/notes/")?.count == SyncStateStore.serverNameLimit)
        // Another remote set up: forgotten with the plain remote.
        store.forgetPlainRemote()
        #expect(store.serverName("http://127.0.0.1:1/notes/") == nil)
    }
}
