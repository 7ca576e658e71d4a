// The hostile run: untrusted inputs of every kind an import meets (InkML, a zip, and inside it a
// page, a journal, document.json, manifest.json, the archive's structure), their values and their
// structure mutated, each imported into a fresh library beside a folder that must not change.
// Shared by `lnote-dev hostile` (long runs) and the bounded test in swift test.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreTesting
import LulucatHandwriting
import LulucatInterchange
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes and checks hostile inputs. Expected of every input: no crash, no hang, nothing written
/// outside the library, no staging folder left, and either a clear error (a non-empty message)
/// with nothing in the library, or a document that verifies without errors, whose pages read, and
/// whose own export imports back.
public enum HostileRun {
    public enum Kind: String, CaseIterable, Sendable {
        case inkmlValues = "inkml-values", inkmlBytes = "inkml-bytes", zipBytes = "zip-bytes", page, journal
        case documentJSON = "document.json", manifestJSON = "manifest.json", zipStructure = "zip-structure"
    }

    public struct Input: Sendable {
        public var kind: Kind
        /// What was done to the seed, for the report of a failure.
        public var how: String
        public var bytes: [UInt8]
        public var isInkML: Bool { kind == .inkmlValues || kind == .inkmlBytes }
    }

    public struct Outcome: Sendable {
        public var accepted: Bool
        /// Nil when every expectation held.
        public var problem: String?
    }

    // MARK: Inputs

