// Every public error of LulucatInterchange and LulucatRender is a LocalizedError: an app's
// `localizedDescription` is a sentence in plain words (never Foundation's generic "could not be
// completed", never a type name or the reader's detail), with a recovery suggestion.

import Foundation
import LulucatRender
import Testing
@testable import LulucatInterchange

/// Checks what an app shows of `error`: its `errorDescription` is its `localizedDescription`, a
/// sentence (a capital, a period) without type names or the technical detail; and a recovery suggestion.
private func expectReadable(_ error: any LocalizedError, detail: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    let text = (error as any Error).localizedDescription
    #expect(text == error.errorDescription, "\(error)", sourceLocation: sourceLocation)
    #expect(!text.isEmpty && text.hasSuffix(".") && text.first!.isUppercase, "\(text)", sourceLocation: sourceLocation)
    #expect(!text.contains("could not be completed"), "\(text)", sourceLocation: sourceLocation)
    for word in ["Error(", "Error.", "Error ", "errno", "zlib", "CRC", "zip64"] + (detail.map { [$0] } ?? []) {
        #expect(!text.contains(word), "\(text) contains \(word)", sourceLocation: sourceLocation)
    }
    let s = error.recoverySuggestion
    #expect(s.map { !$0.isEmpty && $0.hasSuffix(".") } == true, "\(error): \(s ?? "no suggestion")", sourceLocation: sourceLocation)
}

@Suite struct InterchangeLocalizedErrorsTests {
    @Test func archiveErrors() {
        let kinds: [ArchiveError.Kind] = [
            .notAnArchive, .truncated, .malformed, .unsafeName, .symlink, .specialFile, .duplicateName, .encrypted,
            .unsupportedMethod, .unsupportedFeature, .outsideLayout, .sizeMismatch, .checksumMismatch, .limitExceeded, .tooLarge, .io,
        ]
        for kind in kinds {
            expectReadable(ArchiveError(kind, "technical detail"), detail: "technical detail")
            expectReadable(ArchiveError(kind, entry: "pages/x.page", "technical detail"), detail: "pages/x.page")
        }
        // A real refusal, as an app meets it.
        do throws(ArchiveError) { _ = try ZipReader(Data([1, 2, 3])) } catch { expectReadable(error) }
    }

    @Test func inkMLErrors() {
        let kinds: [InkMLError.Kind] = [.malformedXML, .notInkML, .tooLarge, .invalidTrace, .invalidReference, .unsupported]
        for kind in kinds {
            expectReadable(InkMLError(kind, "technical detail"), detail: "technical detail")
            expectReadable(InkMLError(kind, line: 3, column: 9, "technical detail"), detail: "technical detail")
        }
        #expect(InkMLError(.invalidTrace, line: 3, column: 9, "x").localizedDescription.contains("line 3"))
    }

    @Test func renderErrors() {
        let all: [RenderError] = [
            .invalidScale(.nan), .imageTooLarge(width: 20_000, height: 20_000), .corruptImage(format: "PNG", "technical detail"),
            .unsupportedImage(format: "PNG", "technical detail"), .unknownImageFormat, .encodingFailed(format: "JPEG", "technical detail"),
        ]
        for e in all { expectReadable(e, detail: "technical detail") }
    }
}
