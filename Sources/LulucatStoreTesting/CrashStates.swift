// Builds the crash states a recorded run allows: for each prefix of its operations, the durable
// state plus the combinations of not-yet-durable effects the model lets survive. The model is
// specified in docs/crash-model.md.

import Foundation
import LulucatStore

/// One state the disk may be in after a crash.
public struct CrashState: Sendable {
    /// How many recorded operations had been issued when the power went.
    public var prefix: Int
    /// The tree a reboot finds (everything in it durable from now on).
    public var tree: SimulatedTree
    /// Which not-yet-durable effects survived, for the report of a violation.
    public var effects: [String]
}

/// How far the enumeration goes per prefix.
public struct CrashEnumerationLimits: Sendable {
    /// With at most this many pending directory operations every subset is tried; beyond it, the
    /// in-order prefixes, each one alone and each one left out.
    public var fullSubsetPendingLimit: Int
    /// At most this many combinations of file data outcomes per directory outcome; beyond it, each
    /// file varied alone with the others all lost or all kept.
    public var maxDataCombinations: Int
    /// Where unsynced data is cut, as eighths of the unsynced tail: the torn, zeroed and garbage
    /// outcomes are each built at every one of these points.
    public var cutPoints: [Int]

    /// Also crash the recovery: trace the reopen (open-time repair, close) of each crash state
    /// and check every crash state of that trace too.
    public var crashDuringRecovery: Bool

    public init(fullSubsetPendingLimit: Int, maxDataCombinations: Int, cutPoints: [Int] = [4], crashDuringRecovery: Bool = false) {
        self.fullSubsetPendingLimit = fullSubsetPendingLimit
        self.maxDataCombinations = maxDataCombinations
        self.cutPoints = cutPoints
        self.crashDuringRecovery = crashDuringRecovery
    }

    /// For `swift test`: small and quick.
    public static let bounded = CrashEnumerationLimits(fullSubsetPendingLimit: 4, maxDataCombinations: 25)
    /// For `lnote-dev crashcheck` without `--exhaustive`.
    public static let standard = CrashEnumerationLimits(fullSubsetPendingLimit: 6, maxDataCombinations: 100, cutPoints: [0, 2, 4, 6],
                                                        crashDuringRecovery: true)
    /// For `lnote-dev crashcheck --exhaustive`.
    public static let exhaustive = CrashEnumerationLimits(fullSubsetPendingLimit: 8, maxDataCombinations: 1000, cutPoints: Array(0...7),
                                                          crashDuringRecovery: true)
}

public enum CrashStates {
    /// What can become of a file's unsynced data: each case is one outcome the model allows.
    enum DataOutcome: CaseIterable {
        case lost, kept, torn, zeroed, garbage
    }

