// The S3 remote without a server: SigV4 against AWS's published examples (the canonical request,
// the string to sign and the signature, byte for byte), the exact requests S3Remote makes (a fixed
// clock, a transport that records them; the signatures checked against an independent
// computation with Python's hashlib/hmac), ListObjectsV2 pagination and its untrusted replies, the
// errors in words, the s3:// URL form and where credentials come from.

import Foundation
import LulucatSync
import Testing

/// A transport that answers from a script and keeps every request, with the reply cap it was
/// given and whether it was a write (it applies no cap itself: HTTPTransport does, shown on a
/// hostile server in S3HostileServerTests).
final class ScriptedS3Transport: S3Transport, @unchecked Sendable {
    private let lock = NSLock()
    private var replies: [Result<S3HTTPReply, S3TransportFailure>]
    private(set) var requests: [S3HTTPRequest] = []
    /// Each request's `maxBytes` and `write`, in order.
    private(set) var bounds: [(maxBytes: Int, write: Bool)] = []

    init(_ replies: [Result<S3HTTPReply, S3TransportFailure>]) { self.replies = replies }

    func send(_ request: S3HTTPRequest, path: String, write: Bool, maxBytes: Int) async -> Result<S3HTTPReply, S3TransportFailure> {
        lock.withLock {
            requests.append(request)
            bounds.append((maxBytes, write))
            return replies.isEmpty ? .failure(.notSent("no scripted reply")) : replies.removeFirst()
        }
    }
}

func reply(_ status: Int, _ body: String = "", headers: [String: String] = [:]) -> Result<S3HTTPReply, S3TransportFailure> {
    .success(S3HTTPReply(status: status, headers: headers, body: Array(body.utf8)))
}

func s3Error(_ code: String, _ message: String = "") -> String {
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>\(code)</Code><Message>\(message)</Message><RequestId>tx1</RequestId></Error>"
}

/// One ListObjectsV2 page, keys URL-encoded as `encoding-type=url` asks.
func listPage(prefix: String, keys: [(String, String, Int)], prefixes: [String] = [], next: String? = nil) -> String {
    var x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
    x += "<Name>notes-bucket</Name><Prefix>\(S3Signer.encode(prefix))</Prefix><KeyCount>\(keys.count + prefixes.count)</KeyCount>"
    x += "<MaxKeys>1000</MaxKeys><Delimiter>%2F</Delimiter><EncodingType>url</EncodingType>"
    x += "<IsTruncated>\(next != nil)</IsTruncated>"
    if let next { x += "<NextContinuationToken>\(next)</NextContinuationToken>" }
    for (k, etag, size) in keys {
        x += "<Contents><Key>\(S3Signer.encode(k, keepSlash: true))</Key><LastModified>2026-12-07T08:00:01.000Z</LastModified>"
        x += "<ETag>&quot;\(etag)&quot;</ETag><Size>\(size)</Size><StorageClass>STANDARD</StorageClass></Contents>"
    }
    for p in prefixes { x += "<CommonPrefixes><Prefix>\(S3Signer.encode(p, keepSlash: true))</Prefix></CommonPrefixes>" }
    return x + "</ListBucketResult>"
}

