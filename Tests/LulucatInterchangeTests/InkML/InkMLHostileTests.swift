// Hostile InkML (issue 18 §1): encodings the parser could read differently from our checks,
// numbers that are not numbers, and files past libxml2's default size limit.

import Foundation
import Testing
import LulucatInk
@testable import LulucatInterchange

@Suite struct InkMLHostileTests {
    static func read(_ data: Data) -> Result<InkMLDocument, InkMLError> {
        Result { () throws(InkMLError) in try InkMLReader.read(data) }
    }

    static func kind(_ data: Data) -> InkMLError.Kind? {
        if case .failure(let e) = read(data) { return e.kind }
        return nil
    }

    /// Each of these crashed `lnote import` inside FoundationXML (or slipped past the refusal):
    /// the encoding is refused before the parser sees a byte.
    @Test func encodingsWithoutAByteOrderMarkAreRefused() {
        let pi = "<?a?><ink/>"
        let cases: [(String, Data)] = [
            ("UTF-16LE", pi.data(using: .utf16LittleEndian)!),
            ("UTF-16BE", pi.data(using: .utf16BigEndian)!),
            ("UTF-32LE", pi.data(using: .utf32LittleEndian)!),
            ("UTF-32BE", pi.data(using: .utf32BigEndian)!),
            ("UTF-32LE BOM", Data([0xFF, 0xFE, 0, 0]) + pi.data(using: .utf32LittleEndian)!),
            ("UTF-32BE BOM", Data([0, 0, 0xFE, 0xFF]) + pi.data(using: .utf32BigEndian)!),
            ("NOTATION", "<!DOCTYPE ink [<!NOTATION n SYSTEM \"x\">]><ink/>".data(using: .utf16LittleEndian)!),
            ("ENTITY", "<!DOCTYPE ink [<!ENTITY a \"1 2\">]><ink><trace>&a;</trace></ink>".data(using: .utf16BigEndian)!),
            ("ATTLIST", "<!DOCTYPE ink [<!ATTLIST ink a CDATA #IMPLIED>]><ink/>".data(using: .utf16LittleEndian)!),
            ("EBCDIC", Data([0x4C, 0x6F, 0xA7, 0x94, 0x40])),
        ]
        #expect(cases[0].1.count == 22)
        for (name, data) in cases {
            #expect(Self.kind(data) == .unsupported, "\(name)")
        }
        // A zero byte anywhere (an odd UTF-16 file whose first bytes look like UTF-8).
        #expect(Self.kind(Data(" <ink/>".utf8) + Data([0]) + Data("<?a?>".utf8)) == .malformedXML)
        #expect(Self.kind(Data(" \n".utf8) + "<?a?><ink/>".data(using: .utf16LittleEndian)!) != nil)
    }

    /// The declared encoding could switch libxml2's decoder after our check: anything but UTF-8,
    /// ASCII and Latin-1 is refused, and the declaration the parser sees always says UTF-8.
    @Test func declaredEncodingsAreReadAsWeCheckedThem() throws {
        for enc in ["UCS-4", "IBM037", "UTF-32", "ebcdic-cp-us", "Shift_JIS"] {
            let data = Data("<?xml version=\"1.0\" encoding=\"\(enc)\"?><ink><trace>1 2</trace></ink>".utf8)
            #expect(Self.kind(data) == .unsupported, "\(enc)")
        }
        #expect(Self.kind(Data("<?xml version=\"1.0\" encoding=\"UCS-4\"?>".utf8) + "<?a?><ink/>".data(using: .utf32BigEndian)!) != nil)
        // UTF-16 declared on bytes that are plainly UTF-8: read as UTF-8.
        let mislabelled = try InkMLReader.read(Data("<?xml version='1.0' encoding = 'UTF-16' ?>\n<ink><trace>1 2, 3 4</trace></ink>".utf8))
        #expect(mislabelled.sampleCount == 2)
        // Latin-1: an é in a brush id is a Latin-1 byte, transcoded.
        var latin1 = Data("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<ink><definitions><brush xml:id=\"b".utf8)
        latin1.append(0xE9)
        latin1.append(contentsOf: Array("\"/></definitions><trace brushRef=\"#b".utf8))
        latin1.append(0xE9)
        latin1.append(contentsOf: Array("\">1 2</trace></ink>".utf8))
        let l = try InkMLReader.read(latin1)
        #expect(l.sampleCount == 1)
        // The error's line is still the file's line: the declaration keeps its line breaks.
        let e = Self.kind(Data("<?xml version=\"1.0\"\n encoding=\"UTF-8\"?>\n<ink>\n<trace>1 2</trace>\n<trace>x</trace></ink>".utf8))
        #expect(e == .invalidTrace)
        if case .failure(let err) = Self.read(Data("<?xml version=\"1.0\"\n encoding=\"UTF-8\"?>\n<ink>\n<trace>1 2</trace>\n<trac></ink>".utf8)) {
            #expect(err.line == 5, "\(err)")
        } else { Issue.record("a malformed file was read") }
        // Invalid UTF-8 without a Latin-1 declaration, and a declaration that never ends.
        #expect(Self.kind(Data([0x3C, 0x69, 0x6E, 0x6B, 0xFF, 0x2F, 0x3E])) == .malformedXML)
        #expect(Self.kind(Data(("<?xml version=\"1.0\" " + String(repeating: " ", count: 2000) + "?><ink/>").utf8)) == .malformedXML)
        // UTF-16 with a byte order mark is still read.
        var bom = Data([0xFE, 0xFF])
        bom.append("<?xml version=\"1.0\" encoding=\"UTF-16\"?><ink><trace>1 2, 3 4</trace></ink>".data(using: .utf16BigEndian)!)
        #expect(try InkMLReader.read(bom).sampleCount == 2)
    }

