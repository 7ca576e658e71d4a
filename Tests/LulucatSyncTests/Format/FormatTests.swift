// The sync formats as untrusted input: round trips, thousands of seeded mutations that must be
// refused or read without harm, and names from servers that must never become paths.

import Foundation
import LulucatInk
import LulucatStore
import LulucatSyncTesting
import Testing
@testable import LulucatSync

@Suite struct FormatTests {
    /// The byte order that sorts ids (documents in a round, devices and pages in the formats) is
    /// the order of their strings, which the formats were first written in: ids that share long
    /// prefixes, differ in one nibble or in the last byte, and random ones.
    @Test func idsSortInBytesAsTheirStringsDo() {
        var rng = TestRandom(seed: 29)
        var ids = (0..<300).map { _ in rng.uuid() }
        var base = ids[0].uuid
        for k in 0..<16 {
            for v: UInt8 in [0x00, 0x09, 0x0a, 0x0f, 0x10, 0x9f, 0xa0, 0xff] {
                withUnsafeMutableBytes(of: &base) { $0[k] = v }
                ids.append(UUID(uuid: base))
            }
        }
        for a in ids {
            for b in ids.prefix(120) {
                #expect(a.precedesInBytes(b) == (a.uuidString < b.uuidString), "\(a) \(b)")
            }
        }
        #expect(ids.sorted { $0.precedesInBytes($1) } == ids.sorted { $0.uuidString < $1.uuidString })
    }

    func sampleHead(_ rng: inout TestRandom) -> Head {
        let d1 = rng.uuid(), d2 = rng.uuid()
        var pages: [UUID: HeadPage] = [:]
        for i in 0..<5 {
            let removed: VersionVector? = i == 2 ? VersionVector([d1: 4, d2: 7]) : nil
            pages[rng.uuid()] = HeadPage(fields: Register(PageFields(key: PositionKey([UInt32(i + 1), 7]), width: 6120, height: 7920),
                                                          stamp: Stamp(clock: UInt64(i + 1), device: i % 2 == 0 ? d1 : d2)),
                                         removed: removed, blob: BlobName(of: [UInt8(i)]))
        }
        var head = Head(document: rng.uuid(), device: d1, clock: 9, title: Register("Lecture ✍️", stamp: Stamp(clock: 3, device: d2)),
                        origin: DocumentOrigin(created: 1_764_600_000_000, engine: "journal", codec: "compact"),
                        deleted: VersionVector([d2: 2]))
        head.assets = [rng.uuid(): AssetRef(blob: BlobName(of: [9]), ext: "png")]
        head.pages = pages
        return head
    }

    func sampleBlob(_ rng: inout TestRandom) throws -> [UInt8] {
        let dev = rng.uuid()
        var state = PageState(tombstones: [rng.uuid(), rng.uuid()])
        var elements: [UUID: Element] = [:]
        for i in 0..<6 {
            let s = makeStroke(&rng)
            elements[s.id] = .stroke(s)
            state.elements[s.id] = ElementEntry(stamp: Stamp(clock: UInt64(i), device: dev), key: PositionKey([UInt32(i + 1)]),
                                                fingerprint: PageBlob.fingerprint(.stroke(s)))
        }
        return try PageBlob.encode(state: state, canvas: .letter, elements: elements)
    }

    /// Blob names come from the platform's SHA-256 now: the same digest as FIPS 180-4's vectors
    /// and as the store's own implementation (which named every blob before), on seeded inputs of
    /// every length around the block size and a page-sized one.
    @Test func blobNamesAreTheSHA256TheyAlwaysWere() throws {
        #expect(BlobName(of: Array("abc".utf8)).hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(BlobName(of: []).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        var rng = TestRandom(seed: 31)
        for n in Array(0...130) + [1000, 4096, 65_537, 257_452] {
            let bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            #expect(BlobName(of: bytes).bytes == ContentDigest.sha256(bytes), "length \(n)")
        }
    }

