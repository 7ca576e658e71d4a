// The journal fuzz check, shared by `fuzz/run.sh journal` and the bounded test in swift test:
// untrusted bytes as a page's journal, replayed on a fixed snapshot and then written after.

import Foundation
import LulucatStore
import LulucatInk

/// Feeds bytes to journal replay as `pages/<id>.journal` and checks what comes out.
///
/// Expected for any bytes: no crash and no allocation from an unchecked length; a bad header,
/// a stale base, a torn tail or damage are reported, never fatal. Checked: the replayed page
/// encodes and decodes (PageFile) to itself, also when the snapshot's coded strokes are reused
/// (what compaction does); the engine loads for editing the page replay gave, and a save after
/// it (which keeps a damaged journal aside, clears a torn tail or starts a new generation) gives
/// a journal that replays to exactly the page saved.
public enum JournalFuzz {
    /// The page every fuzzed journal applies on top of: strokes with and without angle channels,
    /// an image and an element of a kind from a newer version.
    public static let basePage: PageContent = {
        var page = SampleContent.page(seed: 11, strokes: 5, images: [SampleContent.uuid(7, 7)])
        var unknown = withUnsafeBytes(of: SampleContent.uuid(0xC0, 1).uuid) { Data($0) }
        unknown.append(contentsOf: [1, 2, 3, 4, 5, 6, 7, 8])
        page.elements.append(.unknown(try! UnknownElement(kind: 9, payload: unknown)))
        return page
    }()

    public static let pageID = SampleContent.uuid(0x10_4E4A, 1)

    /// The snapshot files a journal may name as its base: the base page in each codec. A journal
    /// whose header names neither is replayed on the first (and found stale).
    public static let snapshots: [[UInt8]] = [SampleCodecID.compact, .fixed16].map { try! PageFile.encode(basePage, codec: $0) }

    /// The snapshot a journal's header names, or the first one.
    public static func snapshot(for journal: [UInt8]) -> [UInt8] {
        guard let header = try? journal.withUnsafeBytes({ try JournalFormat.decodeHeader($0) }) else { return snapshots[0] }
        return snapshots.first { SnapshotIdentity(snapshot: $0) == header.base } ?? snapshots[0]
    }

    // MARK: The check

    /// Runs `bytes` as they are and with their checksums recomputed (most mutations break a CRC,
    /// and the fixed copy is how change decoding and application get reached). Returns what went
    /// wrong, or nil.
    public static func problem(_ bytes: [UInt8]) -> String? {
        if let p = problemOnce(bytes) { return "as given: \(p)" }
        let fixed = withChecksumsFixed(bytes)
        if fixed != bytes, let p = problemOnce(fixed) { return "with checksums fixed: \(p)" }
        return nil
    }

    public static func problemOnce(_ bytes: [UInt8]) -> String? {
        let snapshotBytes = snapshot(for: bytes)
        let (base, encoded) = try! PageFile.decodeKeepingStrokes(snapshotBytes)
        let identity = SnapshotIdentity(snapshot: snapshotBytes)
        let replay = JournalReplay.replaying(bytes, path: "fuzz.journal", on: base, encoded: encoded, snapshot: identity)

        // What replay says about the file must describe the file.
        switch replay.journal {
        case .missing:
            return "a journal that exists replayed as missing"
        case .stale:
            guard replay.content == base, replay.frameCount == 0 else { return "a stale journal changed the page" }
        case .damaged, .current:
            if replay.header == nil, replay.content != base || replay.frameCount != 0 {
                return "a journal without a valid header changed the page"
            }
        }
        if replay.header != nil {
            guard replay.validEnd >= JournalFormat.headerSize, replay.validEnd <= bytes.count else {
                return "valid end \(replay.validEnd) outside the \(bytes.count)-byte file"
            }
        }
        if let tail = replay.tailToClear {
            guard tail.lowerBound == replay.validEnd, tail.upperBound <= bytes.count, !tail.isEmpty else {
                return "tail to clear \(tail) does not follow the valid frames (end \(replay.validEnd), file \(bytes.count))"
            }
        }

        // The page replay gives must survive the page format, in both codecs.
        for codec in SampleCodecID.allCases {
            let again: [UInt8]
            do { again = try PageFile.encode(replay.content, codec: codec) } catch {
                return "the replayed page does not encode (\(codec)): \(error)"
            }
            guard let back = try? PageFile.decode(again), back == replay.content else {
                return "the replayed page does not survive encode and decode (\(codec))"
            }
        }
        // Compaction reuses the snapshot's coded strokes that replay did not forget: a stale
        // entry would write old samples under a changed stroke.
        let snapshotCodec = snapshotBytes.withUnsafeBytes { try! PageFile.readHeader($0) }.codec
        guard let reused = try? PageFile.encode(replay.content, codec: snapshotCodec, reusing: replay.encoded).bytes,
              (try? PageFile.decode(reused)) == replay.content else {
            return "the replayed page encoded reusing the snapshot's strokes is not the page"
        }
        return engineProblem(bytes, snapshot: snapshotBytes, expected: replay.content)
    }

