// Every case of every public error of LulucatInterchange and LulucatRender, as an app shows it: a
// sentence without the reader's detail, and a recovery suggestion (`userFacingProblems`). The kinds
// of ArchiveError and InkMLError are walked through `allCases`; RenderError's cases are named by a
// switch without `default`, so a new case stops the build until it is named, and fails the test
// until a value of it is listed.

import Foundation
import LulucatRender
import LulucatStore
import LulucatStoreTesting
import Testing
@testable import LulucatInterchange

@Suite struct EveryInterchangeErrorTests {
    private func check(_ e: any LocalizedError, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(userFacingProblems(e) == [], "\(e)", sourceLocation: sourceLocation)
    }

    static let renderErrors: [RenderError] = [
        .invalidScale(.nan), .imageTooLarge(width: 20_000, height: 20_000), .corruptImage(format: "PNG", "bad CRC"),
        .unsupportedImage(format: "PNG", "16-bit"), .unknownImageFormat, .encodingFailed(format: "JPEG", "libjpeg said no"),
    ]

    static func name(_ e: RenderError) -> String {
        switch e {
        case .invalidScale: "invalidScale"
        case .imageTooLarge: "imageTooLarge"
        case .corruptImage: "corruptImage"
        case .unsupportedImage: "unsupportedImage"
        case .unknownImageFormat: "unknownImageFormat"
        case .encodingFailed: "encodingFailed"
        }
    }
    static let renderCaseCount = 6

    @Test func everyCaseIsASentenceWithARecovery() {
        for kind in ArchiveError.Kind.allCases {
            check(ArchiveError(kind, "technical detail"))
            check(ArchiveError(kind, entry: "pages/0A1B2C3D-0000-4000-8000-000000000001.content", "technical detail"))
        }
        for kind in InkMLError.Kind.allCases {
            check(InkMLError(kind, "technical detail"))
            check(InkMLError(kind, line: 3, column: 9, "technical detail"))
        }
        // An import refused by the archive's reader says the archive's own sentence.
        for kind in ArchiveError.Kind.allCases {
            let archive = ArchiveError(kind, entry: "pages/x.content", "technical detail")
            let refused = StoreError.importRefused(reason: archive.description, cause: archive)
            check(refused)
            #expect(refused.localizedDescription == "The file could not be imported. \(archive.localizedDescription) Nothing was added.")
            #expect(refused.recoverySuggestion == archive.recoverySuggestion)
        }
        #expect(Set(Self.renderErrors.map(Self.name)).count == Self.renderCaseCount)
        for e in Self.renderErrors { check(e) }
    }
}
