// PageContent.apply with many elements in one change (looked up in one pass instead of a scan
// each): the same result and the same errors as the same change applied element by element, and
// the scan cost a replay counts.

import Foundation
import Testing
@testable import LulucatInk
import LulucatHandwriting

@Suite struct PageChangeScanTests {
    static func stroke(_ i: Int, x: Int32 = 0) -> Element {
        .stroke(Stroke(id: UUID(), ink: Ink(tool: .pen, color: RGBA8(r: 0, g: 0, b: 0, a: 255), width: 10),
                       samples: [Sample(x: x + Int32(i), y: 1, radius: 2, pressure: 3, time: 0)]))
    }

    static func moved(_ e: Element, by dx: Int32) -> Element {
        guard case .stroke(var s) = e else { return e }
        s.samples[0].x += dx
        return .stroke(s)
    }

    /// A randomized update of n elements (n on both sides of the one-pass threshold) gives what n
    /// updates of one element give, and the page is unchanged when one named element is missing.
    @Test func aLargeUpdateIsTheSameAsManySmallOnes() throws {
        var rng = SeededRandom(seed: 21)
        for n in [1, 3, PageChange.scansPerChange, PageChange.scansPerChange + 1, 40, 300] {
            var page = PageContent(elements: (0..<400).map { Self.stroke($0) })
            let chosen = page.elements.shuffled(using: &rng).prefix(n).map { Self.moved($0, by: 1000) }
            var oneByOne = page
            for e in chosen { try oneByOne.apply(.update([e])) }
            let before = page
            var missing = chosen
            missing.insert(Self.stroke(9999), at: rng.int(0...missing.count))
            #expect(throws: PageChangeError("update names element \(missing.first { !before.elements.map(\.id).contains($0.id) }!.id), which the page does not have")) {
                try page.apply(.update(missing))
            }
            #expect(page == before)
            if n > 1 {
                #expect(throws: PageChangeError("update names an element twice")) { try page.apply(.update(chosen + [chosen[0]])) }
                #expect(page == before)
            }
            try page.apply(.update(chosen))
            #expect(page == oneByOne)
        }
    }

    /// Appends and replacements of many elements refuse an id already on the page (naming the
    /// first such id in their order) and repeated ids, exactly as small ones do.
    @Test func manyNewElementsAreCheckedAgainstThePage() throws {
        for n in [2, PageChange.scansPerChange, PageChange.scansPerChange + 1, 100] {
            var page = PageContent(elements: (0..<200).map { Self.stroke($0) })
            let before = page
            var new = (0..<n).map { Self.stroke(1000 + $0) }
            #expect(throws: PageChangeError("new elements repeat an id")) { try page.apply(.append(new + [new[0]])) }
            let clash = [new[0], before.elements[150], before.elements[3]] + new.dropFirst()
            #expect(throws: PageChangeError("element \(before.elements[150].id) is already on the page")) { try page.apply(.append(clash)) }
            #expect(throws: PageChangeError("element \(before.elements[150].id) is already on the page")) {
                try page.apply(.replace(before.elements[10].id, with: clash))
            }
            #expect(page == before)
            // A replacement may reuse the id it replaces.
            new[0] = Self.moved(before.elements[10], by: 5)
            try page.apply(.replace(before.elements[10].id, with: new))
            #expect(page.elements.count == 200 - 1 + n)
            #expect(Array(page.elements[10..<(10 + n)]) == new)
            try page.apply(.append((0..<n).map { Self.stroke(5000 + $0) }))
            #expect(page.elements.count == 200 - 1 + 2 * n)
        }
    }

    /// The cost a replay counts: an upper bound of the passes `apply` makes, linear in the page
    /// for a change of many elements.
    @Test func scanCostsAreLinearInThePageForEveryChange() {
        let ids = (0..<100).map { _ in UUID() }
        let few = Array(ids.prefix(3))
        let elements = (0..<100).map { Self.stroke($0) }
        #expect(PageChange.move(few, to: .front).scanCost(onPageOf: 1000) == 2003)
        #expect(PageChange.delete(ids).scanCost(onPageOf: 1000) == 1100)
        #expect(PageChange.update(Array(elements.prefix(3))).scanCost(onPageOf: 1000) == 3003)
        #expect(PageChange.update(elements).scanCost(onPageOf: 1000) == 1200)
        #expect(PageChange.replace(ids[0], with: elements).scanCost(onPageOf: 1000) == 1000 + 1100 + 100)
        #expect(PageChange.append(elements).scanCost(onPageOf: 1000) == 1200)
        #expect(PageChange.resize(.letter).scanCost(onPageOf: 1000) == 1)
    }
}