    /// The engine on an in-memory file system: loading for editing gives the replayed page, and
    /// one more save (after whatever repair the journal needs) replays to exactly the saved page.
    public static func engineProblem(_ journal: [UInt8], snapshot: [UInt8], expected: PageContent) -> String? {
        let fs = SimulatedFileSystem()
        let package = DocumentPackage(id: SampleContent.uuid(0xD0C), libraryRoot: "/lib")
        let codec = snapshot.withUnsafeBytes { try! PageFile.readHeader($0) }.codec
        do {
            for dir in ["/lib", package.path, package.pagesPath] { try fs.makeDirectory(dir) }
            try fs.put(package.pagePath(pageID), snapshot)
            try fs.put(package.journalPath(pageID), journal)
        } catch {
            return "the simulated file system refused the files: \(error)"
        }
        let engine = JournalEngine(package: package, fileSystem: fs, codec: codec,
                                   options: JournalOptions(preallocationChunk: 512, compactOnClose: false))
        let loaded: PageContent
        let encoded: EncodedStrokes?
        do { (loaded, encoded) = try engine.loadPageForEditing(pageID) } catch {
            return "the engine does not load the page replay gave: \(error)"
        }
        guard loaded == expected else { return "the engine loads another page than replay gave" }

        let probe = Stroke(id: SampleContent.uuid(0xF022, 0xF022),
                           samples: [Sample(x: 10, y: 20, radius: 5, pressure: 500, time: 0),
                                     Sample(x: 30, y: 40, radius: 6, pressure: 600, time: 8)])
        guard loaded.index(of: probe.id) == nil else { return nil }
        var next = loaded
        let change = PageChange.append([.stroke(probe)])
        try! next.apply(change)
        do { _ = try engine.savePage(pageID, content: next, changes: [change], reusing: encoded) } catch {
            return "a save after loading the page failed: \(error)"
        }
        let after: JournalReplay
        do { after = try JournalReplay.read(package, page: pageID, fileSystem: fs) } catch {
            return "the page does not replay after the save: \(error)"
        }
        guard after.journal == .current, after.tailToClear == nil else {
            return "after the save the journal is \(after.journal), tail \(String(describing: after.tailToClear))"
        }
        guard after.content == next else { return "after the save the journal replays to another page than was saved" }
        return nil
    }

    // MARK: Checksums

