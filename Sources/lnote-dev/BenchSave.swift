// lnote-dev bench save: saving one dirty page, against the plain-file floor, in small and large
// documents; listing a large library; opening a large page.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreTesting
#if canImport(Glibc)
import Glibc
import LulucatHandwriting
#endif

enum SaveBench {
    static func run(_ arguments: [String]) async throws {
        let args = try Arguments(arguments, valued: ["runs", "strokes", "pages", "documents", "dir"], flags: ["json"])
        let runs = try args.int("runs") ?? 15
        let strokes = try args.int("strokes") ?? 2000
        let bigPages = try args.int("pages") ?? 200
        let documents = try args.int("documents") ?? 1000
        guard runs > 0, strokes > 0, bigPages >= 2, documents > 0 else { throw UsageError("counts must be positive (--pages at least 2)") }
        let base = (args.value("dir") ?? NSTemporaryDirectory()) + "/lnote-bench-save-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let json = args.flag("json")
        func say(_ s: String) { if !json { print(s) } }

        let generator = HandwritingGenerator(seed: 2026)
        let page = generator.page(strokes: strokes, canvas: .letter)
        // New strokes written on top, one per save, as a person writes.
        let extra = (0..<(2 * runs + 4)).map { k in
            Element.stroke(generator.stroke(letters: 3, origin: (72 + Double(k % 20) * 24, 700), variant: UInt64(k + 1)))
        }
        say("Generated a \(strokes)-stroke page: \(page.sampleCount) samples.")

        let library = Library(root: base + "/library")
        func makeDocument(pages: Int, codec: SampleCodecID) async throws -> (DocumentSession, UUID) {
            let package = try library.createDocument(title: "\(pages) pages, \(codec)", codec: codec)
            let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, maxLoadedPages: 2, thumbnails: nil))
            let first = await session.pageIDs()[0]
            try await session.append(page.elements, to: first)
            try await session.save()
            // The other pages hold the same handwriting, so the large document is large on disk.
            let bytes = try Data(contentsOf: URL(fileURLWithPath: package.pagePath(first)))
            for _ in 1..<pages {
                let id = try await session.addPage()
                try bytes.write(to: URL(fileURLWithPath: package.pagePath(id)))
            }
            try await session.flush()
            return (session, first)
        }
        say("Building a 2-page and a \(bigPages)-page document...")
        let (small, smallPage) = try await makeDocument(pages: 2, codec: .compact)
        let (large, largePage) = try await makeDocument(pages: bigPages, codec: .compact)
        let (fixed, fixedPage) = try await makeDocument(pages: 2, codec: .fixed16)

        // Side by side, alternating: a durable save of the dirty page in each document, and the
        // floor: the same bytes written to a temporary file, synced, renamed, directory synced.
        var tSmall: [Double] = [], tLarge: [Double] = [], tFixed: [Double] = [], tFloor: [Double] = [], tFloorFixed: [Double] = []
        let floorDir = base + "/floor"
        try FileManager.default.createDirectory(atPath: floorDir, withIntermediateDirectories: true)
        var k = 0
        for _ in 0..<runs {
            try await small.append([extra[k]], to: smallPage)
            try await large.append([extra[k]], to: largePage)
            try await fixed.append([extra[k]], to: fixedPage)
            k += 1
            tSmall.append(try await measureAsync { try await small.save() })
            tLarge.append(try await measureAsync { try await large.save() })
            tFixed.append(try await measureAsync { try await fixed.save() })
            let compactBytes = try PageFile.encode(try await small.content(of: smallPage), codec: .compact)
            let fixedBytes = try PageFile.encode(try await fixed.content(of: fixedPage), codec: .fixed16)
            tFloor.append(try measure { try floorWrite(compactBytes, dir: floorDir) })
            tFloorFixed.append(try measure { try floorWrite(fixedBytes, dir: floorDir) })
        }
        let compactSize = try await PageFile.encode(small.content(of: smallPage), codec: .compact).count
        let fixedSize = try await PageFile.encode(fixed.content(of: fixedPage), codec: .fixed16).count
        try await small.close()
        try await large.close()
        try await fixed.close()

        // Opening the page: read and decode, in a fresh process so its peak memory is its own.
        let smallPackage = small.package
        let probe = try openProbeInChild(package: smallPackage.path, page: smallPage, runs: runs)

        say("Creating a \(documents)-document library...")
        let listLibrary = Library(root: base + "/list")
        for i in 0..<documents { try listLibrary.createDocument(title: "Document \(i)") }
        let counting = CountingFileSystem()
        let countedLibrary = Library(root: listLibrary.root, fileSystem: counting)
        var tList: [Double] = []
        for _ in 0..<max(5, runs / 2) {
            counting.reset()
            tList.append(try measure { _ = try countedLibrary.list() })
        }
        let filesPerDocument = Double(counting.readOpens.count) / Double(documents)

        let result: [String: Any] = [
            "strokes": strokes, "samples": page.sampleCount, "runs": runs,
            "page_bytes_compact": compactSize, "page_bytes_fixed16": fixedSize,
            "save_2_pages_ms": r(median(tSmall) * 1000), "save_200_pages_ms": r(median(tLarge) * 1000),
            "large_document_pages": bigPages,
            "save_200_vs_2_pages": r(median(tLarge) / median(tSmall)),
            "floor_ms": r(median(tFloor) * 1000),
            "save_vs_floor": r(median(tSmall) / median(tFloor)),
            "fixed16_save_ms": r(median(tFixed) * 1000),
            "fixed16_vs_compact_save": r(median(tFixed) / median(tSmall)),
            "fixed16_save_vs_its_floor": r(median(tFixed) / median(tFloorFixed)),
            "list_documents": documents,
            "list_1000_ms": r(median(tList) * 1000),
            "list_files_per_document": r(filesPerDocument),
            "open_page_ms": r(probe.openMS),
            "open_page_cpu_ms": r(probe.cpuMS),
            "open_page_peak_rss_mb": r(probe.peakMB, 1),
            "open_page_rss_growth_mb": r(probe.growthMB, 1),
            "crc32c_hardware": CRC32C.usesHardware,
        ]
        if json { printJSON(result); return }
        print("""

        Saving one dirty \(strokes)-stroke page (\(page.sampleCount) samples), medians of \(runs), side by side:
          compact page file              \(compactSize) bytes; fixed16 \(fixedSize) bytes
          save, 2-page document          \(r(median(tSmall) * 1000)) ms
          save, \(bigPages)-page document        \(r(median(tLarge) * 1000)) ms
          save_200_vs_2_pages            \(r(median(tLarge) / median(tSmall)))   (target <= 1.05)
          plain-file floor (same bytes)  \(r(median(tFloor) * 1000)) ms
          save_vs_floor                  \(r(median(tSmall) / median(tFloor)))   (target <= 1.3)
          fixed16 save                   \(r(median(tFixed) * 1000)) ms
          fixed16_vs_compact_save        \(r(median(tFixed) / median(tSmall)))
        Listing a \(documents)-document library:
          list_1000_ms                   \(r(median(tList) * 1000)) ms
          list_files_per_document        \(r(filesPerDocument))
        Opening the page (read + decode), in a fresh process:
          open_page_ms                   \(r(probe.openMS)) ms   (one 120 Hz frame is 8.3 ms; CPU \(r(probe.cpuMS)) ms)
          open_page_peak_rss_mb          \(r(probe.peakMB, 1)) MB (grew \(r(probe.growthMB, 1)) MB during the opens)
        """)
    }

    /// The floor: write bytes to a new file, fsync, rename over the target, fsync the directory.
    static func floorWrite(_ bytes: [UInt8], dir: String) throws {
        let temp = dir + "/floor.tmp", target = dir + "/floor.content"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileError("open", path: temp, errno: errno) }
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n == bytes.count, Syscalls.fullSync(fd) == 0 else { close(fd); throw FileError("write", path: temp, errno: errno) }
        close(fd)
        guard rename(temp, target) == 0 else { throw FileError("rename", path: temp, errno: errno) }
        let d = open(dir, O_RDONLY | O_DIRECTORY)
        guard d >= 0 else { throw FileError("open", path: dir, errno: errno) }
        _ = Syscalls.fullSync(d)
        close(d)
    }

    struct Probe { var openMS: Double; var peakMB: Double; var growthMB: Double; var cpuMS: Double }

    /// Runs `lnote-dev bench _open` in a child process and reads its figures.
    static func openProbeInChild(package: String, page: UUID, runs: Int) throws -> Probe {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CommandLine.arguments[0].hasPrefix("/") ? CommandLine.arguments[0]
                              : FileManager.default.currentDirectoryPath + "/" + CommandLine.arguments[0])
        p.arguments = ["bench", "_open", package, page.uuidString, String(runs)]
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let parts = String(decoding: data, as: UTF8.self).split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard p.terminationStatus == 0, parts.count == 4 else { throw UsageError("the open probe failed") }
        return Probe(openMS: parts[0], peakMB: parts[1], growthMB: parts[2], cpuMS: parts[3])
    }

    /// `lnote-dev bench _open PACKAGE PAGE RUNS`: prints median open ms, peak RSS MB, RSS growth MB.
    static func openProbe(_ arguments: [String]) async throws {
        guard arguments.count == 3, let page = UUID(uuidString: arguments[1]), let runs = Int(arguments[2]) else {
            throw UsageError("_open PACKAGE PAGE RUNS")
        }
        let package = try DocumentPackage(path: arguments[0])
        let before = residentMemoryMB()?.peak ?? 0
        var times: [Double] = [], cpu: [Double] = []
        var elements = 0
        for _ in 0..<runs {
            let c0 = threadCPUSeconds()
            times.append(try measure { elements += try SnapshotEngine.readSnapshot(package.pagePath(page), page: page, fileSystem: PosixFileSystem()).elements.count })
            cpu.append(threadCPUSeconds() - c0)
        }
        let peak = residentMemoryMB()?.peak ?? 0
        print("\(median(times) * 1000) \(peak) \(peak - before) \(median(cpu) * 1000)")
        _ = elements
    }
}
