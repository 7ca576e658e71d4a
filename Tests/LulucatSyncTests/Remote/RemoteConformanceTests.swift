// What every `Remote` must do (docs/sync.md §9), checked the same way against each of them: a
// folder, WebDAV on a real Apache (mod_dav), S3 on a real OpenStack Swift with s3api, the
// workshop's memory remote; the folder, WebDAV and S3 remotes also on a root whose path has spaces
// and non-ASCII letters. A new remote is one more case of `ConformanceRemote` (with its `open`)
// and one more test function per root in the suite, which runs every check on it.

import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LulucatStore
import LulucatStoreTesting
import LulucatSync
import LulucatSyncTestSupport
import LulucatSyncTesting
import Testing

// MARK: The remotes under test

/// The remotes the suite runs against.
enum ConformanceRemote: String, CaseIterable, Sendable {
    case folder, webdav, memory, s3
    /// WebDAV on the other servers (`WebDAVServer`): nginx + dav-ext, lighttpd, rclone.
    case nginx, lighttpd, rclone

    /// The checks it runs: all but the cut upload for the memory remote, whose put is one
    /// assignment under a lock (nothing to cut), and for rclone, whose `PUT` writes in place (a
    /// cut one leaves a torn file: only heads are `put`, and their one writer writes them again
    /// next round; blobs go through `create`, checked on every remote).
    var checks: [Check] { self == .memory || self == .rclone ? Check.allCases.filter { $0 != .interruptedUpload } : Check.allCases }

    /// Whether `get` returns the ETag the listing gives (FolderRemote and lighttpd give ETags in
    /// listings only; nginx lists a change token of its own, docs/sync.md §9).
    var etagOnGet: Bool { ![.folder, .nginx, .lighttpd].contains(self) }

    /// The requests `create` of a new name takes once the remote has had a reply: a `PUT` and a
    /// `MOVE` on WebDAV servers whose `PUT` writes in place or ignores `If-None-Match` (nginx,
    /// rclone: docs/sync.md §9.1), one request everywhere else.
    var createRequests: Int { self == .nginx || self == .rclone ? 2 : 1 }

    /// The server of a WebDAV case other than Apache.
    var server: WebDAVServer.Kind? { WebDAVServer.Kind(rawValue: rawValue) }