    /// A clock beyond `Stamp.maxClock` (a hostile head near 2^64 once made every device trap on
    /// "arithmetic overflow", even after the head was deleted) is refused where it is decoded, in a
    /// head's clock, its stamps and its removals, and in a blob's entries.
    @Test func clocksBeyondTheBoundAreRefused() throws {
        var rng = TestRandom(seed: 41)
        var head = sampleHead(&rng)
        #expect(try Head.decode(head.encode()) == head)
        head.clock = Stamp.maxClock
        #expect(try Head.decode(head.encode()).clock == Stamp.maxClock, "the bound itself is read")
        head.clock = Stamp.maxClock + 1
        #expect(throws: SyncFormatError.self) { try Head.decode(head.encode()) }
        head.clock = UInt64.max
        #expect(throws: SyncFormatError.self) { try Head.decode(head.encode()) }
        head = sampleHead(&rng)
        head.title = Register(head.title.value, stamp: Stamp(clock: UInt64.max - 1, device: head.device))
        #expect(throws: SyncFormatError.self) { try Head.decode(head.encode()) }
        head = sampleHead(&rng)
        head.deleted = VersionVector([head.device: Stamp.maxClock + 7])
        #expect(throws: SyncFormatError.self) { try Head.decode(head.encode()) }

        let device = rng.uuid()
        var state = PageState()
        let stroke = Element.stroke(makeStroke(&rng))
        state.elements[stroke.id] = ElementEntry(stamp: Stamp(clock: UInt64.max, device: device), key: PositionKey([5]), fingerprint: PageBlob.fingerprint(stroke))
        let blob = try PageBlob.encode(state: state, canvas: .a4, elements: [stroke.id: stroke])
        #expect(throws: SyncFormatError.self) { try PageBlob.decode(blob) }
        #expect(throws: SyncError.self) { try DocumentRound.nextStamp(after: Stamp.maxClock, device: device) }
        #expect(try DocumentRound.nextStamp(after: Stamp.maxClock - 1, device: device).clock == Stamp.maxClock)
    }

    @Test func headsAndBlobsRoundTrip() throws {
        var rng = TestRandom(seed: 1)
        let head = sampleHead(&rng)
        #expect(try Head.decode(head.encode()) == head)
        let bytes = try sampleBlob(&rng)
        let snap = try PageBlob.decode(bytes)
        #expect(try PageBlob.encode(state: snap.state, canvas: snap.canvas, elements: snap.elements) == bytes, "the blob is not canonical")
        #expect(try PageBlob.decodeState(PageBlob.encodeState(snap.state)) == snap.state)
    }