    /// `bytes` with the header's CRC recomputed (and its base set to a snapshot the fuzz target
    /// knows, when it names none) and every frame's CRC recomputed along the chain of lengths,
    /// so that mutated payloads reach the change decoders.
    public static func withChecksumsFixed(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count >= JournalFormat.headerSize else { return bytes }
        var out = bytes
        func putUInt32(_ v: UInt32, at offset: Int) {
            for i in 0..<4 { out[offset + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt32(i))) }
        }
        func putUInt64(_ v: UInt64, at offset: Int) {
            for i in 0..<8 { out[offset + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt64(i))) }
        }
        let length = out[16..<24].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        let crc = out[24..<28].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
        let named = SnapshotIdentity(length: length, crc: crc)
        if !snapshots.contains(where: { SnapshotIdentity(snapshot: $0) == named }) {
            let base = SnapshotIdentity(snapshot: snapshots[0])
            putUInt64(base.length, at: 16)
            putUInt32(base.crc, at: 24)
        }
        putUInt32(CRC32C.checksum(Array(out[0..<28])), at: 28)
        let generation = out[8..<16].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }

        var offset = JournalFormat.headerSize
        var sequence: UInt64 = 0
        while out.count - offset >= JournalFormat.frameHeaderSize {
            let payloadLength = Int(out[offset..<offset + 4].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) })
            let start = offset + JournalFormat.frameHeaderSize
            guard payloadLength > 0, payloadLength <= out.count - start else { break }
            let type = out[offset + 8]
            let sum = out.withUnsafeBytes { raw in
                JournalFormat.frameChecksum(generation: generation, sequence: sequence,
                                            lengthAndType: (UInt32(payloadLength), type),
                                            payload: UnsafeRawBufferPointer(rebasing: raw[start..<start + payloadLength]))
            }
            putUInt32(sum, at: offset + 4)
            offset = start + payloadLength
            sequence += 1
        }
        return out
    }

    // MARK: Seeds

    /// Journals the engine wrote for the base page: appends, deletes, moves, a replace, an
    /// update, a resize and a group save, with fixed16 and compact frames, with preallocated
    /// zeros, a torn last frame, a stale journal and a header-only one.
    public static func seeds() -> [(String, [UInt8])] {
        var out: [(String, [UInt8])] = []
        for snapshot in snapshots {
            let codec = snapshot.withUnsafeBytes { try! PageFile.readHeader($0) }.codec
            for frameCodec in SampleCodecID.allCases {
                let journal = writtenJournal(snapshot: snapshot, codec: codec, frameCodec: frameCodec, chunk: 0)
                out.append(("\(codec)-snapshot-\(frameCodec)-frames", journal))
            }
        }
        let full = writtenJournal(snapshot: snapshots[0], codec: .compact, frameCodec: .fixed16, chunk: 0)
        out.append(("preallocated", writtenJournal(snapshot: snapshots[0], codec: .compact, frameCodec: .compact, chunk: 4096)))
        // Cut inside the last frame (past its end mark, which format 2 writes after every frame).
        out.append(("torn-tail", Array(full.dropLast(JournalFormat.frameHeaderSize + 7))))
        out.append(("header-only", Array(full.prefix(JournalFormat.headerSize))))
        var stale = JournalFormat.encodeHeader(JournalFormat.Header(codec: .fixed16, generation: 3,
                                                                     base: SnapshotIdentity(length: 123, crc: 0xABCD)))
        stale.append(contentsOf: full.dropFirst(JournalFormat.headerSize))
        out.append(("stale", stale))
        return out
    }

    /// The journal file the engine leaves after a session of edits on `snapshot`.
    public static func writtenJournal(snapshot: [UInt8], codec: SampleCodecID, frameCodec: SampleCodecID, chunk: Int) -> [UInt8] {
        let fs = SimulatedFileSystem()
        let package = DocumentPackage(id: SampleContent.uuid(0xD0C), libraryRoot: "/lib")
        for dir in ["/lib", package.path, package.pagesPath] { try! fs.makeDirectory(dir) }
        try! fs.put(package.pagePath(pageID), snapshot)
        let engine = JournalEngine(package: package, fileSystem: fs, codec: codec,
                                   options: JournalOptions(preallocationChunk: chunk, compactOnClose: false,
                                                           frameCodec: frameCodec))
        var (page, encoded) = try! engine.loadPageForEditing(pageID)
        let strokes = page.strokes
        let image = page.elements.first { if case .image = $0 { return true } else { return false } }!
        var moved = strokes[1]
        for i in moved.samples.indices { moved.samples[i].x += 40 }
        let pieces = [SampleContent.stroke(seed: 901, samples: 6), SampleContent.stroke(seed: 902, samples: 3)]
        let saves: [[PageChange]] = [
            [.append([.stroke(SampleContent.stroke(seed: 900, samples: 30, channels: true))])],
            [.move([image.id], to: .back)],
            [.delete([strokes[0].id])],
            [.replace(strokes[2].id, with: pieces.map { .stroke($0) })],
            [.update([.stroke(moved)])],
            [.resize(QuantizedSize(width: 6120, height: 7920))],
            [.append([.stroke(SampleContent.stroke(seed: 903, samples: 12))]), .move([pieces[0].id], to: .index(2)),
             .delete([image.id]), .move([strokes[3].id], to: .front)],
        ]
        for changes in saves {
            for change in changes { try! page.apply(change) }
            encoded = try! engine.savePage(pageID, content: page, changes: changes, reusing: encoded)
        }
        return try! fs.readFile(package.journalPath(pageID))
    }
}
