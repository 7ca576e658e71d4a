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
}
