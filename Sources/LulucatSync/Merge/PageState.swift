// One page's sync state: its elements as a set of ids with tombstones (docs/sync.md §5.2).

import Foundation

/// What the merge knows of one element: which version is present and where it is in z-order.
package struct ElementEntry: Hashable, Sendable {
    /// The version: a transform or a z-order move makes a new one.
    package var stamp: Stamp
    package var key: PositionKey
    /// A 64-bit digest of the element's bytes; a function of (id, stamp). Lets a device see what it
    /// changed locally without keeping a copy of the page.
    package var fingerprint: UInt64

    package init(stamp: Stamp, key: PositionKey, fingerprint: UInt64) {
        self.stamp = stamp
        self.key = key
        self.fingerprint = fingerprint
    }
}

/// The elements of a page: present ids with their versions, and the ids removed for good.
package struct PageState: Hashable, Sendable {
    package var elements: [UUID: ElementEntry]
    package var tombstones: Set<UUID>

    package init(elements: [UUID: ElementEntry] = [:], tombstones: Set<UUID> = []) {
        self.elements = elements
        self.tombstones = tombstones
    }

    /// Tombstones are a union; an element is present when some side has it and no side removed
    /// it; of two versions the larger stamp wins.
    package func joined(_ other: PageState) -> PageState {
        let dead = tombstones.union(other.tombstones)
        var out: [UUID: ElementEntry] = [:]
        out.reserveCapacity(Swift.max(elements.count, other.elements.count))
        for (id, e) in elements where !dead.contains(id) { out[id] = e }
        for (id, e) in other.elements where !dead.contains(id) {
            if let mine = out[id] {
                if mine.stamp < e.stamp || (mine.stamp == e.stamp && PageState.tieBreak(e, over: mine)) { out[id] = e }
            } else {
                out[id] = e
            }
        }
        return PageState(elements: out, tombstones: dead)
    }

    /// Equal stamps carry equal versions; should they not, one still wins the same way everywhere.
    static func tieBreak(_ a: ElementEntry, over b: ElementEntry) -> Bool {
        if a.fingerprint != b.fingerprint { return a.fingerprint > b.fingerprint }
        return b.key < a.key
    }

    /// The present elements in z-order: by key, then by id.
    package var orderedIDs: [UUID] { orderedEntries.map(\.id) }

    /// The present elements in z-order with their entries.
    package var orderedEntries: [(id: UUID, entry: ElementEntry)] {
        // Sorted first by the keys' first two digits packed in one integer (a consistent coarse
        // order: where they differ, the keys compare the same way), then by the whole key and
        // the id's string: the same order as comparing (key, id string) alone, in a fraction of
        // the time for a large page.
        let entries = Array(elements)
        var order: [(prefix: UInt64, index: Int)] = []
        order.reserveCapacity(entries.count)
        for (i, e) in entries.enumerated() {
            let d = e.value.key.digits
            let hi = UInt64(d.first ?? 0), lo = d.count > 1 ? UInt64(d[1]) : 0
            // Keys equal in their first two digits ([5], [5, 0], [5, 0, 7]; or [] and [0]) tie here
            // and are ordered by the whole key below.
            order.append((hi << 32 | lo, i))
        }
        order.sort { a, b in
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            let ea = entries[a.index], eb = entries[b.index]
            if ea.value.key != eb.value.key { return ea.value.key < eb.value.key }
            return ea.key.precedesInBytes(eb.key)
        }
        return order.map { (entries[$0.index].key, entries[$0.index].value) }
    }

    /// Every stamp in the page (for liveness against a removal).
    package func anyStamp(notCoveredBy vv: VersionVector) -> Bool {
        elements.values.contains { !vv.covers($0.stamp) }
    }

    package func include(into vv: inout VersionVector) {
        for e in elements.values { vv.include(e.stamp) }
    }
}