let exampleCredentials = S3Credentials(accessKey: "AKIDEXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
let fixedDate = Date(timeIntervalSince1970: 1_796_630_400)  // 2026-12-07T08:00:00Z

func scriptedRemote(_ replies: [Result<S3HTTPReply, S3TransportFailure>], prefix: String = "My Notes",
                    credentials: S3Credentials? = exampleCredentials) -> (S3Remote, ScriptedS3Transport) {
    let t = ScriptedS3Transport(replies)
    let l = S3Location(endpoint: URL(string: "http://127.0.0.1:9000")!, bucket: "notes-bucket", prefix: prefix)
    return (S3Remote(location: l, credentials: credentials, transport: t, now: { fixedDate }), t)
}

@Suite struct S3SignerTests {
    static let aws = S3Signer(credentials: S3Credentials(accessKey: "AKIAIOSFODNN7EXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
                              region: "us-east-1")
    static let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// AWS's "Example: GET Object" (Signature Version 4, header-based authentication).
    @Test func awsGetObjectExample() throws {
        let s = try Self.aws.sign(method: "GET", encodedPath: "/test.txt", query: [],
                                  headers: [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9"),
                                            ("x-amz-content-sha256", Self.empty), ("x-amz-date", "20130524T000000Z")],
                                  payloadHash: Self.empty, amzDate: "20130524T000000Z")
        #expect(s.canonicalRequest == """
        GET
        /test.txt

        host:examplebucket.s3.amazonaws.com
        range:bytes=0-9
        x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
        x-amz-date:20130524T000000Z

        host;range;x-amz-content-sha256;x-amz-date
        e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
        """)
        #expect(s.stringToSign == """
        AWS4-HMAC-SHA256
        20130524T000000Z
        20130524/us-east-1/s3/aws4_request
        7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
        """)
        #expect(s.signature == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(s.authorization == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    /// AWS's "Example: PUT Object": a body, a `$` in the key (encoded once), a Date header signed.
    @Test func awsPutObjectExample() throws {
        let body = Array("Welcome to Amazon S3.".utf8)
        let hash = try S3Signer.sha256Hex(body)
        #expect(hash == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        #expect(S3Signer.encode(path: "/test$file.text") == "/test%24file.text")
        let s = try Self.aws.sign(method: "PUT", encodedPath: S3Signer.encode(path: "/test$file.text"), query: [],
                                  headers: [("Host", "examplebucket.s3.amazonaws.com"), ("Date", "Fri, 24 May 2013 00:00:00 GMT"),
                                            ("x-amz-date", "20130524T000000Z"), ("x-amz-storage-class", "REDUCED_REDUNDANCY"),
                                            ("x-amz-content-sha256", hash)],
                                  payloadHash: hash, amzDate: "20130524T000000Z")
        #expect(s.canonicalRequest.split(separator: "\n", omittingEmptySubsequences: false)[1] == "/test%24file.text")
        #expect(s.stringToSign.hasSuffix("9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d"))
        #expect(s.signature == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
    }

    /// AWS's "Example: GET Bucket (List Objects)" and "GET Bucket Lifecycle": the query sorted and
    /// encoded, a parameter without a value written `name=`.
    @Test func awsQueryExamples() throws {
        let headers = [("Host", "examplebucket.s3.amazonaws.com"), ("x-amz-content-sha256", Self.empty), ("x-amz-date", "20130524T000000Z")]
        let list = try Self.aws.sign(method: "GET", encodedPath: "/", query: [("prefix", "J"), ("max-keys", "2")], headers: headers,
                                     payloadHash: Self.empty, amzDate: "20130524T000000Z")
        #expect(list.canonicalRequest.split(separator: "\n", omittingEmptySubsequences: false)[2] == "max-keys=2&prefix=J")
        #expect(list.signature == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
        let lifecycle = try Self.aws.sign(method: "GET", encodedPath: "/", query: [("lifecycle", "")], headers: headers,
                                          payloadHash: Self.empty, amzDate: "20130524T000000Z")
        #expect(lifecycle.signature == "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
    }

    @Test func encodingAndDates() {
        #expect(S3Signer.encode("a b/c~d_e.f-g+h=i&j") == "a%20b%2Fc~d_e.f-g%2Bh%3Di%26j")
        #expect(S3Signer.encode(path: "/My Notes Ü/日") == "/My%20Notes%20%C3%9C/%E6%97%A5")
        #expect(S3Signer.amzDate(fixedDate) == "20261207T080000Z")
        #expect(S3Signer.amzDate(Date(timeIntervalSince1970: 0)) == "19700101T000000Z")
    }
}

@Suite struct S3RemoteRequestTests {
    /// The exact PUT S3Remote sends: URL, headers, canonical request and signature (the signature
    /// computed independently with Python's hashlib and hmac from the same canonical request).
    @Test func aPutIsSignedExactly() async throws {
        let (remote, t) = scriptedRemote([reply(200)])
        try await remote.put("heads/abc", [1, 2, 3])
        let r = try #require(t.requests.first)
        #expect(r.method == "PUT")
        #expect(r.url.absoluteString == "http://127.0.0.1:9000/notes-bucket/My%20Notes/heads/abc")
        #expect(r.body == [1, 2, 3])
        let hash = "039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81"
        let signed = try S3Signer(credentials: exampleCredentials, region: "us-east-1")
            .sign(method: "PUT", encodedPath: "/notes-bucket/My%20Notes/heads/abc", query: [],
                  headers: [("host", "127.0.0.1:9000"), ("x-amz-content-sha256", hash), ("x-amz-date", "20261207T080000Z")],
                  payloadHash: hash, amzDate: "20261207T080000Z")
        #expect(Array(signed.canonicalRequest.utf8) == Array("""
        PUT
        /notes-bucket/My%20Notes/heads/abc

        host:127.0.0.1:9000
        x-amz-content-sha256:039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81
        x-amz-date:20261207T080000Z

        host;x-amz-content-sha256;x-amz-date
        039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81
        """.utf8))
        #expect(signed.signature == "1efdd2b5d41c5d009cb76d9700d9035df35cfc62a1f89e3218e4a30f387ac594")
        let headers = Dictionary(r.headers.map { ($0.0.lowercased(), $0.1) }, uniquingKeysWith: { a, _ in a })
        #expect(headers["host"] == "127.0.0.1:9000")
        #expect(headers["x-amz-content-sha256"] == hash)
        #expect(headers["x-amz-date"] == "20261207T080000Z")
        #expect(headers["authorization"] == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261207/us-east-1/s3/aws4_request,"
            + "SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature=1efdd2b5d41c5d009cb76d9700d9035df35cfc62a1f89e3218e4a30f387ac594")
        // No conditional header, ever (Swift s3api answers 501 to one).
        #expect(!headers.keys.contains { $0.hasPrefix("if-") })
        #expect(remote.statistics.requests == 1 && remote.statistics.bytesSent == 3)
    }

    /// A listing page after the first: the continuation token in the query, every parameter
    /// encoded and sorted in the canonical request (checked against Python's signature).
    @Test func aListingFollowsContinuationTokensAndSignsTheQuery() async throws {
        let p = "My Notes/heads/"
        let (remote, t) = scriptedRemote([
            reply(200, listPage(prefix: p, keys: [(p, "d41d8cd98f00b204e9800998ecf8427e", 0), (p + "a.head", "11", 10)], next: "dC9hMg==")),
            reply(200, listPage(prefix: p, keys: [(p + "b.head", "22", 20)], prefixes: [p + "sub/"])),
        ])
        let entries = try await remote.list("heads")
        #expect(entries == [RemoteEntry(name: "a.head", etag: "\"11\"", size: 10), RemoteEntry(name: "b.head", etag: "\"22\"", size: 20),
                            RemoteEntry(name: "sub", etag: nil, size: nil, isFolder: true)])
        #expect(t.requests.count == 2 && remote.statistics.requests == 2)
        #expect(t.requests[0].url.absoluteString
            == "http://127.0.0.1:9000/notes-bucket?list-type=2&delimiter=%2F&encoding-type=url&prefix=My%20Notes%2Fheads%2F")
        #expect(t.requests[1].url.absoluteString
            == "http://127.0.0.1:9000/notes-bucket?list-type=2&delimiter=%2F&encoding-type=url&prefix=My%20Notes%2Fheads%2F&continuation-token=dC9hMg%3D%3D")
        let auth = t.requests[1].headers.first { $0.0 == "Authorization" }?.1
        #expect(auth?.hasSuffix("Signature=2b786908ee1d5f389bd59928d8453635243f51b04f6cfc9910adc64149a69b30") == true, "\(auth ?? "-")")
    }

    /// Each request asks the transport for its kind's cap, as WebDAV's do: a GET its `maxBytes`,
    /// a listing page what is left of the listing's `maxBytes` (at most `maxListingPageBytes`),
    /// a write's reply `RemoteLimits.writeReplyBytes`; writes are marked as writes.
    @Test func eachRequestAsksForItsKindsCap() async throws {
        let p = "My Notes/heads/"
        let first = listPage(prefix: p, keys: [(p + "a.head", "11", 10)], next: "t2")
        let (remote, t) = scriptedRemote([
            reply(200, first), reply(200, listPage(prefix: p, keys: [(p + "b.head", "22", 20)])),
            reply(200, listPage(prefix: p, keys: [(p + "b.head", "22", 20)])),
            reply(200, "0123456789"), reply(200), reply(204),
        ])
        let budget = first.utf8.count + 5000
        #expect(try await remote.list("heads", maxBytes: budget).map(\.name) == ["a.head", "b.head"])
        #expect(try await remote.list("heads").map(\.name) == ["b.head"])
        #expect(try await remote.get("blobs/x", maxBytes: 77).bytes == Array("0123456789".utf8))
        try await remote.put("blobs/x", [1, 2, 3])
        try await remote.delete("blobs/x")
        let w = RemoteLimits.writeReplyBytes
        #expect(t.bounds.map(\.maxBytes) == [budget, 5000, min(S3Remote.maxListingPageBytes, RemoteLimits.listingBytes), 77, w, w])
        #expect(t.bounds.map(\.write) == [false, false, false, false, true, true])
    }

    /// Untrusted listings: keys outside the prefix and unsafe names are dropped; a DTD, a
    /// processing instruction, a truncated page without a token or a token seen before, and a
    /// reply that is not a listing are refused; a prefix with nothing under it is notFound.
    @Test func untrustedListingsAreRefusedOrFiltered() async throws {
        let p = "My Notes/blobs/"
        let (r1, _) = scriptedRemote([reply(200, listPage(prefix: p, keys: [(p + "ok", "1", 1), (p + "../x", "2", 1), (p + ".hidden", "3", 1),
                                                                          ("elsewhere/evil", "4", 1), (p + "a b", "5", 1)],
                                                           prefixes: [p + "..", "other/"]))])
        #expect(try await r1.list("blobs").map(\.name) == ["ok"])

        let dtd = "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY e \"boom\">]><ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>"
        let pi = "<?xml version=\"1.0\"?><?evil x?><ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>"
        for bad in [dtd, pi, "<html>not a listing</html>", "not xml at all",
                    listPage(prefix: p, keys: [(p + "a", "1", 1)]).replacingOccurrences(of: "<IsTruncated>false", with: "<IsTruncated>true")] {
            let (r, _) = scriptedRemote([reply(200, bad)])
            await #expect(throws: RemoteError.self) { try await r.list("blobs") }
            do { _ = try await r.list("blobs") } catch {
                if case .invalidResponse = error {} else if case .failed = error {} else { Issue.record("\(error)") }
            }
        }
        let (loop, t) = scriptedRemote([reply(200, listPage(prefix: p, keys: [(p + "a", "1", 1)], next: "same")),
                                        reply(200, listPage(prefix: p, keys: [(p + "b", "1", 1)], next: "same"))])
        do { _ = try await loop.list("blobs"); Issue.record("a repeated continuation token was followed") } catch {
            guard case .invalidResponse = error else { Issue.record("\(error)"); return }
        }
        #expect(t.requests.count == 2)
        let (empty, _) = scriptedRemote([reply(200, listPage(prefix: p, keys: []))])
        await #expect(throws: RemoteError.notFound("blobs")) { try await empty.list("blobs") }
        // The marker alone: an empty folder that exists.
        let (marker, _) = scriptedRemote([reply(200, listPage(prefix: p, keys: [(p, "d41d8cd98f00b204e9800998ecf8427e", 0)]))])
        #expect(try await marker.list("blobs").isEmpty)
    }

    /// Each failure names its cause: a wrong secret is not "access denied", a missing bucket is
    /// not a missing file, a 5xx to a write may have happened, a 501 is a refusal (never a
    /// conflict), a lost reply to a write is ambiguous and to a read is not.
    @Test func errorsSayWhatHappened() async throws {
        func outcome(_ r: Result<S3HTTPReply, S3TransportFailure>, credentials: S3Credentials? = exampleCredentials,
                     _ call: (S3Remote) async throws(RemoteError) -> Void) async -> RemoteError? {
            let (remote, _) = scriptedRemote([r], credentials: credentials)
            do { try await call(remote); return nil } catch { return error }
        }
        let put: (S3Remote) async throws(RemoteError) -> Void = { r throws(RemoteError) in try await r.put("blobs/x", [1]) }
        let get: (S3Remote) async throws(RemoteError) -> Void = { r throws(RemoteError) in _ = try await r.get("blobs/x", maxBytes: 10) }

        let signature = await outcome(reply(403, s3Error("SignatureDoesNotMatch", "The request signature we calculated does not match")), put)
        guard case .failed(_, let m1)? = signature else { Issue.record("\(String(describing: signature))"); return }
        #expect(m1.contains("AWS_SECRET_ACCESS_KEY") && m1.contains("403") && !m1.contains("access denied"), "\(m1)")

        let denied = await outcome(reply(403, s3Error("AccessDenied", "Access Denied")), put)
        guard case .failed(_, let m2)? = denied else { Issue.record("\(String(describing: denied))"); return }
        #expect(m2.contains("access denied") && m2.contains("policy"), "\(m2)")

        let anonymous = await outcome(reply(403, s3Error("AccessDenied")), credentials: nil, put)
        guard case .failed(_, let m3)? = anonymous else { Issue.record("\(String(describing: anonymous))"); return }
        #expect(m3.contains("no credentials"), "\(m3)")

        let skew = await outcome(reply(403, s3Error("RequestTimeTooSkewed")), get)
        #expect("\(String(describing: skew))".contains("clock"))

        let bucket = await outcome(reply(404, s3Error("NoSuchBucket", "The specified bucket does not exist")), get)
        guard case .failed(_, let m4)? = bucket else { Issue.record("\(String(describing: bucket))"); return }
        #expect(m4.contains("bucket 'notes-bucket' does not exist"), "\(m4)")
        #expect(await outcome(reply(404, s3Error("NoSuchKey")), get) == .notFound("blobs/x"))

        let serverError = await outcome(reply(503, s3Error("ServiceUnavailable")), put)
        guard case .ambiguous? = serverError else { Issue.record("\(String(describing: serverError))"); return }
        let readServerError = await outcome(reply(500, s3Error("InternalError")), get)
        guard case .failed(_, let m5)? = readServerError else { Issue.record("\(String(describing: readServerError))"); return }
        #expect(m5.contains("server error"))

        let notImplemented = await outcome(reply(501, s3Error("NotImplemented", "Conditional object PUTs are not supported.")), put)
        guard case .failed(_, let m7)? = notImplemented else { Issue.record("\(String(describing: notImplemented))"); return }
        #expect(m7.contains("does not implement"), "\(m7)")

        let region = await outcome(reply(400, s3Error("AuthorizationHeaderMalformed", "the region 'eu-west-1' is wrong; expecting 'us-east-1'")), get)
        #expect("\(String(describing: region))".contains("region="))
        let moved = await outcome(reply(301, s3Error("PermanentRedirect")), get)
        guard case .invalidResponse(_, let m6)? = moved else { Issue.record("\(String(describing: moved))"); return }
        #expect(m6.contains("another region"))

        #expect(await outcome(.failure(.lost("connection reset")), put) == .ambiguous("blobs/x", "PUT: connection reset"))
        #expect(await outcome(.failure(.lost("connection reset")), get) == .failed("blobs/x", "GET: connection reset"))
        #expect(await outcome(.failure(.notSent("connection refused")), put) == .failed("blobs/x", "PUT: connection refused"))
        // A body larger than maxBytes is refused, never truncated.
        let big = await outcome(reply(200, "12345678901"), get)
        guard case .invalidResponse? = big else { Issue.record("\(String(describing: big))"); return }
    }

    /// Above the threshold: create, the parts in order (each its slice of the bytes), complete
    /// with exactly the parts' numbers and ETags. A part refused aborts the upload and is `failed`
    /// (the object was not touched); a completion that answers 200 with an error is `ambiguous`.
    @Test func largeObjectsGoUpInParts() async throws {
        let created = "<?xml version=\"1.0\"?><InitiateMultipartUploadResult><Bucket>notes-bucket</Bucket><Key>k</Key>"
            + "<UploadId>u-1/x</UploadId></InitiateMultipartUploadResult>"
        let completed = "<?xml version=\"1.0\"?><CompleteMultipartUploadResult><ETag>\"abc-3\"</ETag></CompleteMultipartUploadResult>"
        func remote(_ replies: [Result<S3HTTPReply, S3TransportFailure>]) -> (S3Remote, ScriptedS3Transport) {
            let t = ScriptedS3Transport(replies)
            let l = S3Location(endpoint: URL(string: "http://127.0.0.1:9000")!, bucket: "notes-bucket", prefix: "p")
            return (S3Remote(location: l, credentials: exampleCredentials, transport: t, now: { fixedDate }, multipart: (10, 4)), t)
        }
        let bytes: [UInt8] = Array(0..<11)
        let (r, t) = remote([reply(200, created), reply(200, headers: ["etag": "\"e1\""]), reply(200, headers: ["etag": "\"e2\""]),
                             reply(200, headers: ["etag": "\"e<3>\""]), reply(200, completed)])
        try await r.put("blobs/big", bytes)
        #expect(t.requests.map { "\($0.method) \($0.url.absoluteString.dropFirst(21))" } == [
            "POST /notes-bucket/p/blobs/big?uploads=",
            "PUT /notes-bucket/p/blobs/big?partNumber=1&uploadId=u-1%2Fx",
            "PUT /notes-bucket/p/blobs/big?partNumber=2&uploadId=u-1%2Fx",
            "PUT /notes-bucket/p/blobs/big?partNumber=3&uploadId=u-1%2Fx",
            "POST /notes-bucket/p/blobs/big?uploadId=u-1%2Fx",
        ])
        #expect(t.requests[1...3].map { $0.body ?? [] } == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10]])
        #expect(String(decoding: t.requests[4].body ?? [], as: UTF8.self) == "<CompleteMultipartUpload>"
            + "<Part><PartNumber>1</PartNumber><ETag>\"e1\"</ETag></Part><Part><PartNumber>2</PartNumber><ETag>\"e2\"</ETag></Part>"
            + "<Part><PartNumber>3</PartNumber><ETag>\"e&lt;3&gt;\"</ETag></Part></CompleteMultipartUpload>")
        #expect(r.statistics.requests == 5 && r.statistics.bytesSent == 11 + t.requests[4].body!.count)
        // At the threshold: one PUT.
        let (one, t1) = remote([reply(200)])
        try await one.put("blobs/small", Array(bytes.prefix(10)))
        #expect(t1.requests.map(\.method) == ["PUT"])

        let (refused, t2) = remote([reply(200, created), reply(200, headers: ["etag": "\"e1\""]), reply(500, s3Error("InternalError")), reply(204)])
        do { try await refused.put("blobs/big", bytes); Issue.record("a refused part was not an error") } catch {
            guard case .failed = error else { Issue.record("\(error)"); return }
        }
        #expect(t2.requests.last.map { "\($0.method) \($0.url.absoluteString.dropFirst(21))" } == "DELETE /notes-bucket/p/blobs/big?uploadId=u-1%2Fx")
        let (lost, _) = remote([reply(200, created), reply(200, headers: ["etag": "\"e1\""]), reply(200, headers: ["etag": "\"e2\""]),
                                reply(200, headers: ["etag": "\"e3\""]), reply(200, s3Error("InternalError", "We encountered an internal error"))])
        do { try await lost.put("blobs/big", bytes); Issue.record("a completion with an error was taken for success") } catch {
            guard case .ambiguous = error else { Issue.record("\(error)"); return }
        }
    }

    /// Virtual-hosted addressing: the bucket in the host (signed as sent), the key alone in the
    /// path; a session token is sent and signed.
    @Test func virtualHostedRequestsAndSessionTokens() async throws {
        let t = ScriptedS3Transport([reply(200)])
        let l = S3Location(endpoint: URL(string: "https://s3.eu-west-3.amazonaws.com")!, bucket: "my-notes", prefix: "ada",
                           region: "eu-west-3", addressing: .virtual)
        var credentials = exampleCredentials
        credentials.sessionToken = "FQoGZXIvYXdzE//token=="
        let r = S3Remote(location: l, credentials: credentials, transport: t, now: { fixedDate })
        try await r.put("heads/h", [9])
        let q = try #require(t.requests.first)
        #expect(q.url.absoluteString == "https://my-notes.s3.eu-west-3.amazonaws.com/ada/heads/h")
        let headers = Dictionary(q.headers.map { ($0.0.lowercased(), $0.1) }, uniquingKeysWith: { a, _ in a })
        #expect(headers["host"] == "my-notes.s3.eu-west-3.amazonaws.com")
        #expect(headers["x-amz-security-token"] == "FQoGZXIvYXdzE//token==")
        #expect(headers["authorization"]?.contains("/20261207/eu-west-3/s3/aws4_request,SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,") == true,
                "\(headers["authorization"] ?? "-")")
    }

    @Test func foldersAreMarkersAndUnsafePathsMakeNoRequest() async throws {
        let (remote, t) = scriptedRemote([reply(200), reply(204)])
        try await remote.makeFolder("heads")
        try await remote.delete("heads/gone")
        #expect(t.requests.map { "\($0.method) \($0.url.path(percentEncoded: true))" }
            == ["PUT /notes-bucket/My%20Notes/heads/", "DELETE /notes-bucket/My%20Notes/heads/gone"])
        #expect(t.requests[0].body == [])
        for p in ["../x", "a/../b", ".hidden", "a b", "heads/"] {
            await #expect(throws: RemoteError.failed(p, "unsafe remote path")) { try await remote.put(p, [1]) }
        }
        #expect(t.requests.count == 2)
    }
}

@Suite struct S3LocationTests {
    @Test func theURLForm() throws {
        let swift = try S3Location(url: "s3://sync-test/My%20Notes/lib?endpoint=http://127.0.0.1:8080&region=us-east-1")
        #expect(swift == S3Location(endpoint: URL(string: "http://127.0.0.1:8080")!, bucket: "sync-test", prefix: "My Notes/lib",
                                    region: "us-east-1", addressing: .path))
        #expect(swift.url == "s3://sync-test/My%20Notes/lib?endpoint=http://127.0.0.1:8080&region=us-east-1&style=path")
        #expect(try S3Location(url: swift.url) == swift)

        let aws = try S3Location(url: "s3://my-notes?region=eu-west-3")
        #expect(aws.endpoint.absoluteString == "https://s3.eu-west-3.amazonaws.com" && aws.addressing == .virtual && aws.prefix == "")
        #expect(try S3Location(url: "s3://my.notes/x?region=eu-west-3").addressing == .path)
        let r2 = try S3Location(url: "s3://notes/?endpoint=https://abc.r2.cloudflarestorage.com:443&region=auto&style=virtual")
        #expect(r2.endpoint.absoluteString == "https://abc.r2.cloudflarestorage.com" && r2.region == "auto" && r2.addressing == .virtual)
        #expect(try S3Location(url: "s3://notes").region == "us-east-1")

        for bad in ["s3://ab/x", "s3://Notes/x", "s3://-notes/x", "s3://user:secret@notes/x", "s3://notes/x?secret=abc",
                    "s3://notes/x?endpoint=ftp://h", "s3://notes/x?endpoint=http://u:p@h", "s3://notes/x?endpoint=http://h/path",
                    "s3://notes/a/../b", "s3://notes/x?style=sideways", "s3://notes/x?region=", "http://notes/x", "s3://notes:9000/x"] {
            #expect(throws: RemoteError.self, "\(bad)") { try S3Location(url: bad) }
        }
    }

    @Test func credentialsComeFromTheEnvironmentOrNetrcNeverTheURL() throws {
        let url = "s3://notes/lib?endpoint=http://127.0.0.1:9000"
        let config = SyncConfiguration(remote: url)
        let env = ["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "AWS_SESSION_TOKEN": "TOK"]
        let fromEnv = try #require(try config.makeRemote(environment: env, netrc: "machine 127.0.0.1 login NA password NS") as? S3Remote)
        #expect(fromEnv.signer?.credentials == S3Credentials(accessKey: "AK", secretKey: "SK", sessionToken: "TOK"))
        #expect(fromEnv.identity == "s3://notes/lib?endpoint=http://127.0.0.1:9000&region=us-east-1&style=path")
        let fromNetrc = try #require(try config.makeRemote(environment: [:], netrc: "machine 127.0.0.1 login NA password NS") as? S3Remote)
        #expect(fromNetrc.signer?.credentials == S3Credentials(accessKey: "NA", secretKey: "NS"))
        let none = try #require(try config.makeRemote(environment: [:], netrc: "machine elsewhere login NA password NS") as? S3Remote)
        #expect(none.signer == nil)
        #expect(throws: SyncError.self) { try SyncConfiguration(remote: "s3://AK:SK@notes/lib").makeRemote(environment: [:]) }
        #expect(throws: SyncError.self) { try SyncConfiguration(remote: "s3://notes/lib?access_key=AK").makeRemote(environment: [:]) }
    }
}