    @Test func mutatedHeadsAndBlobsAreRefusedOrReadWithoutHarm() throws {
        var rng = TestRandom(seed: 2)
        let head = sampleHead(&rng).encode()
        let blob = try sampleBlob(&rng)
        for original in [head, blob] {
            for _ in 0..<1500 {
                var b = original
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: b[Int.random(in: 0..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                case 1: b.removeLast(Int.random(in: 1...b.count, using: &rng))
                default: b.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...b.count, using: &rng))
                }
                _ = try? Head.decode(b)
                _ = try? PageBlob.decode(b)
                _ = try? PageBlob.decodeState(b)
            }
        }
    }

    /// Replies that made FoundationXML crash the whole process (a processing instruction, a
    /// notation, an unparsed entity) and other markup a listing never needs are refused before
    /// the parser sees them; an ordinary reply (with a declaration, a BOM, a comment) still reads.
    @Test func aListingWithMarkupItNeverNeedsIsRefusedBeforeTheParser() {
        let body = """
            <D:multistatus xmlns:D="DAV:"><D:response><D:href>/notes/heads/a</D:href><D:propstat><D:prop>\
            <D:getetag>"1"</D:getetag><D:getcontentlength>3</D:getcontentlength></D:prop></D:propstat></D:response></D:multistatus>
            """
        let good = ["<?xml version=\"1.0\" encoding=\"utf-8\"?>\n" + body, body, "<?xml version='1.0'?>" + body,
                    "\u{FEFF}<?xml version=\"1.0\" encoding=\"UTF-8\"?>" + body, "<!-- from the server -->" + body]
        for g in good { #expect(MultistatusParser.parse(Data(g.utf8))?.map(\.name) == ["a"], "\(g.prefix(60))") }
        let hostile = [
            "<?xml version=\"1.0\"?><?a?>" + body,
            "<?a?>" + body,
            body.replacingOccurrences(of: "<D:response>", with: "<?php echo 1 ?><D:response>"),
            "<!DOCTYPE m [<!NOTATION n SYSTEM \"x\">]>" + body,
            "<!DOCTYPE m [<!ENTITY e SYSTEM \"x\" NDATA n>]>" + body,
            "<!DOCTYPE m [<!ENTITY e \"e\">]>" + body,
            body.replacingOccurrences(of: "heads/a", with: "<![CDATA[heads/a]]>"),
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>" + body,
            "<?xml version=\"1.0\" encoding=\"UTF-16\"?>" + body,
            "<!-- never closed " + body,
        ]
        for h in hostile { #expect(MultistatusParser.parse(Data(h.utf8)) == nil, "\(h.prefix(70))") }
        var utf16 = Data([0xFF, 0xFE])
        utf16.append(body.data(using: .utf16LittleEndian)!)
        #expect(MultistatusParser.parse(utf16) == nil)
    }

    @Test func namesFromServersNeverBecomePaths() {
        let d = UUID(), v = UUID()
        #expect(Head.parseFileName(Head.fileName(document: d, device: v))! == (d, v))
        for bad in ["../\(d.uuidString).\(v.uuidString).head", "\(d.uuidString).\(v.uuidString).head/", "\(d.uuidString)/\(v.uuidString).head",
                    "\(d.uuidString).\(v.uuidString).heads", "x\(d.uuidString).\(v.uuidString).head", ".head", ""] {
            #expect(Head.parseFileName(bad) == nil, "\(bad)")
        }
        #expect(BlobName(hex: String(repeating: "a", count: 64)) != nil)
        for bad in [String(repeating: "A", count: 64), String(repeating: "a", count: 63), String(repeating: "g", count: 64), "../" + String(repeating: "a", count: 61)] {
            #expect(BlobName(hex: bad) == nil)
        }
        for bad in ["..", ".", ".hidden", "a/../b", "a//b", "/abs", "a b", "a%2Fb", String(repeating: "x", count: 129)] {
            #expect(!RemotePath.isSafe(bad), "\(bad)")
        }
        #expect(RemotePath.isSafe("heads/" + Head.fileName(document: d, device: v)))
    }

    @Test func aMultistatusIsReadToNamesAndHostileOnesAreDropped() throws {
        let xml = """
        <?xml version="1.0" encoding="utf-8"?>
        <D:multistatus xmlns:D="DAV:">
        <D:response><D:href>/notes/heads/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype></D:prop></D:propstat></D:response>
        <D:response><D:href>/notes/heads/A.head</D:href><D:propstat><D:prop><D:getetag>W/"5-abc"</D:getetag><D:getcontentlength>5</D:getcontentlength></D:prop></D:propstat></D:response>
        <D:response><D:href>http://127.0.0.1:1/notes/heads/B%2Ehead</D:href><D:propstat><D:prop><D:getetag>"6-def"</D:getetag></D:prop></D:propstat></D:response>
        <D:response><D:href>/notes/heads/..%2F..%2Fetc</D:href></D:response>
        </D:multistatus>
        """
        let entries = try #require(MultistatusParser.parse(Data(xml.utf8)))
        #expect(entries.map(\.name) == ["heads", "A.head", "B.head", "../../etc"])
        #expect(entries[0].isFolder && !entries[1].isFolder)
        #expect(RemotePath.normalizedETag(entries[1].etag) == "\"5-abc\"")
        #expect(entries[1].size == 5)
        #expect(entries.filter { RemotePath.isSafeName($0.name) }.map(\.name) == ["heads", "A.head", "B.head"])
        #expect(MultistatusParser.parse(Data("<html>nope</html>".utf8)) == nil)
    }

    @Test func credentialsComeFromTheEnvironmentOrANetrcNeverTheURL() throws {
        let netrc = "machine other.example login a password b\nmachine dav.example.org\n  login alice\n  password s3cret\ndefault login d password e\n"
        #expect(SyncConfiguration.netrc(netrc, host: "dav.example.org") == WebDAVCredentials(user: "alice", password: "s3cret"))
        #expect(SyncConfiguration.netrc(netrc, host: "unknown") == WebDAVCredentials(user: "d", password: "e"))
        #expect(throws: SyncError.self) { try SyncConfiguration(remote: "https://u:p@dav.example.org/notes/").makeRemote(environment: [:]) }
        #expect(throws: SyncError.self) { try SyncConfiguration(remote: "ftp://dav.example.org/").makeRemote(environment: [:]) }
        // Credentials over plain http only to the loopback address.
        #expect {
            try SyncConfiguration(remote: "http://dav.example.org/").makeRemote(environment: ["LNOTE_REMOTE_USER": "u", "LNOTE_REMOTE_PASSWORD": "p"])
        } throws: { e in
            if case .remote = e as? SyncError { return true }
            return false
        }
        _ = try SyncConfiguration(remote: "http://127.0.0.1:8080/notes/").makeRemote(environment: ["LNOTE_REMOTE_USER": "u", "LNOTE_REMOTE_PASSWORD": "p"])
    }
}
