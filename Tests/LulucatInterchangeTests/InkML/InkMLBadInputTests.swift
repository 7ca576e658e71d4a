// Malformed, hostile and absurd InkML: a typed error with a place, never a crash.

import Foundation
import Testing
import LulucatInk
@testable import LulucatInterchange

func inkmlError(_ text: String, limits: InkMLReader.Limits = .init()) -> InkMLError? {
    do { _ = try InkMLReader.read(Data(text.utf8), limits: limits); return nil } catch { return error }
}

@Suite struct InkMLBadInputTests {
    @Test func malformedXMLHasALine() {
        let e = inkmlError("<ink xmlns=\"http://www.w3.org/2003/InkML\">\n<trace>1 2</trace>\n<trace>3 4</ink>")
        #expect(e?.kind == .malformedXML)
        #expect(e?.line == 3)
        #expect(inkmlError("")?.kind == .malformedXML)
        #expect(inkmlError("not xml at all")?.kind == .malformedXML)
    }

    @Test func notInkML() {
        let e = inkmlError("<svg xmlns=\"http://www.w3.org/2000/svg\"><path d=\"M0 0\"/></svg>")
        #expect(e?.kind == .notInkML)
    }

    @Test func entityDeclarationsAreRefused() {
        let bomb = """
            <?xml version="1.0"?>
            <!DOCTYPE ink [<!ENTITY a "1 2, 1 2, 1 2, 1 2"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>
            <ink><trace>&b;</trace></ink>
            """
        #expect(inkmlError(bomb)?.kind == .unsupported)
    }