    /// Calls `visit` with every crash state of the run, prefix by prefix (states may repeat; the
    /// caller counts distinct ones by fingerprint).
    public static func enumerate(base: SimulatedTree, operations: [SimulatedOperation],
                                 limits: CrashEnumerationLimits, visit: (CrashState) async throws -> Void) async rethrows {
        var current: [Int: [UInt8]] = [:]
        var durable: [Int: [UInt8]] = [:]
        var kinds: [Int: SimulatedNode.Kind] = [:]
        var baseEntries: [Int: [String: Int]] = [:]
        for (ino, node) in base.nodes {
            kinds[ino] = node.kind
            if node.kind == .file { current[ino] = node.data; durable[ino] = node.data } else { baseEntries[ino] = node.entries }
        }
        var meta: [(op: SimulatedOperation, durable: Bool)] = []
        // The byte ranges of each file written since its last sync: only they can be lost or damaged.
        var written: [Int: [Range<Int>]] = [:]

        for k in 0...operations.count {
            if k > 0 {
                switch operations[k - 1] {
                case let .write(ino, offset, bytes, _):
                    var d = current[ino] ?? []
                    let end = offset + bytes.count
                    if d.count < end { d.append(contentsOf: [UInt8](repeating: 0, count: end - d.count)) }
                    d.replaceSubrange(offset..<end, with: bytes)
                    current[ino] = d
                    written[ino, default: []].append(offset..<end)
                case let .truncate(ino, length, _):
                    var d = current[ino] ?? []
                    if length < d.count { d.removeLast(d.count - length) } else {
                        written[ino, default: []].append(d.count..<length)
                        d.append(contentsOf: [UInt8](repeating: 0, count: length - d.count))
                    }
                    current[ino] = d
                case let .sync(ino, _):
                    durable[ino] = current[ino] ?? []
                    written[ino] = []
                case let .syncDirectory(dir, _):
                    for i in meta.indices where !meta[i].durable && destinationDirectory(meta[i].op) == dir { meta[i].durable = true }
                case let .link(_, _, ino, isDirectory, _):
                    kinds[ino] = isDirectory ? .directory : .file
                    if !isDirectory { current[ino] = []; durable[ino] = []; written[ino] = [] }
                    meta.append((operations[k - 1], false))
                case .unlink, .rename:
                    meta.append((operations[k - 1], false))
                }
            }
            let pending = meta.indices.filter { !meta[$0].durable }
            for chosen in metadataChoices(pending.count, limits) {
                var persisted = Set<Int>()
                for (j, i) in pending.enumerated() where chosen[j] { persisted.insert(i) }
                // Directory entries after the crash: the durable operations and the chosen pending ones, in order.
                var entries = baseEntries
                for (i, m) in meta.enumerated() where m.durable || persisted.contains(i) {
                    switch m.op {
                    case let .link(dir, name, ino, isDirectory, _):
                        entries[dir, default: [:]][name] = ino
                        if isDirectory && entries[ino] == nil { entries[ino] = [:] }
                    case let .unlink(dir, name, ino, _):
                        if entries[dir]?[name] == ino { entries[dir]![name] = nil }
                    case let .rename(fromDir, fromName, toDir, toName, ino, _, _):
                        if entries[fromDir]?[fromName] == ino { entries[fromDir]![fromName] = nil }
                        entries[toDir, default: [:]][toName] = ino
                    default: break
                    }
                }
                // The files reachable from "/" decide which unsynced data matters.
                var reachable: [Int] = []
                var stack = [SimulatedTree.root]
                var seen: Set<Int> = [SimulatedTree.root]
                while let d = stack.popLast() {
                    for (_, ino) in entries[d] ?? [:] where seen.insert(ino).inserted {
                        if kinds[ino] == .directory { stack.append(ino) } else { reachable.append(ino) }
                    }
                }
                reachable.sort()
                let unsynced = reachable.filter { current[$0] != durable[$0] }
                let outcomes = unsynced.map {
                    dataOutcomes(durable: durable[$0] ?? [], current: current[$0] ?? [], written: written[$0] ?? [], cuts: limits.cutPoints)
                }
                let metaEffects = pending.enumerated().map { j, i in (chosen[j] ? "persisted: " : "lost: ") + meta[i].op.summary }
                for combination in dataCombinations(outcomes.map(\.count), limit: limits.maxDataCombinations) {
                    var nodes: [Int: SimulatedNode] = [:]
                    for ino in seen {
                        if kinds[ino] == .directory {
                            nodes[ino] = SimulatedNode(kind: .directory, entries: entries[ino] ?? [:])
                        } else {
                            nodes[ino] = SimulatedNode(kind: .file, data: current[ino] ?? [])
                        }
                    }
                    var effects = metaEffects
                    for (f, ino) in unsynced.enumerated() {
                        let (name, data) = outcomes[f][combination[f]]
                        nodes[ino]!.data = data
                        effects.append("data \(name): inode \(ino)")
                    }
                    try await visit(CrashState(prefix: k, tree: SimulatedTree(nodes: nodes), effects: effects))
                }
            }
        }
    }

    /// The directory whose sync makes an entry operation durable: for a rename, its destination.
    static func destinationDirectory(_ op: SimulatedOperation) -> Int? {
        switch op {
        case let .link(dir, _, _, _, _), let .unlink(dir, _, _, _): return dir
        case let .rename(_, _, toDir, _, _, _, _): return toDir
        default: return nil
        }
    }

