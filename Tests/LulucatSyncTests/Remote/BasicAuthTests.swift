// HTTP Basic against a real Apache (mod_auth_basic, a {SHA} password file): the right credentials
// sync; none or a wrong password are refused with a clear error and change nothing on either side.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LulucatStore
import LulucatSync
import LulucatSyncTestSupport
import LulucatSyncTesting
import Testing

@Suite(.serialized, .enabled(if: ApacheServer.isAvailable, "apache2 with mod_dav is not installed (apt-get install apache2-bin)"))
struct BasicAuthTests {
    @Test func theRightCredentialsSyncAndWrongOnesAreRefusedWithNothingChanged() async throws {
        let server = try ApacheServer(basicAuth: (user: "ada", password: "pen & ink: 42"))
        defer { server.stop() }
        let good = try WebDAVRemote(url: server.url, credentials: WebDAVCredentials(user: "ada", password: "pen & ink: 42"))
        let a = Library(root: temporaryFolder("authA")), b = Library(root: temporaryFolder("authB"))
        let c = Library(root: temporaryFolder("authC"))
        defer { for l in [a, b, c] { try? FileManager.default.removeItem(atPath: l.root) } }
        var rng = TestRandom(seed: 41)
        let doc = try await a.createDocument(title: "Private").id
        let stroke = makeStroke(&rng)
        try await edit(a, doc) { s in try await s.append(stroke, to: await s.pageIDs()[0]) }

        // The server enforces it: a request without credentials is answered 401, and the remote says so.
        do {
            _ = try await WebDAVRemote(url: server.url, credentials: nil).list("heads")
            Issue.record("a listing without credentials was not refused")
        } catch {
            #expect("\(error)".contains("401"), "\(error)")
        }

        _ = try await a.sync(with: good, options: testSyncOptions)
        _ = try await b.sync(with: good, options: testSyncOptions)
        #expect(try await contents(of: b) == contents(of: a))
        #expect(try await contents(of: b).documents[doc]?.allElements == [stroke.id])

        // No credentials, then a wrong password: refused, naming the cause; C's own document and
        // the remote are as they were.
        let own = try await c.createDocument(title: "Mine").id
        let serverBefore = server.files("heads")
        for credentials in [nil, WebDAVCredentials(user: "ada", password: "wrong")] {
            let remote = try WebDAVRemote(url: server.url, credentials: credentials)
            do {
                let r = try await c.sync(with: remote, options: testSyncOptions)
                #expect(r.problems.contains { $0.contains("401") }, "a refused round must say so: \(r)")
            } catch {
                #expect("\(error)".contains("401"), "\(error)")
            }
            #expect(try await c.documents().map(\.id) == [own])
            #expect(server.files("heads") == serverBefore)
        }
        // Credentials are sent over https only (the loopback address excepted).
        #expect(throws: RemoteError.self) {
            try WebDAVRemote(url: URL(string: "http://example.com/notes/")!, credentials: WebDAVCredentials(user: "ada", password: "x"))
        }
    }
}