    /// A fresh remote on an empty root that exists.
    func open(_ root: ConformanceRoot) async throws -> RemoteUnderTest {
        switch self {
        case .folder:
            let scope = temporaryFolder("conformance")
            let path = scope + "/" + root.folderName
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            return RemoteUnderTest(remote: FolderRemote(root: path), etagOnGet: etagOnGet,
                                   stored: { diskTree(scope) },
                                   cutPut: { path0, bytes, label in try await cutFolderPut(root: path, path0, bytes, label) },
                                   stop: { try? FileManager.default.removeItem(atPath: scope) })
        case .webdav, .nginx, .lighttpd, .rclone:
            let server: any StartedWebDAVServer = try self.server.map { try WebDAVServer($0) } ?? ApacheServer()
            let documentRoot = server.dir + "/root"
            if root != .plain {
                try FileManager.default.createDirectory(atPath: documentRoot + "/" + root.folderName, withIntermediateDirectories: false)
                // Apache's and nginx's workers run as nobody (a server started by root).
                if getuid() == 0 && (self == .webdav || self == .nginx) { chown(documentRoot + "/" + root.folderName, 65534, 65534) }
            }
            // As `lnote remote add` reads it: the path as typed, spaces and all; the remote encodes.
            func url(_ port: Int) throws -> URL {
                guard let u = URL(string: "http://127.0.0.1:\(port)/\(root.folderName)/") else { throw TestFailure("no URL for \(root)") }
                return u
            }
            let remote = try WebDAVRemote(url: url(server.port), credentials: nil, timeout: 120)
            return RemoteUnderTest(remote: remote, etagOnGet: etagOnGet, settles: self == .nginx, stored: { diskTree(documentRoot) },
                                   cutPut: { path, bytes, _ in
                                       let proxy = try FaultProxy(upstreamPort: server.port)
                                       defer { proxy.stop() }
                                       let cut = try WebDAVRemote(url: url(proxy.port), credentials: nil, timeout: 120)
                                       proxy.inject(.cutUpload, method: "PUT", pathContains: "/" + path)
                                       var error: RemoteError?
                                       do throws(RemoteError) { try await cut.put(path, bytes) } catch let e { error = e }
                                       #expect(proxy.injected == 1, "the upload was not cut")
                                       return error
                                   },
                                   stop: { server.stop() })
        case .memory:
            let remote = MemoryRemote()
            return RemoteUnderTest(remote: remote, etagOnGet: etagOnGet,
                                   stored: {
                                       var all: [String: [UInt8]?] = remote.storedFiles.mapValues { Optional($0) }
                                       for f in remote.storedFolders { all[f + "/"] = .some(nil) }
                                       return all
                                   },
                                   cutPut: nil, stop: {})
        case .s3:
            // The shared server; a bucket of its own, the root one level down in it (the bucket
            // is the root's parent: a key that escaped the prefix would show there).
            let server = try await SwiftS3Server.shared()
            let bucket = try await server.makeBucket().bucket
            let remote = S3Remote(location: server.location(bucket: bucket, prefix: root.folderName), credentials: SwiftS3Server.credentials,
                                  timeout: 120)
            let whole = S3Remote(location: server.location(bucket: bucket), credentials: SwiftS3Server.credentials, timeout: 120)
            return RemoteUnderTest(remote: remote, etagOnGet: etagOnGet,
                                   stored: {
                                       var all: [String: [UInt8]?] = [:]
                                       for key in (try? await whole.allKeys()) ?? ["(the bucket could not be listed)"] {
                                           all[key] = key.hasSuffix("/") ? .some(nil) : try? await whole.object(key: key)
                                       }
                                       return all
                                   },
                                   cutPut: { path, bytes, _ in
                                       let proxy = try FaultProxy(upstreamPort: server.proxyPort)
                                       defer { proxy.stop() }
                                       let through = S3Location(endpoint: URL(string: "http://127.0.0.1:\(proxy.port)")!, bucket: bucket,
                                                                prefix: root.folderName, region: SwiftS3Server.region)
                                       let cut = S3Remote(location: through, credentials: SwiftS3Server.credentials, timeout: 120)
                                       proxy.inject(.cutUpload, method: "PUT", pathContains: "/" + S3Signer.encode(path: path))
                                       var error: RemoteError?
                                       do throws(RemoteError) { try await cut.put(path, bytes) } catch let e { error = e }
                                       #expect(proxy.injected == 1, "the upload was not cut")
                                       return error
                                   },
                                   stop: {})
        }
    }
}

enum ConformanceRoot: Sendable {
    case plain, unicode
    var folderName: String { self == .plain ? "notes" : "My Notes Ünïcødé 日本" }
}

/// A remote, and what the suite looks at past its calls.
final class RemoteUnderTest: @unchecked Sendable {
    let remote: any Remote
    let etagOnGet: Bool
    /// Whether its listing gives a file's change token only once the file was left alone for a
    /// while (nginx: `WebDAVRemote.changeToken`): `settledList` waits for it.
    let settles: Bool
    /// Everything stored around the remote, its root's parent included (a path that escaped the
    /// root would land there): relative paths to bytes, folders ending in "/" with nil.
    let stored: () async -> [String: [UInt8]?]
    /// A `put` cut halfway through (the remote's own way to be interrupted): the error it ended
    /// in, nil if it did not fail. Nil for a remote whose put cannot be cut.
    let cutPut: ((_ path: String, _ bytes: [UInt8], _ label: String) async throws -> RemoteError?)?
    let stop: () -> Void

    init(remote: any Remote, etagOnGet: Bool, settles: Bool = false, stored: @escaping () async -> [String: [UInt8]?],
         cutPut: ((String, [UInt8], String) async throws -> RemoteError?)?, stop: @escaping () -> Void) {
        self.remote = remote
        self.etagOnGet = etagOnGet
        self.settles = settles
        self.stored = stored
        self.cutPut = cutPut
        self.stop = stop
    }

    /// The folder's listing; of a remote whose tokens settle, the first listing (polled, within a
    /// bound of 15 s) that gives every file one: the event itself, never a fixed wait.
    func settledList(_ folder: String) async throws -> [RemoteEntry] {
        var listed = try await remote.list(folder)
        guard settles else { return listed }
        for _ in 0..<150 where listed.contains(where: { !$0.isFolder && $0.etag == nil }) {
            try await Task.sleep(for: .milliseconds(100))
            listed = try await remote.list(folder)
        }
        return listed
    }
}

// MARK: The checks