    /// Fuzz finding (fuzz/regressions/inkml/crash-7633...): `<?nl:c?>` crashed the process inside
    /// XMLParser (libxml2 reports the missing data as a null pointer). Attribute lists with
    /// #IMPLIED values and notations crash it the same way; all are refused before parsing, also
    /// in UTF-16 files, which the entity check used to miss.
    @Test func markupTheXMLParserCrashesOnIsRefused() {
        for text in ["<ink><?a?><trace>1 2</trace></ink>", "<?nl:c?> ", "<ink><trace>1 2</trace></ink>\n<?x?>",
                     "<!DOCTYPE ink [<!ATTLIST ink a CDATA #IMPLIED>]><ink/>",
                     "<!DOCTYPE ink [<!NOTATION n SYSTEM \"x\">]><ink/>", "<!DOCTYPE ink [<!NOTATION n PUBLIC \"x\">]><ink/>"] {
            #expect(inkmlError(text)?.kind == .unsupported, "\(text)")
        }
        #expect(inkmlError("<ink>\n  <?a?></ink>")?.line == 2)
        #expect(inkmlError("<ink>\n  <?a?></ink>")?.column == 3)
        // Instructions with data, even empty, and element declarations are read as before.
        for text in ["<ink><?a ?><trace>1 2</trace></ink>", "<?xml version=\"1.0\"?><ink><?pi data?><trace>1 2</trace></ink>",
                     "<!DOCTYPE ink [<!ELEMENT ink ANY>]><ink><trace>1 2</trace></ink>", "<ink><trace><![CDATA[1 2]]></trace><!--<?a ?>--></ink>"] {
            #expect(inkmlError(text) == nil, "\(text)")
        }
        // The same declarations in UTF-16.
        for text in ["<!DOCTYPE ink [<!ENTITY a \"1 2\">]><ink><trace>&a;</trace></ink>", "<ink><?a?></ink>"] {
            var data = Data([0xFF, 0xFE])
            data.append(text.data(using: .utf16LittleEndian)!)
            #expect(throws: InkMLError.self) { try InkMLReader.read(data) }
            do { _ = try InkMLReader.read(data) } catch { #expect(error.kind == .unsupported, "\(text)") }
        }
        #expect(XMLTree.dataLessProcessingInstruction(in: Data("<?<?a?>".utf8)) == 2)
        #expect(XMLTree.dataLessProcessingInstruction(in: Data("<??><? a?><?a b?>".utf8)) == nil)
    }

    @Test func badTraceValuesNameTheirPlace() {
        let e = inkmlError(ptInk("<trace contextRef=\"#c\">1 2,\n 3 4,\n 5 x</trace>"))
        #expect(e?.kind == .invalidTrace)
        #expect(e?.line == 5)
        #expect(e?.detail.contains("\"x\"") == true)
        // Too many values: up to 8 past the channels are dropped with a warning (real CROHME files
        // write X Y T under an X Y format: InkMLProducerQuirksTests); past that, refused.
        #expect(inkmlError(ptInk(##"<trace contextRef="#c">1 2 3 4 5 6 7 8 9 10 11</trace>"##))?.kind == .invalidTrace)
        #expect(inkmlError(ptInk(##"<trace contextRef="#c">1 2, 3</trace>"##))?.kind == .invalidTrace)  // too few
        #expect(inkmlError(ptInk(##"<trace contextRef="#c">'1 2</trace>"##))?.kind == .invalidTrace)    // nothing to add to
        #expect(inkmlError(ptInk(##"<trace contextRef="#c">1 2,, 3 4</trace>"##))?.kind == .invalidTrace)
        #expect(inkmlError(ptInk(##"<trace contextRef="#c">1 2, +3 4</trace>"##))?.kind == .invalidTrace)
        #expect(inkmlError(ptInk(##"<trace contextRef="#c">1e 2</trace>"##))?.kind == .invalidTrace)
        #expect(inkmlError(ptInk(##"<trace contextRef="#c">1e999 2</trace>"##))?.kind == .invalidTrace)
        #expect(inkmlError(ptInk(##"<trace contextRef="#c">? 2</trace>"##))?.kind == .invalidTrace)     // no X at all
    }

    @Test func badReferences() {
        let missing = inkmlError(ptInk("<trace contextRef=\"#nowhere\">1 2</trace>"))
        #expect(missing?.kind == .invalidReference)
        #expect(missing?.line == 3)
        #expect(inkmlError(ptInk(##"<trace contextRef="other.inkml#c">1 2</trace>"##))?.kind == .unsupported)
        #expect(inkmlError(ptInk(##"<trace brushRef="#c">1 2</trace>"##))?.kind == .invalidReference) // a context, not a brush
        // A context that refers to itself does not loop.
        #expect(inkmlError(##"<ink><definitions><context xml:id="x" contextRef="#x"/></definitions><trace contextRef="#x">1 2</trace></ink>"##) == nil)
        #expect(inkmlError(ptInk(##"<trace contextRef="#c">1 2</trace>"##, channels: ##"<channel name="A"/><channel name="B"/>"##))?.kind == .invalidTrace)
        #expect(inkmlError(ptInk(##"<trace contextRef="#c">1 2</trace>"##, channels: ##"<channel name="X" type="complex"/><channel name="Y"/>"##))?.kind == .invalidTrace)
    }

    @Test func bounds() {
        var limits = InkMLReader.Limits()
        limits.maxPoints = 5
        let e = inkmlError(ptInk(##"<trace contextRef="#c">1 2, 1 2, 1 2</trace><trace contextRef="#c">1 2, 1 2, 1 2</trace>"##), limits: limits)
        #expect(e?.kind == .tooLarge)
        limits = InkMLReader.Limits()
        limits.maxFileBytes = 100
        #expect(inkmlError(ptInk(""), limits: limits)?.kind == .tooLarge)
        limits = InkMLReader.Limits()
        limits.maxElements = 10
        #expect(inkmlError("<ink>" + String(repeating: "<trace>1 2</trace>", count: 20) + "</ink>", limits: limits)?.kind == .tooLarge)
    }

    @Test func deepNestingIsRefusedNotOverflowed() {
        let depth = 100_000
        let text = "<ink>" + String(repeating: "<traceGroup>", count: depth) + "<trace>1 2</trace>"
            + String(repeating: "</traceGroup>", count: depth) + "</ink>"
        let e = inkmlError(text)
        #expect(e?.kind == .malformedXML || e?.kind == .tooLarge, "\(String(describing: e))")
    }

    @Test func longReferenceChainsAreRefusedNotOverflowed() {
        let n = 50_000
        var contexts = ""
        for i in 0..<n { contexts += "<context xml:id=\"c\(i)\" contextRef=\"#c\(i + 1)\"/>" }
        let e = inkmlError("<ink><definitions>\(contexts)<context xml:id=\"c\(n)\"/></definitions><trace contextRef=\"#c0\">1 2</trace></ink>")
        #expect(e?.kind == .tooLarge)
        var brushes = ""
        for i in 0..<n { brushes += "<brush xml:id=\"b\(i)\" brushRef=\"#b\(i + 1)\"/>" }
        #expect(inkmlError("<ink><definitions>\(brushes)</definitions><trace brushRef=\"#b0\">1 2</trace></ink>")?.kind == .tooLarge)
        // A short chain is fine.
        #expect(inkmlError(##"<ink><definitions><context xml:id="a" contextRef="#b"/><context xml:id="b"/></definitions><trace contextRef="#a">1 2</trace></ink>"##) == nil)
    }

    /// Groups whose views name each other twice over: without care, 2^depth walks.
    @Test func viewsOfViewsDoNotMultiply() throws {
        var defs = #"<traceGroup xml:id="g0"><trace>1 2</trace></traceGroup>"#
        for i in 1...100 {
            defs += ##"<traceGroup xml:id="g\##(i)"><traceView traceDataRef="#g\##(i - 1)"/><traceView traceDataRef="#g\##(i - 1)"/></traceGroup>"##
        }
        let doc = try InkMLReader.read(Data("<ink><definitions>\(defs)</definitions><traceView traceDataRef=\"#g100\"/><traceView traceDataRef=\"#g100\"/></ink>".utf8))
        #expect(doc.strokes.count == 1)
    }

    @Test func warningsAreCapped() throws {
        let channels = (0..<300).map { "<channel name=\"U\($0)\"/>" }.joined()
        let values = (0..<300).map { _ in "0" }.joined(separator: " ")
        let doc = try InkMLReader.read(Data("<ink><traceFormat><channel name=\"X\" units=\"pt\"/><channel name=\"Y\" units=\"pt\"/>\(channels)</traceFormat><trace>1 2 \(values)</trace></ink>".utf8))
        #expect(doc.warnings.count == 101)
        #expect(doc.warnings.last == "more warnings were not listed")
        #expect(xy(doc) == [[10, 20]])
    }

    /// Every prefix of a valid file, and every single-byte change of it, reads or fails with a
    /// typed error: no crash, no other error type.
    @Test func truncationsAndCorruptionsNeverCrash() throws {
        let page = PageContent(elements: [.stroke(Stroke(samples: [Sample(x: 1, y: 2, radius: 3, pressure: 4, time: 0),
                                                                   Sample(x: -5, y: 6, radius: 7, pressure: 8, time: 9)]))])
        let full = [UInt8](InkMLWriter.write(page))
        for length in stride(from: 0, to: full.count, by: 3) {
            _ = try? InkMLReader.read(Data(full[..<length]))
        }
        let replacements: [UInt8] = Array("<>\"'&,-!#*?. 9TxF".utf8) + [0, 0xFF]
        for offset in stride(from: 0, to: full.count, by: 2) {
            var bad = full
            bad[offset] = replacements[offset % replacements.count]
            do { _ = try InkMLReader.read(Data(bad)) } catch {
                // InkMLReader.read throws only InkMLError (typed throws); reaching here is the check.
                #expect(!error.description.isEmpty)
            }
        }
    }
}

@Suite struct InkMLEncodingTests {
    @Test func utf16WithByteOrderMarkIsRead() throws {
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><ink><trace>1 2</trace></ink>"
        var data = Data([0xFF, 0xFE])
        data.append(text.data(using: .utf16LittleEndian)!)
        let doc = try InkMLReader.read(data)
        #expect(xy(doc) == [[10, 20]])
    }

    @Test func bytesThatAreNotUTF8AreRefused() {
        var data = Data("<ink><trace>1 2</trace><tr".utf8)
        data.append(0xFF)
        data.append(contentsOf: Array("ce>3 4</trace></ink>".utf8))
        #expect(throws: InkMLError.self) { try InkMLReader.read(data) }
        // Latin-1 is read when declared (transcoded to UTF-8 before parsing; docs/inkml.md).
        let latin1 = Data("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><ink><annotation>caf\u{E9}</annotation></ink>".data(using: .isoLatin1)!)
        #expect((try? InkMLReader.read(latin1)) != nil)
        let undeclared = Data("<ink><annotation>caf\u{E9}</annotation></ink>".data(using: .isoLatin1)!)
        #expect((try? InkMLReader.read(undeclared)) == nil)
    }
}
