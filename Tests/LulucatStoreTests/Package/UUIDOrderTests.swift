// The one UUID order the store lists IDs in (Package/UUIDOrder.swift): by the upper-case string
// form, the same order the former per-site `sorted { $0.uuidString < $1.uuidString }` gave.

import Foundation
import Testing
@testable import LulucatStore

@Suite struct UUIDOrderTests {
    @Test func ordersByTheUpperCaseStringOverSetsArraysAndKeys() {
        var random = SystemRandomNumberGenerator()
        let ids = (0..<200).map { _ in UUID() } + [UUID(uuidString: "00000000-0000-0000-0000-000000000000")!,
                                                    UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!,
                                                    UUID(uuidString: "0000000a-0000-0000-0000-000000000000")!,
                                                    UUID(uuidString: "00000009-0000-0000-0000-000000000000")!]
        let expected = ids.map(\.uuidString).sorted()
        #expect(ids.shuffled(using: &random).sortedByUUIDString().map(\.uuidString) == expected)
        #expect(Set(ids).sortedByUUIDString().map(\.uuidString) == expected)
        #expect(Dictionary(uniqueKeysWithValues: ids.map { ($0, 0) }).keys.sortedByUUIDString().map(\.uuidString) == expected)
        // Digits before letters in the string form: ...9 sorts before ...A.
        let nine = UUID(uuidString: "00000009-0000-0000-0000-000000000000")!
        let ten = UUID(uuidString: "0000000A-0000-0000-0000-000000000000")!
        #expect([ten, nine].sortedByUUIDString() == [nine, ten])
        #expect([UUID]().sortedByUUIDString().isEmpty)
    }

    /// The paths made from ids in one allocation (`DocumentPackage.joined`) are the ones the
    /// string form makes: package folders, their names, cover thumbnails, over random ids and the
    /// extremes of every hexadecimal digit.
    @Test func pathsMadeFromIdsSpellTheStringForm() {
        let ids = (0..<500).map { _ in UUID() } + ["00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
                                                    "01234567-89AB-CDEF-0123-456789ABCDEF"]
            .map { UUID(uuidString: $0)! }
        for id in ids {
            #expect(DocumentPackage.directoryName(id) == id.uuidString + ".lnote")
            for root in ["/tmp/lib", "/", "", "/Bibliothèque/été 😀"] {
                let package = DocumentPackage(id: id, libraryRoot: root)
                #expect(package.path == root + "/" + id.uuidString + ".lnote")
                #expect(package.thumbnailPath(id) == package.path + "/thumbnails/" + id.uuidString + ".jpg")
            }
            var bytes = [UInt8](repeating: 0, count: 36)
            bytes.withUnsafeMutableBufferPointer { id.writeCanonical(to: $0.baseAddress!) }
            #expect(bytes == Array(id.uuidString.utf8))
            #expect(DocumentPackage.id(fromDirectoryName: id.uuidString + ".lnote") == id)
        }
        for name in ["", ".lnote", "x.lnote", ids[0].uuidString, ids[0].uuidString + ".lnotes", ids[0].uuidString + ".lnot",
                     ids[0].uuidString.lowercased() + ".lnote", ids[0].uuidString + ".LNOTE", " " + ids[0].uuidString + ".lnote"] {
            #expect(DocumentPackage.id(fromDirectoryName: name) == nil, "\(name)")
        }
    }
}
