// One order for UUIDs wherever the store lists them (by their upper-case string form), coded once.
import Foundation

extension Sequence<UUID> {
    /// The IDs by `uuidString`, as `sorted { $0.uuidString < $1.uuidString }` gives them. A thin
    /// wrapper: the sort itself is specialized once, not once per call site (each closure passed to
    /// `sorted(by:)` got its own 4 KB copy of the stable sort in an app's binary, issue 12).
    package func sortedByUUIDString() -> [UUID] { UUIDOrder.sorted(Array(self)) }
}

enum UUIDOrder {
    @inline(never)
    static func sorted(_ ids: [UUID]) -> [UUID] { ids.sorted { $0.uuidString < $1.uuidString } }
}
