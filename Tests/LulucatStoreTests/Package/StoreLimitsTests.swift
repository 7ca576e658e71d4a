// Times from the clock are checked before they are written (a clock past year 9999 makes a
// document.json no reader can parse).

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct StoreLimitsTests {
    /// 10000-01-01T00:00:00Z.
    static let year10000 = Date(timeIntervalSince1970: 253_402_300_800)

    @Test func theStorableTimesAreThoseTheJSONHolds() throws {
        let last = Date(timeIntervalSince1970: 253_402_300_799.999)
        #expect(try Date.storeNow(clock: last) == last)
        #expect(ISO8601.date(ISO8601.string(last)) == last, "the last time writes and reads back")
        #expect(ISO8601.date(ISO8601.string(Self.year10000)) == nil, "what the check keeps out: a five-digit year does not read")
        for bad in [Self.year10000, Date(timeIntervalSince1970: 1e15), Date(timeIntervalSince1970: -1)] {
            #expect(throws: StoreError.self) { try Date.storeNow(clock: bad) }
        }
    }

    @Test func aClockPastTheStorableTimesWritesNothing() async throws {
        let folder = TemporaryFolder()
        let library = Library(root: folder.path + "/lib")
        let package = try library.createDocument(title: "Before")
        let page = try DocumentMetadata.read(package).pages[0].id
        let before = try Data(contentsOf: URL(fileURLWithPath: package.documentPath))
        try await StoreClock.$reading.withValue(Self.year10000) {
            // new: refused, no document made.
            #expect { try library.createDocument(title: "From the future") } throws: { e in
                guard case .invalidArgument(let why) = e as? StoreError else { return false }
                return why.contains("system clock") && why.contains("nothing was written")
            }
            #expect(try library.list().count == 1)
            // rename, a page, a stroke: each refused, the document as it was.
            let session = try await library.open(package.id)
            await #expect(throws: StoreError.self) { try await session.rename(to: "After") }
            await #expect(throws: StoreError.self) { try await session.addPage() }
            await #expect(throws: StoreError.self) { try await session.append(sampleStroke(), to: page) }
            #expect(await session.title == "Before")
            #expect(await session.pageIDs() == [page])
            #expect(try await session.content(of: page).elements.isEmpty)
            try await session.close()
            #expect(throws: StoreError.self) { try library.duplicate(package.id) }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: package.documentPath)) == before)
        #expect(try library.list().map(\.title) == ["Before"])
        #expect(DocumentVerifier().verify(package).filter { $0.severity == .error }.isEmpty)
        // With the clock right again, the same edits go through.
        let session = try await library.open(package.id)
        try await session.rename(to: "After")
        try await session.close()
        #expect(try library.list().map(\.title) == ["After"])
    }
}
