// The fuzz targets: each decodes untrusted bytes and checks that whatever decodes also round-trips.
// A trap here (or an ASan report) is a finding; a thrown decoding error is the expected outcome.
// The journal, InkML and zip checks live in the libraries' Testing folders, shared with the
// bounded tests of swift test.

import Foundation
import LulucatInk
@testable import LulucatStore
@testable import LulucatInterchange
import LulucatStoreTesting
import LulucatInterchangeTesting

enum FuzzTargets {
    static let names = ["page", "document", "manifest", "journal", "inkml", "zip"]

    /// A page's journal replayed on a fixed snapshot, as given and with its CRCs fixed.
    static func journal(_ bytes: [UInt8]) {
        if let problem = JournalFuzz.problem(bytes) { fatalError("journal: \(problem)") }
    }

    static func inkml(_ bytes: [UInt8]) {
        if let problem = InkMLFuzz.problem(bytes) { fatalError("inkml: \(problem)") }
        // The same file with its values mutated (numbers, properties, encoding), which byte
        // mutations rarely reach.
        if let problem = InkMLFuzz.problem(InkMLValueMutator.variant(of: bytes)) { fatalError("inkml (values): \(problem)") }
    }

    /// A one-file export, as given and with its CRC-32s fixed.
    static func zip(_ bytes: [UInt8]) {
        if let problem = ZipFuzz.problem(bytes) { fatalError("zip: \(problem)") }
    }

    /// Page content files. Most mutations break the CRC32C, so each input is also tried with its
    /// trailer recomputed: that is how the fuzzer reaches the element and sample decoders.
    static func page(_ bytes: [UInt8]) {
        checkPage(bytes)
        if bytes.count >= PageFile.headerSize + PageFile.trailerSize {
            var fixed = bytes
            let crc = CRC32C.checksum(Array(fixed[0..<fixed.count - 4]))
            for i in 0..<4 { fixed[fixed.count - 4 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
            checkPage(fixed)
        }
    }

    static func checkPage(_ bytes: [UInt8]) {
        guard let content = try? PageFile.decode(bytes) else { return }
        let header = bytes.withUnsafeBytes { try! PageFile.readHeader($0) }
        let again: [UInt8]
        do { again = try PageFile.encode(content, codec: header.codec) } catch {
            fatalError("a decoded page does not encode: \(error)")
        }
        guard let back = try? PageFile.decode(again), back == content else {
            fatalError("a decoded page does not survive encode and decode")
        }
    }

    static func document(_ bytes: [UInt8]) {
        guard let doc = try? PackageJSON.decodeDocument(bytes, path: "document.json") else { return }
        let again = PackageJSON.encode(doc)
        guard let back = try? PackageJSON.decodeDocument(again, path: "document.json"), back == doc else {
            fatalError("a decoded document.json does not survive encode and decode")
        }
    }

    static func manifest(_ bytes: [UInt8]) {
        guard let m = try? PackageJSON.decodeManifest(bytes, path: "manifest.json") else { return }
        let again = PackageJSON.encode(m)
        guard let back = try? PackageJSON.decodeManifest(again, path: "manifest.json"), back == m else {
            fatalError("a decoded manifest.json does not survive encode and decode")
        }
    }
}

/// Seed inputs: real files of a small package as the store writes them.
enum FuzzSeeds {
    static func files(for target: String, sharedInk: String?) -> [(String, [UInt8])] {
        switch target {
        case "journal": return JournalFuzz.seeds()
        case "inkml": return InkMLFuzz.seeds(extraFolder: sharedInk)
        case "zip": return ZipFuzz.seeds()
        default: break
        }
        let asset = SampleContent.uuid(7, 7)
        let pages = [SampleContent.page(seed: 1, strokes: 3),
                     SampleContent.page(seed: 2, strokes: 6, images: [asset]),
                     SampleContent.page(seed: 3, strokes: 0),
                     PageContent(canvasSize: .a4, elements: [.unknown(try! UnknownElement(kind: 9, payload: Data(repeating: 3, count: 24)))])]
        let created = Date(timeIntervalSince1970: 1_790_000_000.123)
        var doc = DocumentMetadata(id: SampleContent.uuid(1), title: "Seed notebook", created: created, modified: created)
        for (i, p) in pages.enumerated() {
            doc.pages.append(PageEntry(id: SampleContent.uuid(100 + UInt32(i)), canvas: p.canvasSize,
                                       created: created, modified: created, elementCount: p.elements.count))
        }
        switch target {
        case "page":
            var out: [(String, [UInt8])] = []
            for (i, p) in pages.enumerated() {
                out.append(("compact-\(i)", try! PageFile.encode(p, codec: .compact)))
                out.append(("fixed16-\(i)", try! PageFile.encode(p, codec: .fixed16)))
            }
            return out
        case "document":
            var empty = doc
            empty.pages = []
            return [("document", PackageJSON.encode(doc)), ("empty", PackageJSON.encode(empty))]
        default:
            var empty = doc
            empty.pages = []
            return [("manifest", PackageJSON.encode(Manifest(doc))), ("empty", PackageJSON.encode(Manifest(empty)))]
        }
    }
}
