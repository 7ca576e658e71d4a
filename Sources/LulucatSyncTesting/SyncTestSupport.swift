// Helpers for the sync tests and `lnote-dev crashcheck`'s sync flows (a target no product vends):
// a seeded generator, strokes, temporary libraries, and what a library holds, read back through the store.

import Foundation
import LulucatHandwriting
import LulucatInk
import LulucatStore
import LulucatSync

/// The tests' seeded generator: the handwriting generator's SplitMix64 (bounded, repeatable runs).
public typealias TestRandom = SeededRandom

extension SeededRandom {
    /// A UUID from two draws (repeatable, unlike `UUID()`).
    public mutating func uuid() -> UUID {
        let a = next(), b = next()
        var u = UUID().uuid
        withUnsafeMutableBytes(of: &u) { p in
            p.storeBytes(of: a, toByteOffset: 0, as: UInt64.self)
            p.storeBytes(of: b, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: u)
    }
}

public func makeStroke(_ rng: inout TestRandom, samples n: Int = 20) -> Stroke {
    var x = Int32.random(in: 100...5000, using: &rng), y = Int32.random(in: 100...7000, using: &rng)
    var s: [Sample] = []
    for i in 0..<n {
        x += Int32.random(in: -20...20, using: &rng)
        y += Int32.random(in: -20...20, using: &rng)
        s.append(Sample(x: x, y: y, radius: 12, pressure: UInt16.random(in: 200...800, using: &rng), time: UInt32(i * 4)))
    }
    return Stroke(samples: s)
}

/// Draws `n` strokes (`makeStroke`, seeded) on the document's first page; returns their ids.
public func drawStrokes(_ lib: Library, _ doc: UUID, _ n: Int, seed: UInt64, samples: Int = 20) async throws -> [UUID] {
    var rng = TestRandom(seed: seed)
    return try await edit(lib, doc) { s in
        let p = await s.pageIDs()[0]
        var ids: [UUID] = []
        for _ in 0..<n { let st = makeStroke(&rng, samples: samples); try await s.append(st, to: p); ids.append(st.id) }
        return ids
    }
}

public func temporaryFolder(_ label: String) -> String {
    let p = NSTemporaryDirectory() + "lulucat-sync-\(label)-\(UUID().uuidString.prefix(8))"
    try! FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
    return p
}

/// What a library holds, compared across devices: per document its title and its pages in
/// order, each as its elements' ids in z-order.
public struct LibraryContents: Equatable, CustomStringConvertible {
    public var documents: [UUID: DocumentContents]
    public var description: String {
        documents.sorted { $0.key.uuidString < $1.key.uuidString }.map { "\($0.key.uuidString.prefix(8)) \($0.value)" }.joined(separator: "\n")
    }
}

public struct DocumentContents: Equatable, CustomStringConvertible {
    public var title: String
    public var pages: [UUID]
    public var elements: [[UUID]]
    public var description: String { "'\(title)' pages \(pages.map { String($0.uuidString.prefix(4)) }) elements \(elements.map(\.count))" }
    public var allElements: Set<UUID> { Set(elements.joined()) }
}

public func contents(of library: Library) async throws -> LibraryContents {
    var docs: [UUID: DocumentContents] = [:]
    for e in try await library.documents() {
        let s = try await library.open(e.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        var elements: [[UUID]] = []
        for p in await s.pageIDs() { elements.append(try await s.content(of: p).elements.map(\.id)) }
        docs[e.id] = DocumentContents(title: await s.title, pages: await s.pageIDs(), elements: elements)
        try await s.close()
    }
    return LibraryContents(documents: docs)
}

public let quietSession = SessionOptions(autosaveDelay: nil, thumbnails: nil)
/// The options of the tests' rounds: the defaults, except that no test round is ended by a
/// clock. On a loaded 2-core machine running the whole suite in parallel, a round's task can
/// wait minutes for a thread, and a deadline meant for a device's link would fail it; the tests
/// of the limits and the deadline set their own.
public let testSyncOptions: SyncOptions = {
    var o = SyncOptions(trashLimit: 5, session: quietSession)
    o.roundDeadline = nil
    o.transfer = TransferLimits(silence: .seconds(120), minimumRate: 1, rateWindow: .seconds(120), requestDeadline: .seconds(600))
    return o
}()

/// Runs `body` on an open session of the document and closes it.
public func edit<T>(_ library: Library, _ id: UUID, _ body: (DocumentSession) async throws -> T) async throws -> T {
    let s = try await library.open(id, options: quietSession)
    do {
        let r = try await body(s)
        try await s.close()
        return r
    } catch {
        await s.abandon()
        throw error
    }
}