    @Test func numbersThatAreNotNumbersNeverTrap() throws {
        for value in ["NaN", "nan", "inf", "-infinity", "1e400", "0x1p3", "", " ", "--1", "1e", "."] {
            let text = """
                <ink><definitions><brush xml:id="b"><brushProperty name="transparency" value="\(value)"/>\
                <brushProperty name="width" value="\(value)"/><brushProperty name="height" value="\(value)"/></brush></definitions>\
                <traceFormat><channel name="X" min="\(value)" max="\(value)"/><channel name="Y" default="\(value)"/>\
                <channel name="F" min="\(value)" max="\(value)"/></traceFormat><trace brushRef="#b">1 2 3, 4 5 6</trace></ink>
                """
            let doc = try InkMLReader.read(Data(text.utf8))
            #expect(doc.strokes.count == 1, "\(value)")
            #expect(doc.strokes[0].ink.color.a == 255, "\(value)")
            #expect(doc.strokes[0].ink.width == Ink().width, "\(value)")
        }
        #expect(InkMLNumber.parse("NaN") == nil)
        #expect(InkMLNumber.parse("1e309") == nil)
        #expect(InkMLNumber.parse(" 1.5e2 ") == 150)
        #expect(InkMLNumber.parse("-.5") == -0.5)
        #expect(InkMLNumber.parse("7.") == 7)
        #expect(InkMLNumber.parse("0x10") == nil)
    }

    @Test func byteSearchFindsTheFirstOccurrence() {
        #expect(XMLTree.offset(of: Array("<!ENTITY".utf8), in: Data("ab<!ENTIT<!ENTITY x".utf8)) == 9)
        #expect(XMLTree.offset(of: Array("abc".utf8), in: Data("ab".utf8)) == nil)
        #expect(XMLTree.offset(of: Array("ab".utf8), in: Data("xxab".utf8)) == 2)
        #expect(XMLTree.offset(of: Array("ab".utf8), in: Data("xxa".utf8)) == nil)
        #expect(XMLTree.offset(of: Array("a".utf8), in: Data()) == nil)
        let slice = Data("zzzab".utf8).dropFirst(2)
        #expect(XMLTree.offset(of: Array("ab".utf8), in: slice) == 1)
    }

    /// libxml2 refuses more than 10 MB handed to it at once; the reader's limit is 256 MiB.
    @Test func filesAboveTenMegabytesImport() throws {
        var text = "<ink><traceFormat><channel name=\"X\" units=\"pt\"/><channel name=\"Y\" units=\"pt\"/></traceFormat>\n"
        let trace = "<trace>" + (0..<1000).map { "\($0 % 500).5 \($0 % 700).5" }.joined(separator: ", ") + "</trace>\n"
        while text.utf8.count < 11_000_000 { text += trace }
        text += "<trace>" + (0..<100_000).map { "\($0 % 500) 1" }.joined(separator: ",") + "</trace>\n"
        text += "</ink>"
        let data = Data(text.utf8)
        #expect(data.count > 10_500_000)
        let doc = try InkMLReader.read(data)
        #expect(doc.strokes.count > 800)
        #expect(doc.strokes.last?.samples.count == 100_000)
    }

    /// Every file under fuzz/regressions/inkml/ that once crashed is there, and is refused or read.
    @Test func regressionFilesAreThere() {
        let names = InterchangeFuzzRegressionTests.inputs("inkml").map(\.0)
        for name in ["utf16le-nobom-pi", "utf16be-nobom-pi", "utf32be-nobom-pi", "utf16le-nobom-notation",
                     "utf16be-nobom-entity", "brush-transparency-nan"] {
            #expect(names.contains(name), "\(name)")
        }
        for (name, bytes) in InterchangeFuzzRegressionTests.inputs("inkml") where name.contains("nobom") || name.contains("declared") {
            #expect(Self.kind(Data(bytes)) != nil, "\(name) is refused")
        }
    }
}