    static let inkmlSeeds: [[UInt8]] = InkMLFuzz.seeds().map(\.1)
    static let zipSeeds: [[UInt8]] = ZipFuzz.seeds().map(\.1)
    /// The sample package, its document switched to the journal engine so that its journal is
    /// replayed (and so mutated journals reach the replay).
    static let files: [(relativePath: String, data: Data)] = SamplePackage.files().map { file in
        guard file.relativePath.hasSuffix(".json") else { return file }
        let text = String(decoding: file.data, as: UTF8.self)
        let journal = text.replacingOccurrences(of: #""engine"\s*:\s*"snapshot""#, with: #""engine" : "journal""#, options: .regularExpression)
        return (file.relativePath, Data(journal.utf8))
    }
    static let inkmlTokens: [[UInt8]] = ["<trace>", "</trace>", "NaN", "inf", "-1e400", "<brushProperty name=\"transparency\" value=\"",
                                         "<channel name=\"F\" type=\"decimal\" max=\"", "encoding=\"UTF-16\"", "<!ENTITY a \"b\">",
                                         "<!NOTATION n SYSTEM \"x\">", "<?a?>", "<![CDATA[", "&#0;", "\u{202E}", "\u{1B}[2J"].map { Array($0.utf8) }
    /// Values a JSON field may be given: out of range, of the wrong type, out of form.
    static let jsonValues = ["NaN", "1e400", "-1", "-0", "0", "9223372036854775808", "-9223372036854775809", "4294967296",
                             "1.5", "null", "true", "[]", "{}", "\"\"", "\"\\u0000\"", "\"x\\u0000\"", "\"2026-01-01T00:00:00+99:99\"",
                             "\"2026-13-45T25:61:61Z\"", "\"0000-01-01T00:00:00Z\"", "\"\\u001b]0;owned\\u0007\"", "\"\\u202e\"",
                             "\"\(SampleContent.uuid(1, 1).uuidString)\\u0000tail\"", "\"\(SampleContent.uuid(1, 1).uuidString.lowercased())\"",
                             "\"../../etc\"", "\"sqlite\"", "\"journal\"", "\"fixed16\"", "\"bogus\"", String(repeating: "9", count: 400)]

    /// Input `index` of the run seeded with `seed`: the same pair always gives the same bytes.
    public static func input(seed: UInt64, index: Int) -> Input {
        var r = ByteMutator(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(index) &* 0xD1B5_4A32_D192_ED03 &+ 1)
        let kind = Kind.allCases[r.below(Kind.allCases.count)]
        func pick<T>(_ a: [T]) -> T { a[r.below(a.count)] }
        switch kind {
        case .inkmlValues:
            var m = InkMLValueMutator(seed: r.next())
            var bytes = pick(inkmlSeeds)
            for _ in 0..<(1 + r.below(3)) { bytes = m.mutate(bytes) }
            return Input(kind: kind, how: "InkML values", bytes: bytes)
        case .inkmlBytes:
            return Input(kind: kind, how: "InkML bytes", bytes: r.mutate(pick(inkmlSeeds), tokens: inkmlTokens))
        case .zipBytes:
            var bytes = r.mutate(pick(zipSeeds))
            let fixed = r.below(2) == 0
            if fixed { bytes = ZipFuzz.withChecksumsFixed(bytes) }
            return Input(kind: kind, how: "archive bytes\(fixed ? ", CRCs fixed" : "")", bytes: bytes)
        case .page, .journal, .documentJSON, .manifestJSON:
            var files = self.files
            let candidates = files.indices.filter { i in
                let p = files[i].relativePath
                switch kind {
                case .page: return p.hasSuffix(".content")
                case .journal: return p.hasSuffix(".journal")
                case .documentJSON: return p == "document.json"
                default: return p == "manifest.json"
                }
            }
            let i = pick(candidates)
            var how = files[i].relativePath
            var bytes = [UInt8](files[i].data)
            if kind == .journal && r.below(8) == 0 {
                // Replay work instead of damage: within the import's budget, or past it.
                let big = r.below(2) == 0
                let hostile = big ? costlyJournal : cheapJournal
                if let page = files.firstIndex(where: { $0.relativePath == files[i].relativePath.replacingOccurrences(of: ".journal", with: ".content") }) {
                    files[page].data = Data(hostile.snapshot)
                }
                bytes = hostile.journal
                how += big ? ": moves past the replay budget" : ": moves within the replay budget"
            } else if (kind == .documentJSON || kind == .manifestJSON) && r.below(2) == 0 {
                bytes = replaceJSONValue(bytes, &r)
                how += ": a value replaced"
            } else {
                bytes = r.mutate(bytes, tokens: kind == .page || kind == .journal ? [] : jsonValues.map { Array($0.utf8) })
                if kind == .page && bytes.count >= PageFile.headerSize + PageFile.trailerSize && r.below(4) != 0 {
                    // A valid CRC, so the decoder's own checks are what refuse it.
                    let crc = CRC32C.checksum(Array(bytes[0..<(bytes.count - 4)]))
                    withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange((bytes.count - 4)..., with: $0) }
                    how += ": bytes, CRC fixed"
                } else {
                    how += ": bytes"
                }
            }
            files[i].data = Data(bytes)
            return Input(kind: kind, how: how, bytes: archive(files, top: r.below(2) == 0 ? SamplePackage.documentID : nil))
        case .zipStructure:
            var entries: [(String, Data)] = files.map { ($0.relativePath, $0.data) }
            var how: String
            switch r.below(7) {
            case 0:
                let gone = r.below(entries.count)
                how = "without \(entries[gone].0)"
                entries.remove(at: gone)
            case 1:
                let n = 1 + r.below(3000)
                how = "\(n) unlisted pages"
                for k in 0..<n { entries.append(("pages/\(SampleContent.uuid(0xBAD, UInt32(k)).uuidString).content", Data(count: r.below(64)))) }
            case 2:
                let n = 1 + r.below(500)
                how = "\(n) orphan assets of 256 KiB zeros"
                for k in 0..<n { entries.append(("assets/\(SampleContent.uuid(0xA55E7, UInt32(k)).uuidString).png", Data(count: 256 << 10))) }
            case 3:
                let twin = r.below(entries.count)
                how = "\(entries[twin].0) twice"
                entries.append(entries[twin])
            case 4:
                how = "a page of 8 MiB of zeros"
                let page = entries.firstIndex { $0.0.hasSuffix(".content") }!
                entries[page].1 = Data(count: 8 << 20)
            case 5:
                how = "a name in lower case"
                let e = r.below(entries.count)
                entries.append((entries[e].0.lowercased() == entries[e].0 ? entries[e].0 + "x" : entries[e].0.lowercased(), entries[e].1))
            default:
                how = "the entries shuffled, document.json last"
                for k in stride(from: entries.count - 1, to: 0, by: -1) { entries.swapAt(k, r.below(k + 1)) }
                if let d = entries.firstIndex(where: { $0.0 == "document.json" }) { entries.append(entries.remove(at: d)) }
            }
            let top: UUID? = r.below(3) == 0 ? (r.below(2) == 0 ? SamplePackage.documentID : SampleContent.uuid(0xD1FF, 1)) : nil
            if top == SampleContent.uuid(0xD1FF, 1) { how += ", under another document's folder" }
            return Input(kind: kind, how: how, bytes: rawArchive(entries, top: top))
        }
    }

    static let cheapJournal = try! HostileJournal(elements: 300, frames: 2000)
    static let costlyJournal = try! HostileJournal(elements: 20_000, frames: 20_000)

    /// A package archive as our exporter writes it (names must be of the layout).
    static func archive(_ files: [(relativePath: String, data: Data)], top: UUID?) -> [UInt8] {
        (try? [UInt8](PackageArchive.export(files: files, topFolder: top))) ?? rawArchive(files.map { ($0.relativePath, $0.data) }, top: top)
    }