    /// Which pending directory operations persist: every subset when few, else a bounded family.
    static func metadataChoices(_ n: Int, _ limits: CrashEnumerationLimits) -> [[Bool]] {
        if n <= limits.fullSubsetPendingLimit {
            return (0..<(1 << n)).map { mask in (0..<n).map { mask & (1 << $0) != 0 } }
        }
        var out: [[Bool]] = []
        for p in 0...n { out.append((0..<n).map { $0 < p }) }          // in order, as a journal commits
        for i in 0..<n { out.append((0..<n).map { $0 != i }) }         // all but one
        for i in 0..<n { out.append((0..<n).map { $0 == i }) }         // only one
        return out
    }

    /// The distinct outcomes of one file's unsynced data, named. Only the bytes `written` since the
    /// last sync can change: a crash does not touch bytes of a file no write reached (SQLite
    /// overwrites pages in place; the pages between them are durable).
    static func dataOutcomes(durable d: [UInt8], current c: [UInt8], written: [Range<Int>], cuts: [Int] = [4]) -> [(String, [UInt8])] {
        var out: [(String, [UInt8])] = [("lost", d), ("kept", c)]
        // The written bytes within the current size, in file order, as disjoint sorted spans.
        var spans: [Range<Int>] = []
        for r in written.map({ $0.clamped(to: 0..<c.count) }).filter({ !$0.isEmpty }).sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = spans.last, r.lowerBound <= last.upperBound {
                spans[spans.count - 1] = last.lowerBound..<max(last.upperBound, r.upperBound)
            } else {
                spans.append(r)
            }
        }
        let total = spans.reduce(0) { $0 + $1.count }
        if total > 0 {
            // The durable bytes (zeros past their end) and the garbage pattern, by file offset.
            let old = Array(d.prefix(c.count)) + [UInt8](repeating: 0, count: max(0, c.count - d.count))
            let garbage = (0..<c.count).map { UInt8(truncatingIfNeeded: 0xA5 ^ ($0 &* 31)) }
            for eighths in cuts {
                // The new bytes reach the file up to `cut` (a file offset inside the written spans).
                var remaining = total * eighths / 8
                var cut = spans[0].lowerBound
                for span in spans {
                    if remaining < span.count { cut = span.lowerBound + remaining; break }
                    remaining -= span.count
                    cut = span.upperBound
                }
                /// The current bytes, `size` long, with the written bytes at or after `cut` replaced
                /// by those of `fill` (a whole-file-sized source, indexed by file offset).
                func outcome(size: Int, _ fill: [UInt8]) -> [UInt8] {
                    var bytes = Array(c.prefix(size))
                    if bytes.count < size { bytes.append(contentsOf: [UInt8](repeating: 0, count: size - bytes.count)) }
                    for span in spans {
                        let from = max(span.lowerBound, cut), to = min(span.upperBound, size)
                        if from < to { bytes.replaceSubrange(from..<to, with: fill[from..<to]) }
                    }
                    return bytes
                }
                // Torn: the old bytes after the cut, and the file ends at the cut if it grew past
                // its old size (an append cut short); zeroed: the size persisted, the data not;
                // garbage: a half-written sector.
                out.append(("torn at \(eighths)/8", outcome(size: max(cut, min(d.count, c.count)), old)))
                out.append(("zeroed from \(eighths)/8", outcome(size: c.count, [UInt8](repeating: 0, count: c.count))))
                out.append(("garbage from \(eighths)/8", outcome(size: c.count, garbage)))
            }
        }
        var unique: [(String, [UInt8])] = []
        for o in out where !unique.contains(where: { $0.1 == o.1 }) { unique.append(o) }
        return unique
    }

    /// Index combinations over files with `counts` outcomes each, capped at `limit`.
    static func dataCombinations(_ counts: [Int], limit: Int) -> [[Int]] {
        let total = counts.reduce(1) { $0 > limit ? $0 : $0 * $1 }
        if total <= limit {
            var out: [[Int]] = [[]]
            for c in counts { out = out.flatMap { prefix in (0..<c).map { prefix + [$0] } } }
            return out
        }
        // Outcome 0 is "lost", 1 is "kept": vary each file alone against both backgrounds.
        var out: [[Int]] = [counts.map { _ in 0 }, counts.map { _ in 1 }]
        for (f, c) in counts.enumerated() {
            for v in 0..<c {
                for background in [0, 1] {
                    var combo = counts.map { _ in background }
                    combo[f] = v
                    if !out.contains(combo) { out.append(combo) }
                }
            }
        }
        return out
    }
}
