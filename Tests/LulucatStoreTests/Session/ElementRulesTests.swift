// The element rules every engine shares (ElementCodec.check): an unknown element that claims a
// known kind is refused by the session the same way on the snapshot, journal and SQLite engines,
// and nothing already on the page changes; a kind this version does not know is kept byte for byte.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
@testable import LulucatStoreSQLite
import LulucatStoreTesting

@Suite struct ElementRulesTests {
    init() { Library.enableSQLiteEngine() }
    @Test(arguments: [EngineKind.snapshot, .journal, .sqlite])
    func anUnknownElementUnderAKnownKindIsRefusedOnEveryEngine(_ engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Rules", engine: engine)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        let stroke = sampleStroke(40, seed: 1)
        try await session.append(stroke, to: page)
        let newer = try UnknownElement(kind: 200, payload: Data((0..<30).map { UInt8($0) }))
        try await session.append([.unknown(newer)], to: page)
        try await session.save()
        for kind in [PageFile.Kind.stroke, PageFile.Kind.image] {
            var payload = Data(count: 24)
            payload[0] = kind
            let fake = Element.unknown(try UnknownElement(kind: kind, payload: payload))
            for change in [PageChange.append([fake]), .replace(stroke.id, with: [fake])] {
                await #expect(throws: StoreError.self) { try await session.apply([change], to: page) }
            }
            await #expect(throws: StoreError.self) { try await session.append([.stroke(sampleStroke(5, seed: 2)), fake], to: page) }
        }
        #expect(try await session.content(of: page).elements == [.stroke(stroke), .unknown(newer)])
        try await session.close()
        let again = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        #expect(try await again.content(of: page).elements == [.stroke(stroke), .unknown(newer)])
        await again.abandon()
    }
}
