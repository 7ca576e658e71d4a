// `lnote-dev write-loop`: a writer in a process of its own, for the cross-process reader tests
// (LnoteCLITests' ReadOnlyCrossProcessTests). Hidden from `help`: a test harness's helper.

import Foundation
import LulucatInk
import LulucatStore

struct WriteLoopCommand: Command {
    static let name = "write-loop"
    static let abstract = "Open a document, append one stroke to its first page and flush, N times; print a line per acknowledged save."
    static let usage = "lnote-dev write-loop LIBRARY DOCUMENT-ID [--saves N] [--samples K] [--pause-ms MS] [--hold-at N --hold-file PATH]"

    var library: String
    var document: UUID
    var saves: Int
    var samples: Int
    var pauseMilliseconds: Int
    /// After save `holdAt`, waits (600 s at most) until `holdFile` exists: a reader's way of being
    /// sure it reads while the writer is between saves, however loaded the machine.
    var holdAt: Int?
    var holdFile: String?

    init(arguments: [String]) throws {
        let a = try Arguments(arguments, valued: ["saves", "samples", "pause-ms", "hold-at", "hold-file"], flags: [])
        guard a.positionals.count == 2 else { throw UsageError("needs LIBRARY and DOCUMENT-ID") }
        library = a.positionals[0]
        guard let id = UUID(uuidString: a.positionals[1]) else { throw UsageError("'\(a.positionals[1])' is not a document id") }
        document = id
        saves = try a.int("saves", in: 1...1_000_000) ?? 100
        samples = try a.int("samples", in: 1...10_000) ?? 40
        pauseMilliseconds = try a.int("pause-ms", in: 0...10_000) ?? 0
        holdAt = try a.int("hold-at", in: 1...1_000_000)
        holdFile = a.value("hold-file")
        guard (holdAt == nil) == (holdFile == nil) else { throw UsageError("--hold-at and --hold-file go together") }
    }

    /// Stroke `n` of a write loop: its samples are a function of `n` alone, so a reader in another
    /// process can check that every stroke it reads is whole (the test has the same formula).
    static func stroke(_ n: Int, samples count: Int) -> Stroke {
        let samples = (0..<count).map { i in
            Sample(x: Int32(1000 + 3 * n + 7 * i), y: Int32(2000 + (n * 31 + i * i) % 997), radius: UInt16(10 + (n + i) % 5),
                   pressure: UInt16(300 + (n * 7 + i) % 600), time: UInt32(i * 4))
        }
        return Stroke(ink: Ink(tool: .pen, color: RGBA8(r: 10, g: 20, b: 30), width: 20), samples: samples)
    }

    func run() async throws {
        let lib = Library(root: library)
        let session = try await lib.open(document, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        guard let page = await session.pageIDs().first else { throw UsageError("the document has no page") }
        print("write-loop: page \(page.uuidString)")
        fflush(nil)
        for n in 0..<saves {
            let s = Self.stroke(n, samples: samples)
            try await session.append(s, to: page)
            try await session.flush()
            // Printed only once the save is durable: every line is an acknowledged save.
            print("saved \(n + 1) \(s.id.uuidString)")
            fflush(nil)
            if pauseMilliseconds > 0 { try await Task.sleep(for: .milliseconds(pauseMilliseconds)) }
            if let holdAt, let holdFile, n + 1 == holdAt {
                let until = Date().addingTimeInterval(600)
                while !FileManager.default.fileExists(atPath: holdFile), Date() < until {
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
        }
        try await session.close()
        print("write-loop: closed after \(saves) saves")
        fflush(nil)
    }
}
