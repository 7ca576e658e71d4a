// `lnote-dev bench codec`: bytes per sample and speed of the sample codecs on generated and real ink.

import Foundation
import LulucatInk
import LulucatHandwriting

/// Measures both sample codecs on each input: sizes, encode and decode speed, and fixed16 decode
/// against a plain memcpy of the same bytes. Timings are medians of several rounds that run every
/// measurement side by side.
struct BenchCodec: Sendable {
    static let name = "codec"
    static let abstract = "Bytes per sample and speed of the fixed16 and compact codecs (generated page + real ink)."
    static let usage = "lnote-dev bench codec [--ink DIR] [--strokes N] [--rounds N] [--json]"

    var inkFolder: String?
    var strokes: Int
    var rounds: Int
    var json: Bool

    init(arguments: [String]) throws {
        let a = try Arguments(arguments, valued: ["ink", "strokes", "rounds"], flags: ["json"])
        guard a.positionals.isEmpty else { throw UsageError("unexpected argument '\(a.positionals[0])'") }
        inkFolder = a.value("ink")
        strokes = try a.int("strokes") ?? 2000
        rounds = try a.int("rounds") ?? 9
        json = a.flag("json")
        guard strokes > 0 else { throw UsageError("--strokes must be positive") }
        guard rounds > 0 else { throw UsageError("--rounds must be positive") }
    }

    /// One input of the benchmark.
    struct Input {
        var name: String
        var page: PageContent
    }

    func run() async throws {
        var inputs: [Input] = []
        if let inkFolder {
            inputs.append(Input(name: URL(fileURLWithPath: inkFolder).lastPathComponent, page: try InkFolder.page(inkFolder)))
        } else {
            inputs.append(Input(name: "generated-\(strokes)",
                                page: HandwritingGenerator(seed: 2026).page(strokes: strokes, canvas: .letter)))
            if let root = InkFolder.sharedInkRoot() {
                for folder in InkFolder.subfolders(of: root) {
                    inputs.append(Input(name: URL(fileURLWithPath: folder).lastPathComponent, page: try InkFolder.page(folder)))
                }
            } else {
                printError("lnote-dev bench codec: no real ink found (set LNOTE_INK_DIR to a folder like shared/data/ink); generated page only")
            }
        }
        var results: [CodecFigures] = []
        for input in inputs {
            results.append(try CodecFigures.measure(input.name, input.page, rounds: rounds))
        }
        if json {
            let objects = results.map(\.json)
            let data = try JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(CodecFigures.table(results))
        }
    }
}

/// Finding and reading folders of JSONL ink.
enum InkFolder {
    /// The folder of real ink folders: `$LNOTE_INK_DIR`, else `../shared/data/ink` from the current
    /// directory or from the executable's directory or any directory above it.
    static func sharedInkRoot() -> String? {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        if let env = ProcessInfo.processInfo.environment["LNOTE_INK_DIR"], !env.isEmpty {
            guard fm.fileExists(atPath: env, isDirectory: &isDir), isDir.boolValue else {
                printError("lnote-dev bench codec: LNOTE_INK_DIR=\(env) is not a folder")
                return nil
            }
            return env
        }
        var candidates = [URL(fileURLWithPath: fm.currentDirectoryPath).appendingPathComponent("../shared/data/ink")]
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        while dir.path != "/" && !dir.path.isEmpty {
            candidates.append(dir.appendingPathComponent("../shared/data/ink"))
            candidates.append(dir.appendingPathComponent("shared/data/ink"))
            dir = dir.deletingLastPathComponent()
        }
        return candidates.map { $0.standardizedFileURL.path }.first { fm.fileExists(atPath: $0, isDirectory: &isDir) && isDir.boolValue }
    }

    /// Subfolders of `root` that hold at least one `.jsonl` file, sorted by name.
    static func subfolders(of root: String) -> [String] {
        let fm = FileManager.default
        let names = (try? fm.contentsOfDirectory(atPath: root)) ?? []
        return names.sorted().map { root + "/" + $0 }.filter { !jsonlFiles($0).isEmpty }
    }

    static func jsonlFiles(_ folder: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".jsonl") }.sorted().map { folder + "/" + $0 }
    }

    /// One page holding the strokes of every `*.jsonl` file of `folder`, in file-name order.
    static func page(_ folder: String) throws -> PageContent {
        let files = jsonlFiles(folder)
        guard !files.isEmpty else {
            throw CodecBenchError("\(folder) holds no *.jsonl files (expected the format of shared/data/ink)")
        }
        var elements: [Element] = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CodecBenchError("cannot read \(file)")
            }
            do {
                elements += try InkJSONL.strokes(from: data).map(Element.stroke)
            } catch {
                throw CodecBenchError("\(file): \(error)")
            }
        }
        return PageContent(canvasSize: .letter, elements: elements)
    }
}
