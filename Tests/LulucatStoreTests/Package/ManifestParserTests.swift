import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreTesting
import LulucatHandwriting

/// The hand parser of manifest.json (the listing's) against JSONDecoder's path, the authority:
/// whatever the hand parser returns, that path returns too; where it gives up, that path decides.
@Suite struct ManifestParserTests {
    static let id = UUID(uuidString: "085F9CDF-6F69-4475-930F-98A491574F23")!
    static let cover = UUID(uuidString: "F09FE6EE-B6E3-4281-9005-76454E437951")!

    static func fast(_ bytes: [UInt8]) -> Manifest? { bytes.withUnsafeBytes(ManifestParser.parse) }
    static func slow(_ bytes: [UInt8]) -> Manifest? { try? PackageJSON.decodeManifestWithDecoder(bytes, path: "manifest.json") }

    /// A manifest as the store writes it.
    static func manifest(title: String, pages: Int, modifiedMS: Int64) -> Manifest {
        let t = Date(timeIntervalSince1970: Double(modifiedMS) / 1000)
        var doc = DocumentMetadata(id: id, title: title, created: t, modified: t)
        doc.pages = (0..<pages).map { k in
            PageEntry(id: k == 0 ? cover : UUID(), canvas: .letter, created: t, modified: t, elementCount: 0)
        }
        return Manifest(doc)
    }

    /// Titles with every kind of character JSON escapes or carries: quotes, backslashes, slashes,
    /// controls, non-ASCII, astral characters, terminal controls.
    static func randomTitle(_ random: inout SeededRandom) -> String {
        let pieces = ["a", "Lecture notes", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "日本語", "😀",
                      "\u{202E}", "\u{2028}", "\u{9B}", " ", "{", "}", ":", ",", "\\u0041", "null"]
        var s = ""
        for _ in 0..<Int(random.next() % 12) { s += pieces[Int(random.next() % UInt64(pieces.count))] }
        return s
    }

    @Test func writtenManifestsParseByHandExactly() {
        var random = SeededRandom(seed: 34)
        for k in 0..<2000 {
            let m = ManifestParserTests.manifest(title: ManifestParserTests.randomTitle(&random), pages: Int(random.next() % 3),
                                                 modifiedMS: Int64(random.next() % 4_102_444_800_000) - (k % 7 == 0 ? 86_400_000_000 : 0))
            let bytes = PackageJSON.encode(m)
            let fast = ManifestParserTests.fast(bytes)
            #expect(fast == m, "\(String(decoding: bytes, as: UTF8.self))")
            #expect(fast == ManifestParserTests.slow(bytes))
            #expect(fast?.title.utf8.elementsEqual(m.title.utf8) == true)
        }
    }

