// The page rule of a merge into a page edited since the read (Merge/PageMerge.swift), tested without
// a disk: the changes it returns are applied to the page as it is now with LulucatInk's own
// `PageContent.apply`, case by case and over randomized pages.

import Foundation
import LulucatInk
import LulucatStoreTesting
import LulucatSyncTesting
import Testing
@testable import LulucatSync

private func stroke(_ seed: Int, id: UUID = UUID()) -> Element {
    var s = makeStroke(seed)
    s.id = id
    return .stroke(s)
}

private func seenOf(_ page: PageContent) -> SeenPage {
    SeenPage(elements: page.elements.map { ($0.id, PageBlob.fingerprint($0)) }, canvas: page.canvasSize)
}

private func applying(_ changes: [PageChange], to page: PageContent) throws -> PageContent {
    var p = page
    for c in changes { try p.apply(c) }
    return p
}

@Suite struct PageMergeTests {
    @Test func withNothingReadThePageBecomesTheMergedOneExactly() throws {
        let a = stroke(1), b = stroke(2), c = stroke(3)
        let current = PageContent(canvasSize: .a4, elements: [a, b])
        let merged = PageContent(canvasSize: .letter, elements: [c, stroke(4, id: a.id)])
        let (changes, edited) = PageMerge.changes(current: current, seen: nil, merged: merged)
        #expect(!edited)
        #expect(try applying(changes, to: current) == merged)
        #expect(PageMerge.changes(current: merged, seen: nil, merged: merged).changes.isEmpty, "nothing to do")
    }

    @Test func editsMadeSinceTheReadWin() throws {
        let a = stroke(1), b = stroke(2), c = stroke(3), d = stroke(4)
        let read = PageContent(canvasSize: .a4, elements: [a, b, c])
        // Since the read, here: b erased, c transformed, e added on top, the canvas resized.
        let c2 = stroke(30, id: c.id), e = stroke(5)
        let current = PageContent(canvasSize: .letter, elements: [a, c2, e])
        // The merge: another device changed a and added d; it still has b and the old c.
        let a2 = stroke(10, id: a.id)
        let merged = PageContent(canvasSize: .a4, elements: [a2, b, c, d])
        let (changes, edited) = PageMerge.changes(current: current, seen: seenOf(read), merged: merged)
        #expect(edited)
        let result = try applying(changes, to: current)
        #expect(result.elements == [a2, c2, d, e], "b stays erased, c keeps its new version, e stays on top")
        #expect(result.canvasSize == .letter, "the resize made here wins")
    }

    @Test func untouchedSinceTheReadTheMergeIsTakenWhole() throws {
        let a = stroke(1), b = stroke(2)
        let read = PageContent(canvasSize: .a4, elements: [a, b])
        let merged = PageContent(canvasSize: .a4, elements: [b, stroke(3), stroke(11, id: a.id)])
        let (changes, edited) = PageMerge.changes(current: read, seen: seenOf(read), merged: merged)
        #expect(!edited)
        #expect(try applying(changes, to: read) == merged)
    }

    @Test func aPageIsRemovedOnlyWhenItIsStillAsRead() {
        let a = stroke(1), b = stroke(2)
        let read = PageContent(canvasSize: .a4, elements: [a, b])
        #expect(PageMerge.mayRemove(current: read, seen: seenOf(read)))
        #expect(PageMerge.mayRemove(current: read, seen: nil))
        #expect(!PageMerge.mayRemove(current: PageContent(canvasSize: .a4, elements: [a]), seen: seenOf(read)), "erased since")
        #expect(!PageMerge.mayRemove(current: PageContent(canvasSize: .a4, elements: [a, b, stroke(3)]), seen: seenOf(read)), "drawn since")
        #expect(!PageMerge.mayRemove(current: PageContent(canvasSize: .a4, elements: [b, a]), seen: seenOf(read)), "reordered since")
        #expect(!PageMerge.mayRemove(current: PageContent(canvasSize: .a4, elements: [a, stroke(9, id: b.id)]), seen: seenOf(read)), "changed since")
        #expect(!PageMerge.mayRemove(current: PageContent(canvasSize: .letter, elements: [a, b]), seen: seenOf(read)), "resized since")
    }

    /// Over random pages: the result holds every element added since the read, and every one
    /// edited since that the merge keeps, as it is here; nothing erased since; every other merged element as merged, and the merged page
    /// exactly when nothing was edited since.
    @Test func randomizedMergesKeepEveryEditMadeSince() throws {
        var rng = TestRandom(seed: 77)
        for _ in 0..<300 {
            var pool: [Element] = []
            for _ in 0..<8 { pool.append(stroke(Int(rng.next() % 50))) }
            func pick() -> [Element] {
                var out: [Element] = []
                for e in pool where rng.next() % 2 == 0 { out.append(e) }
                out.shuffle(using: &rng)
                return out
            }
            let read = PageContent(canvasSize: .a4, elements: pick())
            var current = PageContent(canvasSize: rng.next() % 5 == 0 ? .letter : .a4, elements: [])
            for e in read.elements where rng.next() % 4 != 0 {
                current.elements.append(rng.next() % 4 == 0 ? stroke(Int(rng.next() % 50) + 100, id: e.id) : e)
            }
            for _ in 0..<Int(rng.next() % 3) { current.elements.append(stroke(Int(rng.next() % 50) + 200)) }
            var merged = PageContent(canvasSize: .a4, elements: [])
            for e in pick() { merged.elements.append(rng.next() % 5 == 0 ? stroke(Int(rng.next() % 50) + 300, id: e.id) : e) }
            let (changes, edited) = PageMerge.changes(current: current, seen: seenOf(read), merged: merged)
            let result = try applying(changes, to: current)
            let readIDs = Set(read.elements.map(\.id))
            let readPrint = Dictionary(read.elements.map { ($0.id, PageBlob.fingerprint($0)) }, uniquingKeysWith: { a, _ in a })
            let currentByID = Dictionary(current.elements.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            let resultByID = Dictionary(result.elements.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            #expect(result.elements.count == resultByID.count, "no element twice")
            let mergedIDs = Set(merged.elements.map(\.id))
            for e in current.elements where !readIDs.contains(e.id) { #expect(resultByID[e.id] == e, "an element added since is kept") }
            // One changed since keeps its version where the merge keeps the element. (Where the
            // merge removed it, the removal stands, as it did before the rule moved here: see
            // docs/sync.md §5.)
            for e in current.elements where readIDs.contains(e.id) && readPrint[e.id] != PageBlob.fingerprint(e) && mergedIDs.contains(e.id) {
                #expect(resultByID[e.id] == e, "an edit made since is kept")
            }
            for id in readIDs where currentByID[id] == nil { #expect(resultByID[id] == nil, "an element erased since stays erased") }
            for e in merged.elements where currentByID[e.id] == nil && !readIDs.contains(e.id) { #expect(resultByID[e.id] == e) }
            if !edited { #expect(result == merged) }
            if current.canvasSize != read.canvasSize { #expect(result.canvasSize == current.canvasSize) }
        }
    }
}
