// `lnote-dev without-thumbnails`: a session's saves in a process that has not enabled thumbnails
// (main skips `Library.enableThumbnails()` for this command), for LnoteCLITests'
// EngineNotAvailableTests: the document saves whole and no thumbnail is written. Hidden from
// `help`: a test harness's helper.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreThumbnails

struct WithoutThumbnailsCommand: Command {
    static let name = "without-thumbnails"
    static let abstract = "Create a document, save a stroke on its page and close it without a thumbnail renderer; print what was written."
    static let usage = "lnote-dev without-thumbnails LIBRARY"

    var library: String

    init(arguments: [String]) throws {
        let a = try Arguments(arguments, valued: [], flags: [])
        guard a.positionals.count == 1 else { throw UsageError("needs LIBRARY") }
        library = a.positionals[0]
    }

    func run() async throws {
        let lib = Library(root: library)
        print("available: thumbnails \(ThumbnailWriter.isAvailable)")
        let package = try await lib.createDocument(title: "No previews")
        // The default options ask for thumbnails: a build without a renderer writes none.
        let session = try await lib.open(package.id)
        guard let page = await session.pageIDs().first else { throw UsageError("the new document has no page") }
        var samples: [Sample] = []
        for i in 0..<20 { samples.append(Sample(x: Int32(100 + i * 11), y: 300, radius: 12, pressure: 500, time: UInt32(i * 4))) }
        try await session.append(Stroke(ink: Ink(tool: .pen), samples: samples), to: page)
        try await session.close()
        print("document: \(package.id.uuidString)")
        let thumbnails = (try? FileManager.default.contentsOfDirectory(atPath: package.thumbnailsPath)) ?? []
        print("thumbnails written: \(thumbnails.count)")
        let rebuilt = ThumbnailWriter.rebuild(package)
        print("rebuild: \(rebuilt.map { "\($0.severity.rawValue) \($0.message)" }.joined(separator: " / "))")
    }
}