/// What a remote must do, one check per case (each a test case of every remote's test function).
enum Check: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case list, getBytesExactly, getEnforcesMaxBytes, getMissing, putReplacesWhole, delete, makeFolderIdempotent, createKeepsWhatIsThere,
         unsafeNamesAreRefused, interruptedUpload, statisticsCountRequests, createCost

    var testDescription: String {
        switch self {
        case .list: "list: one level, files and folders told apart, names exact; a missing folder is notFound"
        case .getBytesExactly: "get: the bytes exactly (empty, 1 byte, 300 KB random), with the ETag it lists"
        case .getEnforcesMaxBytes: "get: a file larger than maxBytes is an error, never a truncated success"
        case .getMissing: "get: a missing file is notFound"
        case .putReplacesWhole: "put: replaces the whole file; the size listed is the byte count; other content, another ETag"
        case .delete: "delete: removes; a missing file is success"
        case .makeFolderIdempotent: "makeFolder: idempotent, and what the folder holds stays"
        case .unsafeNamesAreRefused: "names RemotePath.isSafe rejects: refused by every call, no request made, nothing touched"
        case .interruptedUpload: "an upload cut halfway leaves the old bytes whole, or nothing for a new name; never a torn file"
        case .createKeepsWhatIsThere: "create: writes a new name whole; a whole copy there is kept; one of another size (torn) is replaced; no temporary file stays"
        case .statisticsCountRequests: "statistics: one request per call, found or not; put's bytes sent and get's received exactly"
        case .createCost: "create of a new name: one request where the server's PUT is whole or nothing and conditional (Apache, lighttpd), a PUT and a MOVE elsewhere"
        }
    }

    func run(on remote: ConformanceRemote, _ root: ConformanceRoot) async throws {
        let t = try await remote.open(root)
        defer { t.stop() }
        typealias C = RemoteConformanceTests
        switch self {
        case .list: try await C.list(t)
        case .getBytesExactly: try await C.getBytesExactly(t)
        case .getEnforcesMaxBytes: try await C.getEnforcesMaxBytes(t)
        case .getMissing: try await C.getMissing(t)
        case .putReplacesWhole: try await C.putReplacesWhole(t)
        case .delete: try await C.delete(t)
        case .makeFolderIdempotent: try await C.makeFolderIdempotent(t)
        case .unsafeNamesAreRefused: try await C.unsafeNamesAreRefused(t)
        case .interruptedUpload: try await C.interruptedUpload(t)
        case .createKeepsWhatIsThere: try await C.createKeepsWhatIsThere(t)
        case .statisticsCountRequests: try await C.statisticsCountRequests(t)
        case .createCost: try await C.createCost(t, requests: remote.createRequests)
        }
    }
}

// MARK: The suite

let noApache: Comment = "apache2 with mod_dav is not installed (apt-get install apache2-bin)"
let noSwiftS3 = Comment(rawValue: SwiftS3Server.notInstalled)

/// Every remote, every check. A remote that cannot run here is skipped (`.enabled(if:)`), and
/// says why.
@Suite(.timeLimit(.minutes(3)))
struct RemoteConformanceTests {
    @Test(arguments: ConformanceRemote.folder.checks)
    func folder(_ check: Check) async throws { try await check.run(on: .folder, .plain) }

    @Test("folder at …/My Notes Ünïcødé 日本/", arguments: ConformanceRemote.folder.checks)
    func folderAtAUnicodeRoot(_ check: Check) async throws { try await check.run(on: .folder, .unicode) }

    @Test(.enabled(if: ApacheServer.isAvailable, noApache), arguments: ConformanceRemote.webdav.checks)
    func webdav(_ check: Check) async throws { try await check.run(on: .webdav, .plain) }

    @Test("webdav at …/My Notes Ünïcødé 日本/", .enabled(if: ApacheServer.isAvailable, noApache), arguments: ConformanceRemote.webdav.checks)
    func webdavAtAUnicodeRoot(_ check: Check) async throws { try await check.run(on: .webdav, .unicode) }

    @Test(arguments: ConformanceRemote.memory.checks)
    func memory(_ check: Check) async throws { try await check.run(on: .memory, .plain) }

    // One check at a time on the one Swift server (a Python proxy): run at once, 24 checks queued
    // behind each other, and under a load of 15 the last ones passed the 3 minutes of the time
    // limit while waiting for their turn (a loaded run, stop 42), not while working.
    @Test("s3 on Swift s3api", .serialized, .enabled(if: SwiftS3Server.isAvailable, noSwiftS3), arguments: ConformanceRemote.s3.checks)
    func s3(_ check: Check) async throws { try await check.run(on: .s3, .plain) }

