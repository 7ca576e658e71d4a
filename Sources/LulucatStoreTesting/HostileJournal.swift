// A journal that is cheap to store and expensive to replay: many small frames that each pass over
// a page of many elements (moves to the front of one stroke). Shared by the hostile corpus in
// swift test and the longer hostile run.

import Foundation
import LulucatInk
import LulucatStore

/// A snapshot of `elements` one-sample strokes with sequential ids (so the archive holding it
/// deflates well) and a journal of `frames` frames, each moving the first stroke to the front.
/// Replaying it visits about `frames x 2 x elements` elements (`PageChange.scanCost`).
public struct HostileJournal: Sendable {
    public var snapshot: [UInt8]
    public var journal: [UInt8]
    public var content: PageContent
    /// Stroke `i`'s id: a fixed version-4 UUID whose last four bytes count.
    public static func id(_ i: Int) -> UUID {
        UUID(uuid: (0x5E, 0xED, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0,
                    UInt8(truncatingIfNeeded: i >> 24), UInt8(truncatingIfNeeded: i >> 16), UInt8(truncatingIfNeeded: i >> 8), UInt8(truncatingIfNeeded: i)))
    }

    /// What a replay of every frame visits.
    public var scanCost: Int

    public init(elements: Int, frames: Int, codec: SampleCodecID = .compact) throws {
        let ink = Ink()
        let strokes: [Element] = (0..<elements).map { i in
            .stroke(Stroke(id: HostileJournal.id(i), ink: ink,
                           samples: [Sample(x: 100, y: 100, radius: 10, pressure: 500, time: 0)]))
        }
        content = PageContent(canvasSize: .letter, elements: strokes)
        snapshot = try PageFile.encode(content, codec: codec)
        let change = PageChange.move([HostileJournal.id(0)], to: .front)
        var bytes = JournalFormat.encodeHeader(JournalFormat.Header(codec: codec, generation: 1, base: SnapshotIdentity(snapshot: snapshot)))
        for i in 0..<frames {
            bytes += try JournalFile.frame(for: [change], codec: codec, generation: 1, sequence: UInt64(i))
        }
        journal = bytes
        scanCost = frames * change.scanCost(onPageOf: elements)
        if frames > 0, elements > 0, case .stroke(let first) = strokes[0] {
            // After the moves, the first stroke is on top.
            content.elements.removeFirst()
            content.elements.append(.stroke(first))
        }
    }
}