    @Test func otherSpellingsOfTheSameValueAgree() throws {
        let base = #""format":"lulucat.manifest","formatVersion":1,"id":"085F9CDF-6F69-4475-930F-98A491574F23","created":"2026-11-30T16:44:00.561Z","modified":"2026-11-30T16:44:00.561Z","pageCount":0"#
        let cases = [
            "{" + base + #","title":"caf\u00e9 \ud83d\ude00 \/ \b\f\n\r\t \"q\" \\"}"#,
            "{" + base + #","title":"x","coverPageID":null}"#,
            "{" + base + #","title":"x","coverPageID":"F09FE6EE-B6E3-4281-9005-76454E437951"}"#,
            " \r\n\t{ " + base.replacingOccurrences(of: ",", with: " ,\n ") + " , \"title\" : \"x\" }\n\n",
            #"{"title":"x","# + base + "}",
            "{" + base + #","title":"\u0000"}"#,
            "{" + base.replacingOccurrences(of: "lulucat.manifest", with: #"lulucat\u002emanifest"#) + #","title":"x"}"#,
        ]
        for text in cases {
            let bytes = Array(text.utf8)
            let fast = try #require(ManifestParserTests.fast(bytes), "\(text)")
            #expect(fast == ManifestParserTests.slow(bytes), "\(text)")
        }
        #expect(ManifestParserTests.fast(Array(cases[0].utf8))?.title == "café 😀 / \u{8}\u{C}\n\r\t \"q\" \\")
        #expect(ManifestParserTests.fast(Array(cases[5].utf8))?.title == "\u{0}")
    }

    @Test func whatItCannotVouchForGoesToTheDecoder() throws {
        let good = String(decoding: PackageJSON.encode(ManifestParserTests.manifest(title: "T", pages: 1, modifiedMS: 1_700_000_000_000)), as: UTF8.self)
        #expect(ManifestParserTests.fast(Array(good.utf8)) != nil)
        let lower = good.replacingOccurrences(of: "085F9CDF", with: "085f9cdf")
        let refused: [(String, String)] = [
            ("duplicate key", good.replacingOccurrences(of: "\"title\" : \"T\"", with: "\"title\" : \"T\", \"title\" : \"U\"")),
            ("unknown key", good.replacingOccurrences(of: "\"title\" : \"T\"", with: "\"title\" : \"T\", \"pages\" : []")),
            ("lower-case id", lower),
            ("newer version", good.replacingOccurrences(of: "\"formatVersion\" : 1", with: "\"formatVersion\" : 2")),
            ("version 0", good.replacingOccurrences(of: "\"formatVersion\" : 1", with: "\"formatVersion\" : 0")),
            ("fraction", good.replacingOccurrences(of: "\"pageCount\" : 1", with: "\"pageCount\" : 1.0")),
            ("exponent", good.replacingOccurrences(of: "\"pageCount\" : 1", with: "\"pageCount\" : 1e0")),
            ("negative", good.replacingOccurrences(of: "\"pageCount\" : 1", with: "\"pageCount\" : -1")),
            ("leading zero", good.replacingOccurrences(of: "\"pageCount\" : 1", with: "\"pageCount\" : 01")),
            ("other format", good.replacingOccurrences(of: "lulucat.manifest", with: "lulucat.document")),
            ("shorter format", good.replacingOccurrences(of: "lulucat.manifest", with: "lulucat.manifes")),
            ("longer format", good.replacingOccurrences(of: "lulucat.manifest", with: "lulucat.manifests")),
            ("escaped other format", good.replacingOccurrences(of: "lulucat.manifest", with: #"lulucat\u002emanifesT"#)),
            ("format not a string", good.replacingOccurrences(of: "\"lulucat.manifest\"", with: "1")),
            ("byte order mark", "\u{FEFF}" + good),
            ("trailing text", good + "x"),
            ("two objects", good + good),
            ("missing key", good.replacingOccurrences(of: "\"pageCount\" : 1,", with: "")),
            ("bad time", good.replacingOccurrences(of: "\"created\" : \"", with: "\"created\" : \"x")),
            ("raw control", good.replacingOccurrences(of: "\"T\"", with: "\"\u{1}\"")),
            ("lone surrogate", good.replacingOccurrences(of: "\"T\"", with: #""\ud800""#)),
            ("bad escape", good.replacingOccurrences(of: "\"T\"", with: #""\x""#)),
            ("trailing comma", good.replacingOccurrences(of: "\n}", with: ",\n}")),
            ("empty object", "{}"),
            ("array", "[" + good + "]"),
        ]
        for (what, text) in refused {
            let bytes = Array(text.utf8)
            #expect(ManifestParserTests.fast(bytes) == nil, "\(what)")
            // The public decode still answers as before: the decoder's value or its error.
            let viaDecode = try? PackageJSON.decodeManifest(bytes, path: "manifest.json")
            #expect(viaDecode == ManifestParserTests.slow(bytes), "\(what)")
        }
        // Invalid UTF-8 in the title.
        var bytes = Array(good.utf8)
        let t = try #require(bytes.firstIndex(of: UInt8(ascii: "T")))
        bytes[t] = 0xC3
        #expect(ManifestParserTests.fast(bytes) == nil)
        #expect(ManifestParserTests.slow(bytes) == nil)
    }

    @Test func mutatedManifestsNeverDisagree() {
        var mutator = ByteMutator(seed: 3434)
        var random = SeededRandom(seed: 11)
        let tokens: [[UInt8]] = ["\"", "\\", "\\u00e9", "\\ud83d\\ude00", "null", ",", ":", "{", "}", "1", "-", ".", "e",
                                 "\"coverPageID\" : null,", "\"title\" : \"x\",", " ", "\u{FF}", "\"id\" : \"085F9CDF-6F69-4475-930F-98A491574F23\","]
            .map { Array($0.utf8) }
        var agreed = 0
        for _ in 0..<3000 {
            let seed = PackageJSON.encode(ManifestParserTests.manifest(title: ManifestParserTests.randomTitle(&random), pages: Int(random.next() % 2),
                                                                        modifiedMS: Int64(random.next() % 4_000_000_000_000)))
            let bytes = mutator.mutate(seed, tokens: tokens)
            guard let fast = ManifestParserTests.fast(bytes) else { continue }
            #expect(fast == ManifestParserTests.slow(bytes), "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
            agreed += 1
        }
        #expect(agreed > 200)  // the parser takes many mutants (275 of this seed's 3000), so the comparison means something
    }
}

@Suite struct StrictUUIDParseTests {
    /// `UUID(strictString:)` parses by hand: exactly the canonical form, the same id Foundation
    /// parses, for random ids and for mutants of them.
    @Test func agreesWithFoundationOnTheCanonicalFormOnly() {
        var mutator = ByteMutator(seed: 77)
        for _ in 0..<5000 {
            let id = UUID()
            #expect(UUID(strictString: id.uuidString) == id)
            #expect(UUID(strictString: id.uuidString.lowercased()) == nil)
            let text = String(decoding: mutator.mutate(Array(id.uuidString.utf8), tokens: [Array("-".utf8), Array("a".utf8), Array("G".utf8)]), as: UTF8.self)
            let expected = UUID.isCanonicalString(text) ? UUID(uuidString: text) : nil
            #expect(UUID(strictString: text) == expected, "\(text.debugDescription)")
        }
        for text in ["", "E621E1F8-C36C-495A-93FC-0C247A3E6E5", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F0", "E621E1F8C36C-495A-93FC-0C247A3E6E5F0",
                     "E621E1F8-C36C-495A-93FC-0C247A3E6E5\u{0}", "E621E1F8-C36C-495A-93FC-0C247A3E6E5É"] {
            #expect(UUID(strictString: text) == nil, "\(text.debugDescription)")
        }
    }
}