    @Test("s3 on Swift s3api under …/My Notes Ünïcødé 日本/", .serialized, .enabled(if: SwiftS3Server.isAvailable, noSwiftS3),
          arguments: ConformanceRemote.s3.checks)
    func s3AtAUnicodeRoot(_ check: Check) async throws { try await check.run(on: .s3, .unicode) }

    @Test("nginx + dav-ext", .enabled(if: WebDAVServer.Kind.nginx.isAvailable, Comment(rawValue: WebDAVServer.Kind.nginx.missing)),
          arguments: ConformanceRemote.nginx.checks)
    func nginx(_ check: Check) async throws { try await check.run(on: .nginx, .plain) }

    @Test("nginx + dav-ext at …/My Notes Ünïcødé 日本/", .enabled(if: WebDAVServer.Kind.nginx.isAvailable, Comment(rawValue: WebDAVServer.Kind.nginx.missing)),
          arguments: ConformanceRemote.nginx.checks)
    func nginxAtAUnicodeRoot(_ check: Check) async throws { try await check.run(on: .nginx, .unicode) }

    @Test("lighttpd mod_webdav", .enabled(if: WebDAVServer.Kind.lighttpd.isAvailable, Comment(rawValue: WebDAVServer.Kind.lighttpd.missing)),
          arguments: ConformanceRemote.lighttpd.checks)
    func lighttpd(_ check: Check) async throws { try await check.run(on: .lighttpd, .plain) }

    @Test("rclone serve webdav", .enabled(if: WebDAVServer.Kind.rclone.isAvailable, Comment(rawValue: WebDAVServer.Kind.rclone.missing)),
          arguments: ConformanceRemote.rclone.checks)
    func rclone(_ check: Check) async throws { try await check.run(on: .rclone, .plain) }

