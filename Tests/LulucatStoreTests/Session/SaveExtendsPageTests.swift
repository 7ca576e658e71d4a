// A save of a page whose changes only appended elements extends its file instead of coding it
// again (SnapshotEngine, PageFile.encode(_:codec:appendingTo:)): the file on disk is, after every
// save, byte for byte the page coded whole, whatever changes came between.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct SaveExtendsPageTests {
    /// Random edits of every kind between saves (appends most often, so many saves extend the
    /// file, and deletes, replacements, transforms, moves and resizes that make the next save code
    /// the page whole), on a page read back from disk part of the way: the page file is always
    /// exactly the page coded whole, and a reopened session reads back what was saved.
    ///
    /// The journal engine compacts every 3 frames here (its compaction extends the snapshot when
    /// the frames since it only appended), and `compact()` runs now and then: its snapshot is
    /// always the page it holds coded whole, and snapshot and journal replay to the page.
    @Test(arguments: [(EngineKind.snapshot, SampleCodecID.compact), (.snapshot, .fixed16), (.journal, .compact), (.journal, .fixed16)])
    func everySaveWritesThePageCodedWhole(engine: EngineKind, codec: SampleCodecID) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Extends", engine: engine, codec: codec)
        let options = SessionOptions(autosaveDelay: nil, thumbnails: nil, journal: JournalOptions(compactAfterFrames: 3))
        var session = try await library.open(package.id, options: options)
        let page = await session.pageIDs()[0]
        try await session.append((0..<12).map { Element.stroke(SampleContent.stroke(seed: UInt32(1000 + $0), samples: 5 + $0 % 9, channels: $0 % 4 == 0)) }, to: page)
        try await session.save()
        var seed: UInt32 = 2000
        var state: UInt64 = 0x5EED_0000 + UInt64(codec.rawValue)
        func roll(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        for step in 0..<60 {
            for _ in 0..<(1 + roll(3)) {
                let ids = try await session.content(of: page).elements.map(\.id)
                seed += 1
                switch roll(10) {
                case 0 where !ids.isEmpty: try await session.delete([ids[roll(ids.count)]], from: page)
                case 1 where !ids.isEmpty:
                    try await session.erase(stroke: ids[roll(ids.count)], keeping: [0..<1], on: page)
                case 2 where !ids.isEmpty:
                    try await session.transform([ids[roll(ids.count)]], by: .translation(dx: 3, dy: -2), on: page)
                case 3 where ids.count > 1: try await session.move([ids[roll(ids.count)]], to: .back, on: page)
                case 4: try await session.resizeCanvas(of: page, to: QuantizedSize(width: Int32(6000 + step), height: 7000))
                case 5 where engine == .journal: try await session.compact()
                default:
                    try await session.append(SampleContent.stroke(seed: seed, samples: 1 + roll(40), channels: roll(3) == 0), to: page)
                }
            }
            try await session.save()
            let content = try await session.content(of: page)
            let onDisk = try Array(Data(contentsOf: URL(fileURLWithPath: package.pagePath(page))))
            if engine == .snapshot {
                #expect(onDisk == (try PageFile.encode(content, codec: codec)), "step \(step)")
            } else {
                #expect(onDisk == (try PageFile.encode(try PageFile.decode(onDisk), codec: codec)), "step \(step)")
                #expect(try JournalReplay.read(package, page: page, fileSystem: PosixFileSystem()).content == content, "step \(step)")
            }
            if step % 20 == 19 {
                // Read back from disk: the next saves extend the file as read.
                try await session.close()
                session = try await library.open(package.id, options: options)
                #expect(try await session.content(of: page) == content)
            }
        }
        try await session.close()
    }

    /// An append repeating an id the page has is refused, also once the session keeps the page's
    /// ids (after a first append), and after deletes and replacements changed them.
    @Test func anAppendRepeatingAnIDIsRefused() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Ids")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        let a = SampleContent.stroke(seed: 1), b = SampleContent.stroke(seed: 2), c = SampleContent.stroke(seed: 3)
        try await session.append(a, to: page)
        await #expect(throws: StoreError.self) { try await session.append(a, to: page) }
        try await session.append(b, to: page)
        try await session.delete([a.id], from: page)
        try await session.append(a, to: page)  // gone, so new again
        let pieces = try await session.erase(stroke: b.id, keeping: [0..<2], on: page)
        await #expect(throws: StoreError.self) { try await session.append([.stroke(c), .stroke(c)], to: page) }
        try await session.append(b, to: page)  // replaced by its pieces, so new again
        var piece = c
        piece.id = pieces[0]
        await #expect(throws: StoreError.self) { try await session.append(piece, to: page) }
        #expect(try await session.content(of: page).elements.map(\.id) == [pieces[0], a.id, b.id])
        try await session.close()
    }

    /// A save that fails after the page's file was extended in memory (the write refused) leaves
    /// the page dirty, and the next save, with more strokes appended since, writes exactly the page.
    @Test func aFailedSaveThenASaveWritesThePage() async throws {
        let tmp = TemporaryFolder()
        let fs = InstrumentedFileSystem()
        let library = Library(root: tmp.path, fileSystem: fs)
        let package = try await library.createDocument(title: "Fails")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        try await session.append((0..<5).map { Element.stroke(SampleContent.stroke(seed: UInt32(10 + $0))) }, to: page)
        try await session.save()
        try await session.append(SampleContent.stroke(seed: 20), to: page)
        fs.failPathContaining = ".content"
        await #expect(throws: StoreError.self) { try await session.save() }
        await #expect(throws: StoreError.self) { try await session.save() }
        try await session.append(SampleContent.stroke(seed: 21), to: page)
        await #expect(throws: StoreError.self) { try await session.save() }
        fs.failPathContaining = nil
        try await session.append(SampleContent.stroke(seed: 22), to: page)
        try await session.save()
        let content = try await session.content(of: page)
        #expect(content.elements.count == 8)
        let onDisk = try Array(Data(contentsOf: URL(fileURLWithPath: package.pagePath(page))))
        #expect(onDisk == (try PageFile.encode(content, codec: .compact)))
        try await session.close()
        #expect(try StoredPage.read(package, page: page) == content)
    }
}
