// Sync through a real S3 endpoint (OpenStack Swift with s3api, started by the tests): two
// libraries converge through an encrypted bucket, whose objects show nothing of the library;
// a remote made from an `s3://` URL as `lnote remote add` makes it syncs in clear; a wrong secret
// or an unknown bucket is refused in words, with nothing changed on either side.

import Foundation
import LulucatCrypto
import LulucatStore
@testable import LulucatSync
import LulucatSyncTestSupport
import LulucatSyncTesting
import Testing

@Suite(.enabled(if: SwiftS3Server.isAvailable, noSwiftS3), .timeLimit(.minutes(5)))
struct S3SyncTests {
    /// Every object of a bucket, by key (folder markers as empty arrays).
    static func bucketFiles(_ server: SwiftS3Server, _ bucket: String) async throws -> [String: [UInt8]] {
        let whole = S3Remote(location: server.location(bucket: bucket), credentials: SwiftS3Server.credentials, timeout: 120)
        var out: [String: [UInt8]] = [:]
        for key in try await whole.allKeys() { out[key] = try await whole.object(key: key) ?? [] }
        return out
    }

    @Test func twoLibrariesConvergeThroughAnEncryptedBucket() async throws {
        let server = try await SwiftS3Server.shared()
        let location = try await server.makeBucket(prefix: "Ada's notes")
        let remote = { S3Remote(location: location, credentials: SwiftS3Server.credentials, timeout: 120) }
        let a = Library(root: temporaryFolder("s3-enc-a")), b = Library(root: temporaryFolder("s3-enc-b"))
        defer { for p in [a.root, b.root] { try? FileManager.default.removeItem(atPath: p) } }
        let known = try await KnownLibrary.make(a, seed: 31)
        #expect(try await RemoteEncryption.setUp(library: a, remote: remote(), passphrase: passphrase, cost: testCost))
        #expect(try await !RemoteEncryption.setUp(library: b, remote: remote(), passphrase: passphrase, cost: testCost))
        _ = try await encryptedSync(a, remote())
        let pulled = try await encryptedSync(b, remote())
        #expect(pulled.documentsCreated == known.documents.count)
        #expect(try await contents(of: b) == contents(of: a))

        // Both edit; two rounds each converge.
        var rng = TestRandom(seed: 32)
        let added = makeStroke(&rng)
        try await edit(b, known.documents[0]) { s in try await s.append(added, to: known.pages[0]) }
        try await edit(a, known.documents[1]) { s in try await s.rename(to: "Renamed on A") }
        for _ in 0..<2 { for lib in [a, b] { _ = try await encryptedSync(lib, remote()) } }
        let ca = try await contents(of: a), cb = try await contents(of: b)
        #expect(ca == cb)
        #expect(ca.documents[known.documents[0]]?.allElements.contains(added.id) == true)
        #expect(ca.documents[known.documents[1]]?.title == "Renamed on A")
        // Nothing changed: one request (one ListObjectsV2 page).
        let idle = try await encryptedSync(a, remote())
        #expect(idle.requests == 1, "\(idle.requests) requests when nothing changed")

        // The bucket holds the folder markers, the key settings and sealed objects under opaque
        // names, all under the prefix, and nothing readable of the library.
        let files = try await Self.bucketFiles(server, location.bucket)
        let p = "Ada's notes/"
        #expect(files.keys.allSatisfy { $0.hasPrefix(p) }, "\(files.keys.sorted())")
        #expect(files[p + "heads/"] == [] && files[p + "blobs/"] == [])
        #expect(files.keys.contains(p + "heads/keys"))
        for (key, bytes) in files where !key.hasSuffix("/") && key != p + "heads/keys" {
            #expect(Array(bytes.prefix(4)) == EncryptedObject.magic, "\(key)")
        }
        let devices = try [a, b].map { try SyncStateStore(library: $0).deviceID() }
        #expect(scan(files, for: known, devices: devices).isEmpty)
    }

