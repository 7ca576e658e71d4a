// What the user is told when a WebDAV server refuses or cannot be reached (docs/sync.md §7): each
// HTTP failure names its cause in words (no credentials, wrong credentials, forbidden by the
// server's rules, a missing folder, a full server, the server's own error, no server at all), in
// `description` (what `lnote` prints) and in the sentence an app shows; and `status` fails when it
// cannot read the remote.

import Foundation
import LulucatStore
import LulucatSyncTesting
import Testing
@testable import LulucatSync
import LulucatSyncTestSupport

/// Generous limits: every server here answers at once, so no case waits on them, and a loaded
/// machine never turns a refusal into a time-out (the hostile limits' 2 s silence did, once).
let refusalTestLimits = TransferLimits(silence: .seconds(60), minimumRate: 1, rateWindow: .seconds(60), requestDeadline: .seconds(120))

@Suite(.serialized, .timeLimit(.minutes(3)))
struct RefusalTests {
    /// The error `body` throws (nil when it succeeds).
    func failure<T>(_ body: () async throws(RemoteError) -> T) async -> RemoteError? {
        do { _ = try await body(); return nil } catch { return error }
    }

    func remote(_ server: HostileServer, credentials: WebDAVCredentials? = nil) throws(RemoteError) -> WebDAVRemote {
        try WebDAVRemote(url: server.url, credentials: credentials, limits: refusalTestLimits)
    }