    /// Any entries, in this order, deflated (names unchecked).
    static func rawArchive(_ entries: [(String, Data)], top: UUID?) -> [UInt8] {
        let w = ZipWriter()
        let prefix = top.map { "\($0.uuidString).lnote/" } ?? ""
        for (p, d) in entries { try? w.add(path: prefix + p, data: d, method: .deflated) }
        return (try? [UInt8](w.finish())) ?? []
    }

    /// One number, string, true, false or null of the JSON text replaced by a hostile value.
    static func replaceJSONValue(_ bytes: [UInt8], _ r: inout ByteMutator) -> [UInt8] {
        let text = String(decoding: bytes, as: UTF8.self)
        let scalars = Array(text.unicodeScalars)
        // Value starts: after ':' or '[' or ',' (skipping spaces).
        var starts: [Int] = []
        for (i, c) in scalars.enumerated() where c == ":" || c == "[" || c == "," {
            var j = i + 1
            while j < scalars.count, scalars[j] == " " || scalars[j] == "\n" { j += 1 }
            if j < scalars.count, scalars[j] != "{", scalars[j] != "[" { starts.append(j) }
        }
        guard !starts.isEmpty else { return bytes }
        let s = starts[r.below(starts.count)]
        var e = s
        if scalars[s] == "\"" {
            e += 1
            while e < scalars.count, scalars[e] != "\"" { e += scalars[e] == "\\" ? 2 : 1 }
            e = min(e + 1, scalars.count)
        } else {
            while e < scalars.count, !",]}\n ".unicodeScalars.contains(scalars[e]) { e += 1 }
        }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: scalars[..<s])
        out.append(contentsOf: jsonValues[r.below(jsonValues.count)].unicodeScalars)
        out.append(contentsOf: scalars[e...])
        return Array(String(out).utf8)
    }

    // MARK: Checking

    /// Imports `input` into a new library under `folder` and checks every expectation; the
    /// library is removed after. `outside` is a folder beside the library that must not change.
    public static func check(_ input: Input, folder: String, outside: String) async -> Outcome {
        let before = snapshot(outside)
        let library = Library(root: folder + "/library")
        defer { try? FileManager.default.removeItem(atPath: folder + "/library") }
        var problems: [String] = []
        var accepted = false
        do {
            let package: DocumentPackage
            if input.isInkML {
                package = try await DocumentTransfer.importInkML(Data(input.bytes), into: library, title: "Hostile").package
            } else {
                package = try DocumentTransfer.importArchive(Data(input.bytes), into: library).package
            }
            accepted = true
            let errors = DocumentVerifier(fileSystem: library.fileSystem).verify(package).filter { $0.severity == .error }
            if !errors.isEmpty { problems.append("imported, but verify finds: \(errors)") }
            for page in try DocumentMetadata.read(package).pages {
                do { _ = try StoredPage.read(package, page: page.id) } catch { problems.append("imported, but page \(page.id) does not read: \(error)") }
            }
            let zip = folder + "/again.zip"
            defer { try? FileManager.default.removeItem(atPath: zip) }
            do {
                try await DocumentTransfer.exportArchive(package.id, from: library, to: zip)
                let back = Library(root: folder + "/again")
                defer { try? FileManager.default.removeItem(atPath: folder + "/again") }
                _ = try DocumentTransfer.importArchive(try Data(contentsOf: URL(fileURLWithPath: zip)), into: back)
            } catch { problems.append("imported, but its own export does not import back: \(error)") }
        } catch {
            if "\(error)".trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { problems.append("refused with an empty message (\(type(of: error)))") }
            if let listed = try? await library.documents(), !listed.isEmpty { problems.append("refused, but the library holds \(listed.count) documents") }
        }
        if !library.stagingFolders().isEmpty { problems.append("staging folders left: \(library.stagingFolders())") }
        if snapshot(outside) != before { problems.append("the folder beside the library changed") }
        return Outcome(accepted: accepted, problem: problems.isEmpty ? nil : problems.joined(separator: "; "))
    }

    /// Every file under `path` (links not followed) with its bytes or link target.
    public static func snapshot(_ path: String) -> [String: Data] {
        var out: [String: Data] = [:]
        let fm = FileManager.default
        for rel in (fm.enumerator(atPath: path)?.allObjects as? [String]) ?? [] {
            let p = path + "/" + rel
            var st = stat()
            guard lstat(p, &st) == 0 else { continue }
            switch st.st_mode & S_IFMT {
            case S_IFREG: out[rel] = fm.contents(atPath: p) ?? Data()
            case S_IFLNK: out[rel] = Data(((try? fm.destinationOfSymbolicLink(atPath: p)) ?? "").utf8)
            default: out[rel] = Data("kind \(st.st_mode & S_IFMT)".utf8)
            }
        }
        return out
    }
}