    /// A multipart upload on the real store (threshold lowered to 6 MiB, 5 MiB parts: S3's
    /// minimum): the bytes read back whole, the listed size, an ETag of three parts, five
    /// requests; a part cut halfway leaves the old object whole and nothing else in the bucket.
    @Test func largeObjectsGoUpInPartsAndACutPartChangesNothing() async throws {
        let server = try await SwiftS3Server.shared()
        let location = try await server.makeBucket(prefix: "big")
        func remote(_ l: S3Location) -> S3Remote {
            S3Remote(location: l, credentials: SwiftS3Server.credentials, transport: HTTPS3Transport(limits: TransferLimits(silence: .seconds(120))),
                     multipart: (6 << 20, 5 << 20))
        }
        let r = remote(location)
        try await r.makeFolder("blobs")
        let bytes = randomBytes((11 << 20) + 1, seed: 40)
        r.statistics.reset()
        try await r.put("blobs/large", bytes)
        #expect(r.statistics.requests == 5)
        #expect(try await r.get("blobs/large", maxBytes: bytes.count).bytes == bytes)
        let listed = try await r.list("blobs")
        #expect(listed.map(\.name) == ["large"] && listed.first?.size == bytes.count)
        #expect(RemotePath.normalizedETag(listed.first?.etag)?.hasSuffix("-3\"") == true, "\(listed)")

        let proxy = try FaultProxy(upstreamPort: server.proxyPort)
        defer { proxy.stop() }
        var through = location
        through.endpoint = URL(string: "http://127.0.0.1:\(proxy.port)")!
        proxy.inject(.cutUpload, method: "PUT", pathContains: "partNumber=2")
        let other = randomBytes((11 << 20) + 2, seed: 41)
        do throws(RemoteError) {
            try await remote(through).put("blobs/large", other)
            Issue.record("a cut part did not fail the upload")
        } catch {
            guard case .failed = error else { Issue.record("\(error), not failed"); return }
        }
        #expect(proxy.injected == 1)
        #expect(try await r.get("blobs/large", maxBytes: bytes.count).bytes == bytes, "the old object is not whole")
        #expect(try await Self.bucketFiles(server, location.bucket).keys.sorted() == ["big/blobs/", "big/blobs/large"])
    }

    /// A listing of several pages on the real store (2 keys a page): every file and folder once,
    /// the folder's marker left out, one request a page.
    @Test func aListingOfManyPagesFollowsTheStoresContinuationTokens() async throws {
        let server = try await SwiftS3Server.shared()
        let location = try await server.makeBucket(prefix: "paged")
        let r = S3Remote(location: location, credentials: SwiftS3Server.credentials, transport: HTTPS3Transport(limits: TransferLimits(silence: .seconds(120))),
                         listPageSize: 2)
        try await r.makeFolder("heads")
        let files = (0..<7).map { "f\($0)" }
        for f in files { try await r.put("heads/" + f, Array(f.utf8)) }
        for d in ["d1", "d2"] { try await r.makeFolder("heads/" + d) }
        r.statistics.reset()
        let listed = try await r.list("heads")
        #expect(listed.filter { !$0.isFolder }.map(\.name).sorted() == files)
        #expect(listed.filter(\.isFolder).map(\.name).sorted() == ["d1", "d2"])
        #expect(listed.allSatisfy { $0.isFolder || $0.size == 2 })
        // 10 keys and prefixes (the marker, 7 files, 2 folders), 2 a page.
        #expect(r.statistics.requests == 5, "\(r.statistics.requests) pages")
    }

