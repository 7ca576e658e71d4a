// lnote-dev bench journal: one durable stroke at a time on a page grown to 2,000 strokes, in a
// snapshot document and a journal document side by side, against plain-file floors; replay.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreTesting
import LulucatHandwriting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum JournalBench {
    static func run(_ arguments: [String]) async throws {
        let args = try Arguments(arguments, valued: SaveScaling.Options.valued.union(["strokes", "window", "replay-frames", "runs", "dir", "chunk", "codec", "frame-codec", "large-save"]),
                                 flags: ["json", "journal-only", "scaling-only", "no-scaling"])
        if let n = try args.int("large-save", in: 1...1_000_000) { try await largeSave(strokes: n, dir: args.value("dir"), json: args.flag("json")); return }
        let scaling = try SaveScaling.Options(args)
        if args.flag("scaling-only") { return try await runScaling(args, scaling) }
        let strokeCount = try args.int("strokes") ?? 2000
        let window = try args.int("window") ?? 200
        let replayFrames = try args.int("replay-frames") ?? 1000
        let runs = try args.int("runs") ?? 15
        let chunk = try args.int("chunk") ?? JournalOptions().preallocationChunk
        // --codec fixed16: the seed's 16 bytes a sample, pages of 3-5 MB at 2,000 strokes.
        let codecName = args.value("codec") ?? "compact"
        guard let codec = SampleCodecID(name: codecName) else { throw UsageError("unknown codec '\(codecName)'") }
        guard strokeCount > 0, window > 0, window <= strokeCount, replayFrames > 0, runs > 0, chunk >= 0 else {
            throw UsageError("counts must be positive and --window at most --strokes")
        }
        let base = (args.value("dir") ?? NSTemporaryDirectory()) + "/lnote-bench-journal-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let json = args.flag("json")
        func say(_ s: String) { if !json { print(s) } }

        let generator = HandwritingGenerator(seed: 2026)
        let strokes = generator.page(strokes: max(strokeCount, replayFrames), canvas: .letter).strokes
        var frameCodec = JournalOptions().frameCodec
        if let name = args.value("frame-codec") {
            guard let c = SampleCodecID(name: name) else { throw UsageError("unknown codec '\(name)'") }
            frameCodec = c
        }
        let journalOptions = JournalOptions(preallocationChunk: chunk, frameCodec: frameCodec)
        let framesCodec = frameCodec ?? codec
        // No thumbnails: each save would render the page in the background, on the same cores.
        let options = SessionOptions(autosaveDelay: nil, thumbnails: nil, journal: journalOptions)

        let snapFS = CountingFileSystem(), journalFS = CountingFileSystem()
        let snapLibrary = Library(root: base + "/snapshot", fileSystem: snapFS)
        let journalLibrary = Library(root: base + "/journal", fileSystem: journalFS)
        let snapDoc = try await snapLibrary.createDocument(title: "Snapshot", engine: .snapshot, codec: codec)
        let journalDoc = try await journalLibrary.createDocument(title: "Journal", engine: .journal, codec: codec)
        let snap = try await snapLibrary.open(snapDoc.id, options: options)
        let journal = try await journalLibrary.open(journalDoc.id, options: options)
        let snapPage = await snap.pageIDs()[0], journalPage = await journal.pageIDs()[0]

        // The plain-file floors, in a folder of their own.
        let floorDir = base + "/floor"
        try FileManager.default.createDirectory(atPath: floorDir, withIntermediateDirectories: true)
        let appendFloor = try PlainAppend(path: floorDir + "/append.journal", preallocate: 0)
        let preallocFloor = try PlainAppend(path: floorDir + "/prealloc.journal", preallocate: 64 << 20)
        defer { appendFloor.finish(); preallocFloor.finish() }

        say("Growing a page to \(strokeCount) strokes, one durable stroke at a time, in both documents...")
        var tSnap: [Double] = [], tJournal: [Double] = []
        var bSnap: [Double] = [], bJournal: [Double] = []
        var tFloorRewrite: [Double] = [], tFloorAppend: [Double] = [], tFloorPrealloc: [Double] = []
        var frameSizes: [Double] = [], pageSizes: [Double] = []
        var page = PageContent(canvasSize: .letter)
        var pageCache: EncodedStrokes?
        var engineSaves: [Double] = []
        for i in 0..<strokeCount {
            let stroke = strokes[i]
            let inWindow = i >= strokeCount - window
            snapFS.reset(); journalFS.reset()
            // --journal-only: the journal and its floors without the snapshot engine's large writes
            // in between (to see what those cost the small writes measured after them).
            let ts = args.flag("journal-only") ? 0 : try await measureAsync {
                try await snap.append(stroke, to: snapPage)
                try await snap.save()
            }
            page.elements.append(.stroke(stroke))
            guard inWindow else {
                try await journal.append(stroke, to: journalPage)
                try await journal.save()
                continue
            }
            tSnap.append(ts)
            bSnap.append(Double(snapFS.bytesWritten))
            // The same bytes through plain system calls.
            let encoded = try PageFile.encode(page, codec: codec, reusing: pageCache)
            pageCache = encoded.strokes
            let frame = try JournalFile.frame(for: [.append([.stroke(stroke)])], codec: framesCodec, sequence: UInt64(i))
            tFloorRewrite.append(try measure { try SaveBench.floorWrite(encoded.bytes, dir: floorDir) })
            // The three small durable writes follow the large ones in turn, each first, second
            // and third equally often: on a shared disk what a sync waits for depends on what
            // came just before it.
            for k in 0..<3 {
                switch (i + k) % 3 {
                case 0:
                    tJournal.append(try await measureAsync {
                        try await journal.append(stroke, to: journalPage)
                        try await journal.save()
                    })
                    bJournal.append(Double(journalFS.bytesWritten))
                    if let last = await journal.saveDurations.last { engineSaves.append(last) }
                case 1: tFloorPrealloc.append(try measure { try preallocFloor.append(frame) })
                default: tFloorAppend.append(try measure { try appendFloor.append(frame) })
                }
            }
            frameSizes.append(Double(frame.count)); pageSizes.append(Double(encoded.bytes.count))
        }
        let summary = try JournalFile.summary(journalDoc, page: journalPage)
        try await snap.close()
        try await journal.close()

        say("Replaying a \(replayFrames)-frame journal...")
        let replayLibrary = Library(root: base + "/replay")
        let replayDoc = try await replayLibrary.createDocument(title: "Replay", engine: .journal, codec: codec)
        let noCompaction = SessionOptions(autosaveDelay: nil, thumbnails: nil, journal: JournalOptions(compactAfterBytes: Int.max / 2, compactAfterFrames: Int.max / 2, preallocationChunk: chunk, frameCodec: frameCodec))
        let replaySession = try await replayLibrary.open(replayDoc.id, options: noCompaction)
        let replayPage = await replaySession.pageIDs()[0]
        for stroke in strokes.prefix(replayFrames) {
            try await replaySession.append(stroke, to: replayPage)
            try await replaySession.save()
        }
        await replaySession.abandon()  // no close: the journal keeps its frames
        let replaySummary = try JournalFile.summary(replayDoc, page: replayPage)
        guard replaySummary.frames == replayFrames else { throw UsageError("the replay journal holds \(replaySummary.frames) frames, not \(replayFrames)") }
        var tReplay: [Double] = []
        for _ in 0..<runs {
            tReplay.append(try measure {
                let content = try StoredPage.read(replayDoc, page: replayPage)
                guard content.elements.count == replayFrames else { throw UsageError("replay gave \(content.elements.count) elements") }
            })
        }

        var scalingRows: (bySize: [SaveScaling.Row], byLength: [SaveScaling.Row])?
        if !args.flag("no-scaling") {
            say("One stroke then save(), journal engine, against the append floor:")
            scalingRows = try await SaveScaling.run(engine: .journal, floor: .append, options: scaling, base: base + "/scaling", say: say)
        }

        let perStrokeRatio = median(tSnap) / median(tJournal)
        let plainRatio = median(tFloorRewrite) / median(tFloorAppend)
        let plainPreallocRatio = median(tFloorRewrite) / median(tFloorPrealloc)
        let result: [String: Any] = [
            "strokes": strokeCount, "window": window, "preallocation_chunk": chunk, "codec": codec.description, "frame_codec": framesCodec.description,
            "page_bytes": Int(median(pageSizes)), "frame_bytes": Int(median(frameSizes)),
            "snapshot_durable_stroke_ms": r(median(tSnap) * 1000),
            "journal_durable_stroke_ms": r(median(tJournal) * 1000),
            "snapshot_vs_journal_per_stroke": r(perStrokeRatio),
            "floor_rewrite_ms": r(median(tFloorRewrite) * 1000),
            "floor_append_ms": r(median(tFloorAppend) * 1000),
            "floor_prealloc_ms": r(median(tFloorPrealloc) * 1000),
            "plain_snapshot_vs_append": r(plainRatio),
            "plain_snapshot_vs_prealloc_append": r(plainPreallocRatio),
            "append_vs_floor": r(median(tJournal) / median(tFloorPrealloc)),
            "journal_save_page_ms": r(median(engineSaves) * 1000),
            "journal_save_page_vs_floor": r(median(engineSaves) / median(tFloorPrealloc)),
            "append_vs_plain_append_floor": r(median(tJournal) / median(tFloorAppend)),
            "bytes_written_per_stroke_snapshot": Int(median(bSnap)),
            "bytes_written_per_stroke_journal": Int(median(bJournal)),
            "bytes_written_per_stroke_snapshot_mean": Int(mean(bSnap)),
            "bytes_written_per_stroke_journal_mean": Int(mean(bJournal)),
            "bytes_ratio": r(median(bSnap) / median(bJournal), 1),
            "journal_generation_at_end": summary.generation.map { Int($0) } ?? 0,
            "replay_frames": replayFrames,
            "replay_journal_bytes": replaySummary.frameBytes,
            "replay_1000_ms": r(median(tReplay) * 1000),
        ]
        if json {
            var all = result
            if let rows = scalingRows {
                all["by_page_size"] = rows.bySize.map(\.json)
                all["by_notebook_length"] = rows.byLength.map(\.json)
            }
            printJSON(all)
            return
        }
        if let rows = scalingRows { reportScaling(rows, scaling) }
        print("""

        One durable stroke (append + save) on a page of ~\(strokeCount) strokes, medians of the last \(window):
          page file                              \(Int(median(pageSizes))) bytes; one stroke frame \(Int(median(frameSizes))) bytes
          snapshot engine                        \(r(median(tSnap) * 1000)) ms
          journal engine                         \(r(median(tJournal) * 1000)) ms  (preallocation chunk \(chunk) bytes)
          snapshot_vs_journal_per_stroke         \(r(perStrokeRatio))   (target >= 8)
        Plain files, same bytes, same run:
          rewrite page (tmp, fsync, rename, dir fsync)  \(r(median(tFloorRewrite) * 1000)) ms
          append frame + fdatasync (file grows)         \(r(median(tFloorAppend) * 1000)) ms
          overwrite preallocated + fdatasync            \(r(median(tFloorPrealloc) * 1000)) ms
          plain_snapshot_vs_append               \(r(plainRatio))   (vs preallocated: \(r(plainPreallocRatio)))
          append_vs_floor                        \(r(median(tJournal) / median(tFloorPrealloc)))   (target <= 1.2; the floor appends as the engine does, into preallocated blocks)
          append_vs_plain_append_floor           \(r(median(tJournal) / median(tFloorAppend)))
          the engine's savePage alone            \(r(median(engineSaves) * 1000)) ms = \(r(median(engineSaves) / median(tFloorPrealloc))) x the floor
        Bytes written per durable stroke (median; mean with compactions and preallocation):
          bytes_written_per_stroke_snapshot      \(Int(median(bSnap)))  (mean \(Int(mean(bSnap))))
          bytes_written_per_stroke_journal       \(Int(median(bJournal)))  (mean \(Int(mean(bJournal))))
          ratio                                  \(r(median(bSnap) / median(bJournal), 1))   (target >= 100)
        Replay on open:
          replay_1000_ms                         \(r(median(tReplay) * 1000)) ms  (\(replayFrames) frames, \(replaySummary.frameBytes) bytes)
        """)
    }

    /// `--large-save N`: N generated strokes appended to a journal page in ONE save, with the
    /// engine's defaults (fixed16 frames, the real 64 MiB frame limit). A save whose frame would
    /// be larger than a frame is written as a compaction (docs/journal-format.md); this checks that
    /// it is saved, and read back whole after reopening.
    static func largeSave(strokes count: Int, dir: String?, json: Bool) async throws {
        let base = (dir ?? NSTemporaryDirectory()) + "/lnote-bench-journal-large-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let strokes = HandwritingGenerator(seed: 2026).page(strokes: count, canvas: .letter).strokes
        let payloadBytes = try JournalFile.payloadCount(for: [.append(strokes.map { .stroke($0) })], codec: .fixed16)
        let limit = JournalOptions().maxFramePayload
        let library = Library(root: base)
        let doc = try await library.createDocument(title: "Large", engine: .journal, codec: .compact)
        let options = SessionOptions(autosaveDelay: nil, thumbnails: nil)
        let session = try await library.open(doc.id, options: options)
        let page = await session.pageIDs()[0]
        try await session.append(strokes.map { .stroke($0) }, to: page)
        let saveTime = try await measureAsync { try await session.save() }
        await session.abandon()  // no close: what is on disk is what the save wrote
        let snapshotBytes = (try? FileManager.default.attributesOfItem(atPath: doc.pagePath(page))[.size] as? Int) ?? 0
        let summary = try JournalFile.summary(doc, page: page)
        var readBack = 0
        let readTime = try measure { readBack = try StoredPage.read(doc, page: page).elements.count }
        guard readBack == count else { throw UsageError("read back \(readBack) strokes, not \(count)") }
        let result: [String: Any] = [
            "strokes": count, "frame_payload_bytes": payloadBytes, "frame_limit_bytes": limit,
            "save_s": r(saveTime, 2), "snapshot_bytes": snapshotBytes, "journal_frames_after": summary.frames,
            "read_back_strokes": readBack, "read_back_s": r(readTime, 2),
        ]
        if json { printJSON(result); return }
        print("""
        One save of \(count) strokes on a journal page: its frame would be \(payloadBytes) bytes (limit \(limit): \(payloadBytes > limit ? "over" : "within") it).
          saved in \(r(saveTime, 2)) s as \(summary.frames == 0 ? "a compaction" : "\(summary.frames) frame(s)"): snapshot \(snapshotBytes) bytes, journal frames after it \(summary.frames)
          read back (snapshot + journal, no session): \(readBack) strokes in \(r(readTime, 2)) s
        """)
    }

    static let help = """
        lnote-dev bench journal [OPTIONS]

        A page grown to --strokes strokes one durable stroke at a time in a snapshot and a journal
        document side by side, against plain-file floors (the last --window strokes measured); then
        one new stroke and save(), journal engine, by page size and by notebook length, against the
        floor of appending as many bytes as the save wrote to a preallocated file and syncing it
        (the two taking turns; ratios are medians of the per-pair ratios); then replay on open.
          --strokes N            strokes the page grows to (default 2000)
          --window N             strokes measured at the end of the growth (default 200)
          --replay-frames N      frames of the replayed journal (default 1000)
          --chunk N              the journal's preallocation chunk in bytes
          --codec NAME           the page's sample codec, compact or fixed16 (default compact)
          --frame-codec NAME     the journal frames' sample codec (default: the page's)
          --journal-only         no snapshot saves between the journal's during the growth
          --large-save N         only one save of N strokes on a journal page (over a frame's limit it is
                                 written as a compaction), read back whole
          --scaling-only         only the measures by page size and notebook length
          --no-scaling           without them
        \(SaveScaling.Options.help)
        """

    /// `--scaling-only`: the journal engine by page size and notebook length, and nothing else.
    static func runScaling(_ args: Arguments, _ options: SaveScaling.Options) async throws {
        let base = (args.value("dir") ?? NSTemporaryDirectory()) + "/lnote-bench-journal-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let json = args.flag("json")
        let rows = try await SaveScaling.run(engine: .journal, floor: .append, options: options, base: base) { if !json { print($0) } }
        if json {
            printJSON(["runs": options.runs, "by_page_size": rows.bySize.map(\.json), "by_notebook_length": rows.byLength.map(\.json)])
            return
        }
        reportScaling(rows, options)
    }

    static func reportScaling(_ rows: (bySize: [SaveScaling.Row], byLength: [SaveScaling.Row]), _ options: SaveScaling.Options) {
        print("")
        SaveScaling.report("Journal engine, one stroke then save() by page size (2-page notebook), medians of \(options.runs); ratio = median of save/floor pairs:",
                           rows.bySize) { print($0) }
        SaveScaling.report("By notebook length (\(options.lengthStrokes)-stroke page):", rows.byLength) { print($0) }
    }

    static func mean(_ xs: [Double]) -> Double { xs.isEmpty ? .nan : xs.reduce(0, +) / Double(xs.count) }

    /// The plain floor for an append: write the bytes at the end of what was written, then
    /// fdatasync. With `preallocate` the file is first filled with that many zero bytes and synced,
    /// so each append overwrites allocated blocks, as the journal engine does.
    final class PlainAppend {
        let fd: Int32
        let path: String
        var offset = 0
        init(path: String, preallocate: Int) throws {
            self.path = path
            fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw FileError("open", path: path, errno: errno) }
            if preallocate > 0 {
                let zeros = [UInt8](repeating: 0, count: 1 << 20)
                var done = 0
                while done < preallocate {
                    let n = zeros.withUnsafeBytes { write(fd, $0.baseAddress, min($0.count, preallocate - done)) }
                    guard n > 0 else { throw FileError("write", path: path, errno: errno) }
                    done += n
                }
                guard Syscalls.fullSync(fd) == 0 else { throw FileError("fsync", path: path, errno: errno) }
            }
        }
        func append(_ bytes: [UInt8]) throws {
            let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
            guard n == bytes.count else { throw FileError("write", path: path, errno: errno) }
            offset += n
            guard Syscalls.dataSync(fd) == 0 else { throw FileError(Syscalls.dataSyncName, path: path, errno: errno) }
        }
        func finish() { _ = close(fd) }
    }
}