    /// What a person reads of `e`: a sentence without a status line or a path.
    func expectSentence(_ e: RemoteError, contains words: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = e.localizedDescription
        #expect(text.contains(words), "\(text)", sourceLocation: sourceLocation)
        #expect(text.hasSuffix(".") && !text.contains("answered") && !text.contains("may or may not"), "\(text)",
                sourceLocation: sourceLocation)
        #expect(e.recoverySuggestion.map { $0.hasSuffix(".") } == true, "\(e)", sourceLocation: sourceLocation)
        // A round's error says the same.
        #expect(SyncError.remote(e).localizedDescription == text, sourceLocation: sourceLocation)
    }

    @Test func a401WithoutCredentialsSaysNoneWereGiven() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        server.on("*", "", .answer(status: 401, body: [], headers: ["WWW-Authenticate": "Basic realm=\"notes\""]))
        let e = await failure { () async throws(RemoteError) in try await remote(server).list("heads") }
        #expect(e == .refused("heads", .noCredentials))
        #expect(e?.description == "heads: the server asks for a user name and password and none were given (401): "
            + "set LNOTE_REMOTE_USER and LNOTE_REMOTE_PASSWORD, or a netrc entry for the host")
        if let e { expectSentence(e, contains: "none were given") }
    }

    @Test func a401WithCredentialsSaysTheyWereRefused() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        // With a challenge (as Apache answers) and without one: the same cause.
        server.on("PROPFIND", "/heads", .answer(status: 401, body: [], headers: ["WWW-Authenticate": "Basic realm=\"notes\""]))
        server.on("GET", "", .answer(status: 401, body: []))
        let r = try remote(server, credentials: WebDAVCredentials(user: "ada", password: "wrong"))
        let listed = await failure { () async throws(RemoteError) in try await r.list("heads") }
        let read = await failure { () async throws(RemoteError) in try await r.get("heads/x", maxBytes: 100) }
        #expect(listed == .refused("heads", .wrongCredentials))
        #expect(read == .refused("heads/x", .wrongCredentials))
        #expect(listed?.description.contains("refused the user name or password (401)") == true, "\(String(describing: listed))")
        if let listed { expectSentence(listed, contains: "refused the user name or password") }
    }

    @Test func a403IsTheServersRulesNotTheCredentials() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        server.on("PUT", "", .answer(status: 403, body: []))
        let r = try remote(server, credentials: WebDAVCredentials(user: "ada", password: "right"))
        let e = await failure { () async throws(RemoteError) in try await r.put("heads/x", [1, 2, 3]) }
        #expect(e == .refused("heads/x", .forbidden))
        #expect(e?.description.contains("403 Forbidden") == true && e?.description.contains("credentials are not the cause") == true,
                "\(String(describing: e))")
        if let e {
            expectSentence(e, contains: "forbids this by its own rules")
            #expect(!e.localizedDescription.contains("refused the user name"))
        }
    }

    @Test func a507OrAFullServerSaysStorage() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        server.on("PUT", "", .answer(status: 507, body: []))
        let r = try remote(server)
        let put = await failure { () async throws(RemoteError) in try await r.put("heads/x", [1, 2, 3]) }
        // A blob goes up under a temporary name: that PUT's 507 is the blob's.
        let created = await failure { () async throws(RemoteError) in try await r.create("blobs/abc", [1, 2, 3]) }
        #expect(put == .refused("heads/x", .storageFull))
        #expect(created == .refused("blobs/abc", .storageFull))
        #expect(put?.description == "heads/x: the server is out of storage (507 Insufficient Storage): nothing was stored")
        if let put { expectSentence(put, contains: "out of storage space") }
    }

    @Test func aServerErrorIsSaidAsSuch() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        server.on("PROPFIND", "", .answer(status: 500, body: []))
        server.on("GET", "", .answer(status: 503, body: []))
        server.on("PUT", "", .answer(status: 502, body: []))
        let r = try remote(server)
        let listed = await failure { () async throws(RemoteError) in try await r.list("heads") }
        let read = await failure { () async throws(RemoteError) in try await r.get("heads/x", maxBytes: 100) }
        let written = await failure { () async throws(RemoteError) in try await r.put("heads/x", [1]) }
        #expect(listed == .refused("heads", .serverError(500)))
        #expect(read == .refused("heads/x", .serverError(503)))
        #expect(listed?.description == "heads: the server failed with an error of its own (500)")
        if let listed { expectSentence(listed, contains: "failed with an error of its own (500)") }
        // A write: the server may have done it before failing; repeated by the next round.
        guard case .ambiguous("heads/x", let m)? = written else { Issue.record("\(String(describing: written))"); return }
        #expect(m == "PUT answered 502, an error of the server's own")
    }

    @Test func aMissingRemoteFolderIsNamed() async throws {
        let server = try HostileServer()
        defer { server.stop() }
        // As Apache answers under a collection that does not exist.
        server.on("PROPFIND", "", .answer(status: 404, body: []))
        server.on("MKCOL", "", .answer(status: 409, body: []))
        server.on("PUT", "", .answer(status: 409, body: []))
        let r = try remote(server)
        let folder = server.url.absoluteString
        let root = await failure { () async throws(RemoteError) in try await r.list("") }
        let made = await failure { () async throws(RemoteError) in try await r.makeFolder("heads") }
        let put = await failure { () async throws(RemoteError) in try await r.put("heads/x", [1]) }
        #expect(root == .refused("", .missingFolder(folder)))
        #expect(made == .refused("heads", .missingFolder(folder)))
        #expect(put == .refused("heads/x", .missingFolder(folder + "heads/")))
        #expect(made?.description == "heads: the folder \(folder) does not exist on the server")
        if let made { expectSentence(made, contains: "The folder \(folder) does not exist on the sync server") }
        // A round says so (not "MKCOL answered 409").
        let lib = Library(root: temporaryFolder("missing-folder"))
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        _ = try await lib.createDocument(title: "Nowhere to go")
        do {
            let report = try await lib.sync(with: r, options: testSyncOptions)
            Issue.record("the round passed: \(report)")
        } catch {
            #expect(error.description == "heads: the folder \(folder) does not exist on the server", "\(error)")
        }
    }

    @Test func noServerAtTheAddressIsSaidInWords() async throws {
        let port = try ApacheServer.freePort()
        let r = try WebDAVRemote(url: URL(string: "http://127.0.0.1:\(port)/notes/")!, credentials: nil, limits: refusalTestLimits)
        let listed = await failure { () async throws(RemoteError) in try await r.list("heads") }
        let written = await failure { () async throws(RemoteError) in try await r.put("heads/x", [1]) }
        let words = "no server answers at 127.0.0.1:\(port) (the connection was refused)"
        #expect(listed == .refused("heads", .unreachable(words)))
        // Refused before anything was sent: not a write that may have happened.
        #expect(written == .refused("heads/x", .unreachable(words)))
        #expect(listed?.description == "heads: " + words)
        if let listed { expectSentence(listed, contains: "could not be reached: " + words) }
    }

    // MARK: Status

    /// `status` never says "nothing to pull" of a remote it could not read; offline it does not ask.
    @Test func statusFailsWhenTheRemoteCannotBeRead() async throws {
        let lib = Library(root: temporaryFolder("status-refused"))
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        _ = try await lib.createDocument(title: "Here")
        let server = try HostileServer()
        defer { server.stop() }
        let cases: [(HostileServer.Behavior, RemoteError)] = [
            (.answer(status: 401, body: [], headers: ["WWW-Authenticate": "Basic realm=\"notes\""]), .refused("heads", .noCredentials)),
            (.answer(status: 500, body: []), .refused("heads", .serverError(500))),
            (.answer(status: 403, body: []), .refused("heads", .forbidden)),
        ]
        for (behavior, expected) in cases {
            server.clearRules()
            server.on("*", "", behavior)
            let sync = try LibrarySync(library: lib, remote: try remote(server))
            do {
                let s = try await sync.status()
                Issue.record("\(behavior): status passed: \(String(describing: s.remoteChanges))")
            } catch {
                guard case .remote(let e) = error else { Issue.record("\(behavior): \(error)"); continue }
                #expect(e == expected, "\(behavior)")
            }
            let offline = try await sync.status(offline: true)
            #expect(offline.remoteChanges == nil && offline.localChanges.count == 1)
        }
        // The remote's folder missing: named.
        server.clearRules()
        server.on("PROPFIND", "", .answer(status: 404, body: []))
        do {
            _ = try await LibrarySync(library: lib, remote: try remote(server)).status()
            Issue.record("status of a missing folder passed")
        } catch {
            #expect("\(error)" == "the folder \(server.url.absoluteString) does not exist on the server", "\(error)")
        }
        // No heads/ yet in a folder that exists: nothing to pull.
        server.clearRules()
        server.on("PROPFIND", "/heads", .answer(status: 404, body: []))
        #expect(try await LibrarySync(library: lib, remote: try remote(server)).status().remoteChanges == 0)
        // No server.
        let port = try ApacheServer.freePort()
        let nowhere = try WebDAVRemote(url: URL(string: "http://127.0.0.1:\(port)/notes/")!, credentials: nil, limits: refusalTestLimits)
        await #expect { try await LibrarySync(library: lib, remote: nowhere).status() } throws: { e in
            guard case .remote(.refused(_, .unreachable)) = e as? SyncError else { return false }
            return true
        }
    }
}