    /// What the real store answers to each mistake, as the user reads it: a wrong region, an
    /// unknown access key, a wrong secret, no credentials at all, a missing bucket.
    @Test func eachMistakeIsNamedByTheRealStore() async throws {
        let server = try await SwiftS3Server.shared()
        let location = try await server.makeBucket(prefix: "p")
        let good = S3Remote(location: location, credentials: SwiftS3Server.credentials, timeout: 120)
        try await good.makeFolder("heads")
        var elsewhere = location
        elsewhere.region = "eu-west-1"
        var missing = location
        missing.bucket = "no-such-bucket-here"
        let cases: [(String, S3Remote, String)] = [
            ("wrong region", S3Remote(location: elsewhere, credentials: SwiftS3Server.credentials, timeout: 120), "region="),
            ("unknown access key", S3Remote(location: location, credentials: S3Credentials(accessKey: "nobody:none", secretKey: "x"), timeout: 120),
             "AWS_SECRET_ACCESS_KEY"),
            ("wrong secret", S3Remote(location: location, credentials: S3Credentials(accessKey: SwiftS3Server.accessKey, secretKey: "x"), timeout: 120),
             "AWS_SECRET_ACCESS_KEY"),
            ("no credentials", S3Remote(location: location, credentials: nil, timeout: 120), "no credentials"),
            ("missing bucket", S3Remote(location: missing, credentials: SwiftS3Server.credentials, timeout: 120), "does not exist"),
        ]
        for (label, remote, expected) in cases {
            do throws(RemoteError) {
                _ = try await remote.list("heads")
                Issue.record("\(label): the listing was answered")
            } catch {
                guard case .failed(_, let message) = error else { Issue.record("\(label): \(error), not failed"); continue }
                #expect(message.contains(expected), "\(label): \(message)")
                print("S3 \(label): \(message)")
            }
        }
        #expect(try await good.list("heads").isEmpty)
    }

    @Test func aRemoteFromAnS3URLSyncsAndBadCredentialsOrBucketsAreRefusedInWords() async throws {
        let server = try await SwiftS3Server.shared()
        let bucket = try await server.makeBucket().bucket
        let url = "s3://\(bucket)/lib?endpoint=\(server.endpoint.absoluteString)&region=\(SwiftS3Server.region)"
        let config = SyncConfiguration(remote: url)
        let environment = ["AWS_ACCESS_KEY_ID": SwiftS3Server.accessKey, "AWS_SECRET_ACCESS_KEY": SwiftS3Server.secretKey]
        let a = Library(root: temporaryFolder("s3-url-a")), b = Library(root: temporaryFolder("s3-url-b"))
        defer { for p in [a.root, b.root] { try? FileManager.default.removeItem(atPath: p) } }
        var rng = TestRandom(seed: 33)
        let doc = try await a.createDocument(title: "Through S3").id
        let stroke = makeStroke(&rng)
        try await edit(a, doc) { s in try await s.append(stroke, to: await s.pageIDs()[0]) }
        try config.save(a)
        #expect(SyncConfiguration.read(a) == config)

        _ = try await a.sync(with: try config.makeRemote(environment: environment, netrc: nil), options: testSyncOptions)
        // B's keys from a netrc entry of the endpoint's host.
        let netrc = "machine 127.0.0.1 login \(SwiftS3Server.accessKey) password \(SwiftS3Server.secretKey)\n"
        let r = try await b.sync(with: try config.makeRemote(environment: [:], netrc: netrc), options: testSyncOptions)
        #expect(r.problems.isEmpty, "\(r.problems)")
        #expect(try await contents(of: b) == contents(of: a))
        #expect(try await contents(of: b).documents[doc]?.allElements == [stroke.id])

        // A wrong secret: the signature is refused, and the error says which key to check.
        let before = try await Self.bucketFiles(server, bucket)
        let c = Library(root: temporaryFolder("s3-url-c"))
        defer { try? FileManager.default.removeItem(atPath: c.root) }
        let own = try await c.createDocument(title: "Mine").id
        let wrong = ["AWS_ACCESS_KEY_ID": SwiftS3Server.accessKey, "AWS_SECRET_ACCESS_KEY": "not-the-secret"]
        let badBucket = SyncConfiguration(remote: "s3://no-such-bucket-here/lib?endpoint=\(server.endpoint.absoluteString)")
        for (remote, expected) in [(try config.makeRemote(environment: wrong, netrc: nil), "AWS_SECRET_ACCESS_KEY"),
                                   (try badBucket.makeRemote(environment: environment, netrc: nil), "bucket 'no-such-bucket-here' does not exist")] {
            do {
                let report = try await c.sync(with: remote, options: testSyncOptions)
                #expect(report.problems.contains { $0.contains(expected) }, "a refused round must say so: \(report)")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
            #expect(try await c.documents().map(\.id) == [own])
        }
        #expect(try await Self.bucketFiles(server, bucket) == before)
    }
}