    static func list(_ t: RemoteUnderTest) async throws {
        let r = t.remote
        for f in ["box", "box/sub", "box/empty"] { try await r.makeFolder(f) }
        let files: [String: [UInt8]] = ["a.bin": [1, 2, 3], "box": [4, 5, 6, 7, 8], "Z-9_x.y": [], "weird..name": [9]]
        for (name, bytes) in files { try await r.put("box/" + name, bytes) }
        try await r.put("box/sub/deep.bin", [1])

        let listed = try await r.list("box")
        // A file named like its folder is listed too (the folder's own entry is the only one left out).
        #expect(listed.map(\.name).sorted() == (Array(files.keys) + ["sub", "empty"]).sorted())
        for e in listed {
            #expect(e.isFolder == ["sub", "empty"].contains(e.name), "\(e)")
            if !e.isFolder { #expect(e.size == files[e.name]?.count, "\(e)") }
        }
        #expect(try await r.list("box/sub").map(\.name) == ["deep.bin"])
        #expect(try await r.list("box/sub").first?.isFolder == false)
        #expect(try await r.list("box/empty").isEmpty)
        for missing in ["nothing", "box/nothing", "nothing/deeper"] {
            await #expect(throws: RemoteError.notFound(missing)) { try await r.list(missing) }
        }
    }

    static func getBytesExactly(_ t: RemoteUnderTest) async throws {
        let r = t.remote
        try await r.makeFolder("box")
        let contents: [String: [UInt8]] = ["empty": [], "one": [0xFF], "big.bin": randomBytes(300_000, seed: 1)]
        for (name, bytes) in contents { try await r.put("box/" + name, bytes) }
        let listed = Dictionary(uniqueKeysWithValues: try await t.settledList("box").map { ($0.name, $0) })
        for (name, bytes) in contents {
            // maxBytes equal to the size is enough.
            let got = try await r.get("box/" + name, maxBytes: bytes.count)
            #expect(got.bytes == bytes, "\(name): \(got.bytes.count) bytes read, \(bytes.count) written")
            #expect(listed[name]?.size == bytes.count)
            let etag = RemotePath.normalizedETag(listed[name]?.etag)
            #expect(etag != nil, "\(name): listed without an ETag")
            if t.etagOnGet {
                #expect(RemotePath.normalizedETag(got.etag) != nil, "\(name): read without an ETag")
                #expect(RemotePath.normalizedETag(got.etag) == etag, "\(name): read \(got.etag ?? "-"), listed \(etag ?? "-")")
            }
        }
    }

    static func getEnforcesMaxBytes(_ t: RemoteUnderTest) async throws {
        let r = t.remote
        try await r.makeFolder("box")
        let bytes = randomBytes(1000, seed: 2)
        try await r.put("box/f", bytes)
        try await r.put("box/one", [7])
        for (path, limit) in [("box/f", 999), ("box/f", 1), ("box/f", 0), ("box/one", 0)] {
            do {
                let got = try await r.get(path, maxBytes: limit)
                Issue.record("\(path) read with maxBytes \(limit): \(got.bytes.count) bytes returned")
            } catch {
                guard case .invalidResponse(let p, _) = error, p == path else { Issue.record("\(path): \(error)"); continue }
            }
        }
        #expect(try await r.get("box/f", maxBytes: 1000).bytes == bytes)
    }

    static func getMissing(_ t: RemoteUnderTest) async throws {
        let r = t.remote
        try await r.makeFolder("box")
        try await r.put("box/here", [1])
        for missing in ["box/missing", "nowhere/missing", "missing"] {
            await #expect(throws: RemoteError.notFound(missing)) { try await r.get(missing, maxBytes: 1 << 20) }
        }
    }

    static func putReplacesWhole(_ t: RemoteUnderTest) async throws {
        let r = t.remote
        try await r.makeFolder("box")
        func state() async throws -> (bytes: [UInt8], got: String?, listed: RemoteEntry?) {
            let got = try await r.get("box/f", maxBytes: 1 << 20)
            let entry = try await t.settledList("box").first { $0.name == "f" }
            return (got.bytes, RemotePath.normalizedETag(got.etag), entry)
        }
        // Long, then shorter, then longer again, then the same length with other bytes.
        let versions = [randomBytes(100_000, seed: 3), randomBytes(10, seed: 4), randomBytes(5000, seed: 5), randomBytes(5000, seed: 6)]
        var etags: [String] = []
        for (i, v) in versions.enumerated() {
            try await r.put("box/f", v)
            let s = try await state()
            #expect(s.bytes == v, "version \(i): \(s.bytes.count) bytes read, \(v.count) written")
            #expect(s.listed?.size == v.count, "version \(i)")
            #expect(s.listed?.isFolder == false)
            let listedETag = try #require(RemotePath.normalizedETag(s.listed?.etag), "version \(i): listed without an ETag")
            #expect(!etags.contains(listedETag), "version \(i) is listed with an earlier version's ETag \(listedETag)")
            etags.append(listedETag)
            if t.etagOnGet { #expect(s.got == listedETag, "version \(i): read with \(s.got ?? "-"), listed with \(listedETag)") }
        }
        #expect(try await r.list("box").map(\.name) == ["f"])
    }

    static func delete(_ t: RemoteUnderTest) async throws {
        let r = t.remote
        try await r.makeFolder("box")
        try await r.put("box/gone", [1, 2])
        try await r.put("box/kept", [3])
        try await r.delete("box/gone")
        await #expect(throws: RemoteError.notFound("box/gone")) { try await r.get("box/gone", maxBytes: 10) }
        #expect(try await r.list("box").map(\.name) == ["kept"])
        // Gone already, never there, in a folder that is not there: all success, nothing else touched.
        for missing in ["box/gone", "box/never", "nowhere/never"] { try await r.delete(missing) }
        #expect(try await r.get("box/kept", maxBytes: 10).bytes == [3])
    }

    static func makeFolderIdempotent(_ t: RemoteUnderTest) async throws {
        let r = t.remote
        await #expect(throws: RemoteError.notFound("box")) { try await r.list("box") }
        try await r.makeFolder("box")
        #expect(try await r.list("box").isEmpty)
        try await r.makeFolder("box")
        try await r.put("box/f", [1, 2, 3])
        try await r.makeFolder("box")
        try await r.makeFolder("box/sub")
        try await r.makeFolder("box/sub")
        let listed = try await r.list("box")
        #expect(listed.map(\.name).sorted() == ["f", "sub"])
        #expect(listed.first { $0.name == "sub" }?.isFolder == true)
        #expect(try await r.get("box/f", maxBytes: 10).bytes == [1, 2, 3])
    }

    /// Paths `RemotePath.isSafe` rejects; "" only where it is not the root (get, put, delete).
    static let unsafePaths = ["..", "a/../b", "box/../box/kept", "../escape", "box/../../escape", "a name", "box/a name",
                              "/abs", "/box/kept", "box/", "box//kept", ".hidden", "box/.hidden", "box/naïve", "box/日本"]

    static func unsafeNamesAreRefused(_ t: RemoteUnderTest) async throws {
        let r = t.remote
        try await r.makeFolder("box")
        try await r.put("box/kept", [1, 2, 3])
        let before = await t.stored()
        let requests = r.statistics.requests
        func refused(_ call: String, _ path: String, _ body: () async throws(RemoteError) -> Void) async {
            do {
                try await body()
                Issue.record("\(call)(\"\(path)\") was not refused")
            } catch {
                guard case .failed(let p, _) = error, p == path else { Issue.record("\(call)(\"\(path)\"): \(error), not failed"); return }
            }
        }
        for p in Self.unsafePaths {
            #expect(!RemotePath.isSafe(p))
            await refused("list", p) { () async throws(RemoteError) in _ = try await r.list(p) }
            await refused("get", p) { () async throws(RemoteError) in _ = try await r.get(p, maxBytes: 1 << 20) }
            await refused("put", p) { () async throws(RemoteError) in try await r.put(p, [6, 6, 6]) }
            await refused("delete", p) { () async throws(RemoteError) in try await r.delete(p) }
            await refused("makeFolder", p) { () async throws(RemoteError) in try await r.makeFolder(p) }
        }
        await refused("get", "") { () async throws(RemoteError) in _ = try await r.get("", maxBytes: 1 << 20) }
        await refused("put", "") { () async throws(RemoteError) in try await r.put("", [6, 6, 6]) }
        await refused("delete", "") { () async throws(RemoteError) in try await r.delete("") }
        #expect(r.statistics.requests == requests, "a refused call made a request")
        let after = await t.stored()
        #expect(after == before, "changed: \(Set(after.keys).symmetricDifference(before.keys).sorted())")
        #expect(try await r.get("box/kept", maxBytes: 10).bytes == [1, 2, 3])
    }

    static func interruptedUpload(_ t: RemoteUnderTest) async throws {
        guard let cutPut = t.cutPut else { Issue.record("this remote has no way to cut a put: leave the check out of its `checks`"); return }
        let r = t.remote
        try await r.makeFolder("box")
        let old = randomBytes(50_000, seed: 7)
        try await r.put("box/torn.bin", old)

        for (path, label) in [("box/torn.bin", "replacing"), ("box/fresh.bin", "new")] {
            let error = try await cutPut(path, randomBytes(200_000, seed: 8), label)
            guard let error else { Issue.record("\(label): a cut upload succeeded"); continue }
            // It may have happened as far as the caller can tell (here it did not).
            guard case .ambiguous(let p, _) = error, p == path else { Issue.record("\(label): \(error), not ambiguous"); continue }
        }
        #expect(try await r.get("box/torn.bin", maxBytes: 1 << 20).bytes == old, "the old file is not whole")
        await #expect(throws: RemoteError.notFound("box/fresh.bin")) { try await r.get("box/fresh.bin", maxBytes: 1 << 20) }
        let listed = try await r.list("box")
        #expect(listed.map(\.name) == ["torn.bin"])
        #expect(listed.first?.size == old.count)
    }

    static func createKeepsWhatIsThere(_ t: RemoteUnderTest) async throws {
        let r = t.remote
        try await r.makeFolder("box")
        let whole = randomBytes(70_000, seed: 10)
        try await r.create("box/new", whole)
        #expect(try await r.get("box/new", maxBytes: 1 << 20).bytes == whole)
        // Made again (another device's upload of the same blob): success, the copy as it was
        // (on WebDAV not even rewritten: its listed ETag stays; nginx lists no ETag to compare).
        let first = RemotePath.normalizedETag(try await r.list("box").first { $0.name == "new" }?.etag)
        try await r.create("box/new", whole)
        #expect(try await r.get("box/new", maxBytes: 1 << 20).bytes == whole)
        if t.remote is WebDAVRemote, !t.settles {
            #expect(RemotePath.normalizedETag(try await r.list("box").first { $0.name == "new" }?.etag) == first, "a whole copy was written over")
        }
        // A torn copy (an in-place write cut before: shorter) is replaced by the whole one.
        try await r.put("box/torn", Array(whole.prefix(1000)))
        try await r.create("box/torn", whole)
        #expect(try await r.get("box/torn", maxBytes: 1 << 20).bytes == whole)
        let listed = try await r.list("box")
        #expect(listed.map(\.name).sorted() == ["new", "torn"], "left beside them: \(listed.map(\.name))")
        for e in listed { #expect(e.size == whole.count, "\(e)") }
    }

    static func createCost(_ t: RemoteUnderTest, requests expected: Int) async throws {
        let r = t.remote
        try await r.makeFolder("box")
        let bytes = randomBytes(5000, seed: 11)
        r.statistics.reset()
        try await r.create("box/one", bytes)
        #expect(r.statistics.requests == expected, "create took \(r.statistics.requests) requests")
        #expect(try await r.get("box/one", maxBytes: 1 << 20).bytes == bytes)
        // Made again, and over a torn copy: still whole, nothing beside it.
        try await r.create("box/one", bytes)
        try await r.put("box/torn", Array(bytes.prefix(10)))
        try await r.create("box/torn", bytes)
        #expect(try await r.get("box/torn", maxBytes: 1 << 20).bytes == bytes)
        #expect(try await r.list("box").map(\.name).sorted() == ["one", "torn"])
    }

    static func statisticsCountRequests(_ t: RemoteUnderTest) async throws {
        let r = t.remote
        let s = r.statistics
        try await r.makeFolder("warm")
        s.reset()
        #expect(s.requests == 0 && s.bytesSent == 0 && s.bytesReceived == 0)
        let bytes = randomBytes(1234, seed: 9)
        func step(_ name: String, sent: Int? = nil, received: Int? = nil, _ call: () async throws -> Void) async throws {
            let (r0, s0, v0) = (s.requests, s.bytesSent, s.bytesReceived)
            try await call()
            #expect(s.requests == r0 + 1, "\(name): \(s.requests - r0) requests")
            if let sent { #expect(s.bytesSent - s0 == sent, "\(name): \(s.bytesSent - s0) bytes sent") }
            if let received { #expect(s.bytesReceived - v0 == received, "\(name): \(s.bytesReceived - v0) bytes received") }
        }
        try await step("makeFolder", sent: 0) { try await r.makeFolder("box") }
        try await step("put", sent: 1234) { try await r.put("box/f", bytes) }
        try await step("get", sent: 0, received: 1234) { _ = try await r.get("box/f", maxBytes: 1 << 20) }
        try await step("list") { _ = try await r.list("box") }
        try await step("get of a missing file", sent: 0) {
            await #expect(throws: RemoteError.notFound("box/none")) { try await r.get("box/none", maxBytes: 10) }
        }
        try await step("list of a missing folder") {
            await #expect(throws: RemoteError.notFound("none")) { try await r.list("none") }
        }
        try await step("delete", sent: 0) { try await r.delete("box/f") }
        try await step("delete of a missing file", sent: 0) { try await r.delete("box/f") }
        #expect(s.requests == 8)
        s.reset()
        #expect(s.requests == 0 && s.bytesSent == 0 && s.bytesReceived == 0)
    }
}

// MARK: Helpers

func randomBytes(_ n: Int, seed: UInt64) -> [UInt8] {
    var rng = TestRandom(seed: seed)
    var out: [UInt8] = []
    out.reserveCapacity(n + 8)
    while out.count < n { withUnsafeBytes(of: rng.next()) { out += $0 } }
    return Array(out.prefix(n))
}

/// Every file and folder under `dir` (hidden ones too), by relative path; folders end in "/".
func diskTree(_ dir: String) -> [String: [UInt8]?] {
    var out: [String: [UInt8]?] = [:]
    func walk(_ rel: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir + "/" + rel)) ?? [] {
            let r = rel + name
            var st = stat()
            guard lstat(dir + "/" + r, &st) == 0 else { continue }
            if (st.st_mode & S_IFMT) == S_IFDIR {
                out[r + "/"] = .some(nil)
                walk(r + "/")
            } else {
                out[r] = FileManager.default.contents(atPath: dir + "/" + r).map { Array($0) }
            }
        }
    }
    walk("")
    return out
}

/// A FolderRemote put through a file system that watches it. First an uncut put on a scratch
/// name beside `path`: the new bytes must be written to a hidden temporary file in the same folder
/// (never the name itself, which holds its old bytes whole until one rename puts the new ones
/// there). Then `path`'s put, whose write is cut halfway (an I/O error after half the bytes):
/// nothing may be left behind. Returns the cut put's error.
func cutFolderPut(root: String, _ path: String, _ bytes: [UInt8], _ label: String) async throws -> RemoteError? {
    let target = root + "/" + path
    let folder = String(target[..<target.lastIndex(of: "/")!])
    let posix = PosixFileSystem()

    let scratchPath = path + "-scratch", scratch = root + "/" + scratchPath
    let scratchOld: [UInt8] = [1, 2, 3]
    try posix.writeAtomically(scratchOld, to: scratch)
    let watchScratch = WatchingFileSystem(target: scratch)
    try await FolderRemote(root: root, fileSystem: watchScratch).put(scratchPath, bytes)
    let whole = watchScratch.takeEvents()
    #expect(whole.writes.count == 1 && whole.renames.count == 1, "\(label): \(whole)")
    for w in whole.writes {
        #expect(w.path != scratch && w.mode == .createExclusive, "\(label): written in place: \(w)")
        #expect(w.path.hasPrefix(folder + "/") && !w.path.dropFirst(folder.count + 1).contains("/"), "\(label): \(w.path) is not beside the file")
        #expect(!RemotePath.isSafeName(String(w.path.dropFirst(folder.count + 1))), "\(label): a listing would show \(w.path)")
        #expect(w.targetHeld == scratchOld, "\(label): the name did not hold its old bytes while the new ones were written")
    }
    if let w = whole.writes.first, let rn = whole.renames.first {
        #expect(rn.from == w.path && rn.to == scratch, "\(label): \(rn)")
        #expect(rn.targetHeld == scratchOld, "\(label): the name did not hold its old bytes until the rename")
    }
    #expect(try posix.readFile(scratch) == bytes)
    try posix.unlink(scratch)

    let old = try? posix.readFile(target)
    let before = diskTree(folder)
    let watch = WatchingFileSystem(target: target)
    watch.cutNextWrite()
    var error: RemoteError?
    do throws(RemoteError) { try await FolderRemote(root: root, fileSystem: watch).put(path, bytes) } catch let e { error = e }
    let cut = watch.takeEvents()
    #expect(cut.writes.count == 1 && cut.renames.isEmpty, "\(label): \(cut)")
    for w in cut.writes {
        #expect(w.path != target, "\(label): written in place: \(w)")
        #expect(w.targetHeld == old, "\(label): the name did not hold its old bytes while the new ones were written")
    }
    #expect(diskTree(folder) == before, "\(label): the cut put left something behind")
    return error
}

/// Records FolderRemote's opens for writing and renames, with what the final name held at each
/// moment; cuts the next write halfway when asked.
final class WatchingFileSystem: ForwardingFileSystem, @unchecked Sendable {
    struct Write: CustomStringConvertible {
        var path: String, mode: OpenMode, targetHeld: [UInt8]?
        var description: String { "write to \(path) (\(mode))" }
    }
    struct Rename: CustomStringConvertible {
        var from: String, to: String, targetHeld: [UInt8]?
        var description: String { "rename \(from) -> \(to)" }
    }
    struct Events: CustomStringConvertible {
        var writes: [Write] = [], renames: [Rename] = []
        var description: String { "\(writes) \(renames)" }
    }

    let target: String
    private let lock = NSLock()
    private var opened: [Int32: (String, OpenMode)] = [:]
    private var events = Events()
    private var cut = false

    init(target: String) {
        self.target = target
        super.init(PosixFileSystem())
    }

    func cutNextWrite() { lock.withLock { cut = true } }
    func takeEvents() -> Events { lock.withLock { defer { events = Events() }; return events } }

    private func held() -> [UInt8]? { try? PosixFileSystem().readFile(target) }

    override func open(_ path: String, _ mode: OpenMode) throws(FileError) -> FileDescriptor {
        let fd = try super.open(path, mode)
        lock.withLock { opened[fd.rawValue] = (path, mode) }
        return fd
    }

    override func write(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(FileError) {
        let (path, mode) = lock.withLock { opened[fd.rawValue] } ?? ("fd \(fd.rawValue)", .read)
        let w = Write(path: path, mode: mode, targetHeld: held())
        let cutNow = lock.withLock { events.writes.append(w); defer { cut = false }; return cut }
        guard cutNow else { return try super.write(fd, bytes) }
        try super.write(fd, UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count / 2)]))
        throw FileError("write (cut halfway by the test)", path: path, errno: EIO)
    }

    override func close(_ fd: FileDescriptor) throws(FileError) {
        _ = lock.withLock { opened.removeValue(forKey: fd.rawValue) }
        try super.close(fd)
    }

    override func rename(_ from: String, to: String) throws(FileError) {
        let rn = Rename(from: from, to: to, targetHeld: held())
        lock.withLock { events.renames.append(rn) }
        try super.rename(from, to: to)
    }
}
