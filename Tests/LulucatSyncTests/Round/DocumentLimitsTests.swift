// A synced document obeys the limits of an imported one (docs/sync.md §4.1): a forged head that
// names too many pages is refused before any blob is fetched, one whose pages would take more than
// a document may is refused before anything is written; the rest of the library syncs.

import Foundation
import LulucatInk
import LulucatStore
import LulucatSyncTesting
import Testing
@testable import LulucatSync

@Suite(.serialized) struct DocumentLimitsTests {
    /// A head of `doc` from a device nobody knows, naming `pages` pages that all show `blob`.
    static func forgedHead(_ doc: UUID, pages: Int, blob: BlobName, codec: String) -> Head {
        let other = UUID()
        let stamp = Stamp(clock: 50, device: other)
        var head = Head(document: doc, device: other, clock: 50, title: Register("Forged", stamp: stamp),
                        origin: DocumentOrigin(created: 0, engine: "snapshot", codec: codec), deleted: nil)
        for i in 0..<pages {
            head.pages[UUID()] = HeadPage(fields: Register(PageFields(key: PositionKey([UInt32(i + 10)]), width: 1000, height: 1000), stamp: stamp),
                                          removed: nil, blob: blob)
        }
        return head
    }

    /// Two libraries synced through a memory remote: `a` holds "Kept", `b` makes "Other" after.
    static func twoLibraries() async throws -> (a: Library, b: Library, remote: MemoryRemote, kept: UUID, other: UUID, drawn: [UUID]) {
        let remote = MemoryRemote()
        let a = Library(root: temporaryFolder("limits-a")), b = Library(root: temporaryFolder("limits-b"))
        let kept = try await a.createDocument(title: "Kept").id
        let drawn = try await drawStrokes(a, kept, 3, seed: 5)
        _ = try await a.sync(with: remote, options: testSyncOptions)
        _ = try await b.sync(with: remote, options: testSyncOptions)
        let other = try await b.createDocument(title: "Other").id
        _ = try await b.sync(with: remote, options: testSyncOptions)
        return (a, b, remote, kept, other, drawn)
    }

    @Test func aHeadNamingMorePagesThanADocumentMayHoldIsRefusedBeforeAnyBlobIsFetched() async throws {
        let (a, b, remote, kept, other, drawn) = try await Self.twoLibraries()
        defer { for l in [a, b] { try? FileManager.default.removeItem(atPath: l.root) } }
        // 60,001 pages naming one blob (1 MiB, not even a page blob): counting them is enough.
        let junk = [UInt8](repeating: 7, count: 1 << 20)
        try await remote.put("blobs/" + BlobName(of: junk).hex, junk)
        let head = Self.forgedHead(kept, pages: ImportLimits.maxFiles + 1, blob: BlobName(of: junk), codec: "compact")
        try await remote.put("heads/" + Head.fileName(document: kept, device: head.device), head.encode())
        let before = remote.statistics.bytesReceived
        let r = try await a.sync(with: remote, options: testSyncOptions)
        #expect(r.problems.count == 1, "\(r.problems)")
        #expect(r.problems.first?.contains("over the limits of a document") == true, "\(r.problems)")
        #expect(r.problems.first?.contains("\(ImportLimits.maxFiles + 1) pages and assets") == true, "\(r.problems)")
        #expect(r.skipped.isEmpty)
        // At most the heads' bytes: the blob was not asked for.
        let headBytes = remote.storedFiles.filter { $0.key.hasPrefix("heads/") }.values.reduce(0) { $0 + $1.count }
        #expect(remote.statistics.bytesReceived - before <= headBytes)
        // The rest synced, nothing here changed.
        let c = try await contents(of: a)
        #expect(c.documents[other] != nil)
        #expect(c.documents[kept]?.title == "Kept")
        #expect(c.documents[kept]?.pages.count == 1)
        #expect(c.documents[kept]?.allElements == Set(drawn))
        // Refused again next round (not recorded as read), still nothing lost.
        let again = try await a.sync(with: remote, options: testSyncOptions)
        #expect(again.problems.count == 1)
    }

    @Test func aHeadWhosePagesWouldTakeMoreThanADocumentMayIsRefusedBeforeAnythingIsWritten() async throws {
        let (a, b, remote, kept, other, drawn) = try await Self.twoLibraries()
        defer { for l in [a, b] { try? FileManager.default.removeItem(atPath: l.root) } }
        // One blob of one still stroke of 2^20 samples: a few hundred KB on the server, 16 MB a
        // page here in fixed16. Named by 300 pages, 5 GB: over the 4 GiB of an imported document.
        let samples = [Sample](repeating: Sample(x: 500, y: 500, radius: 10, pressure: 500, time: 0), count: PageFile.maxSamplesPerStroke)
        let stroke = Stroke(samples: samples)
        let stamp = Stamp(clock: 50, device: UUID())
        let state = PageState(elements: [stroke.id: ElementEntry(stamp: stamp, key: PositionKey([1]), fingerprint: PageBlob.fingerprint(.stroke(stroke)))],
                              tombstones: [])
        let blob = try PageBlob.encode(state: state, canvas: QuantizedSize(width: 1000, height: 1000), elements: [stroke.id: .stroke(stroke)])
        #expect(blob.count < 1 << 20, "\(blob.count) bytes")
        let name = BlobName(of: blob)
        try await remote.put("blobs/" + name.hex, blob)
        let head = Self.forgedHead(kept, pages: 300, blob: name, codec: "fixed16")
        try await remote.put("heads/" + Head.fileName(document: kept, device: head.device), head.encode())
        let r = try await a.sync(with: remote, options: testSyncOptions)
        #expect(r.problems.count == 1, "\(r.problems)")
        #expect(r.problems.first?.contains("over the limits of a document") == true, "\(r.problems)")
        #expect(r.problems.first?.contains("more than the \(ImportLimits.maxDocumentBytes)") == true, "\(r.problems)")
        // The blob fetched once; nothing of the forged pages written here.
        let c = try await contents(of: a)
        #expect(c.documents[other] != nil)
        #expect(c.documents[kept]?.pages.count == 1)
        #expect(c.documents[kept]?.allElements == Set(drawn))
        let pkg = a.package(kept).path + "/pages"
        let written = try FileManager.default.contentsOfDirectory(atPath: pkg).reduce(0) { total, f in
            total + ((try? FileManager.default.attributesOfItem(atPath: pkg + "/" + f)[.size] as? Int) ?? 0)
        }
        #expect(written < 1 << 20, "\(written) bytes of pages")
    }

    @Test func aPageOverThePageLimitHereIsRefusedBeforeItIsDecoded() {
        let summary = PageSummary(canvasSize: QuantizedSize(width: 1, height: 1), elementCount: 40, sampleCount: 40 << 20, assetIDs: [])
        let bytes = DocumentLimits.pageBytes(summary, fileBytes: 1 << 20, codec: .fixed16)
        #expect(bytes == 40 * 40 + (40 << 20) * 16)
        #expect(DocumentLimits.pageOverLimit(bytes, samples: summary.sampleCount) != nil)
        // In compact, what it takes here is its file: within the limit.
        #expect(DocumentLimits.pageBytes(summary, fileBytes: 1 << 20, codec: .compact) == 1 << 20)
        #expect(DocumentLimits.pageOverLimit(1 << 20, samples: summary.sampleCount) == nil)
    }
}
