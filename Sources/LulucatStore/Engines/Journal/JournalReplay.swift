// Replay: a page's snapshot with its journal's valid frames applied in order, and what was found
// on the way (a torn tail, a stale journal, damage). Reads only; repairs happen when writing.

import Foundation
import LulucatInk

/// A page as its snapshot and journal give it.
package struct JournalReplay {
    /// What the journal file was found to be.
    package enum JournalState: Equatable {
        /// No journal file: the snapshot is the page.
        case missing
        /// The journal applies on top of this snapshot; its valid frames were applied.
        case current
        /// The journal names another snapshot: a compaction wrote the snapshot and stopped before
        /// starting a new journal. Its frames are already in the snapshot and are not applied.
        case stale
        /// The journal cannot be used (bad header, damaged frames, a frame that does not apply):
        /// it must be kept aside before the page is written again.
        case damaged(String)
    }

    package var content: PageContent
    package var encoded: EncodedStrokes
    package var snapshot: SnapshotIdentity
    package var journal: JournalState
    package var header: JournalFormat.Header?
    /// Frames applied, their total bytes, and where the next frame goes.
    package var frameCount = 0
    package var frameBytes = 0
    package var validEnd = JournalFormat.headerSize
    /// Nonzero bytes after the valid frames that the next write must clear first.
    package var tailToClear: Range<Int>?
    /// The journal file's size.
    package var fileSize = 0
    package var findings: [Finding] = []
    /// Elements the replay's changes visited (`PageChange.scanCost`, appends by their count): a
    /// journal of many small frames on a page of many elements costs frames x elements.
    package var scanned = 0
    /// When set (an import), the replay stops before a frame that would take `scanned` past it and
    /// says so in `overBudget`; the page is then not usable (the reader refuses it, nothing lost).
    package var scanBudget: Int?
    package var overBudget = false
    /// Whether every change applied appended elements or resized the canvas: the page is then the
    /// snapshot's elements, unchanged and in order, with elements appended (so compacting it
    /// extends the snapshot's file: `PageFile.encode(_:codec:appendingTo:)`).
    package var onlyAppended = true

    /// After a change is applied: its rewritten elements' coded bytes are forgotten.
    mutating func noteApplied(_ change: PageChange) {
        encoded.forget(changedBy: change)
        if onlyAppended, !SnapshotEngine.onlyAppend([change]) { onlyAppended = false }
    }

    /// Reads `pages/<id>.content` and `pages/<id>.journal` and replays.
    package static func read(_ package: DocumentPackage, page id: UUID, fileSystem fs: any FileSystem,
                             scanBudget: Int? = nil) throws(StoreError) -> JournalReplay {
        let snapshotPath = package.pagePath(id)
        let snapshotBytes = try SnapshotEngine.readBytes(snapshotPath, page: id, fileSystem: fs)
        var content: PageContent
        var encoded: EncodedStrokes
        do { (content, encoded) = try PageFile.decodeKeepingStrokes(snapshotBytes) } catch {
            throw .corruptPage(page: id, path: snapshotPath, error)
        }
        let identity = SnapshotIdentity(snapshot: snapshotBytes)
        let path = package.journalPath(id)
        let bytes: [UInt8]
        do { bytes = try fs.readFile(path, limit: JournalFormat.maxPayload * 4) } catch {
            if error.isNotFound {
                return JournalReplay(content: content, encoded: encoded, snapshot: identity, journal: .missing)
            }
            if error.errno == ELOOP { throw .unexpectedFileKind(path: error.found != nil ? error.path : path, found: .symlink) }
            throw .file(error)
        }
        return replaying(bytes, path: path, on: content, encoded: encoded, snapshot: identity, scanBudget: scanBudget)
    }

    /// Replays journal bytes (read from `path`) on top of a decoded snapshot: what `read` does once
    /// both files are read. Never throws: whatever the bytes, the result says what they were.
    /// `salvaging`: the snapshot was damaged and `content` is what its salvage kept. The journal
    /// is then applied whatever snapshot its header names (the damaged file's identity no longer
    /// matches its own journal's), every valid frame (before and after damage) change by change
    /// and element by element (`applyLeniently`): an element the salvage lost costs only the
    /// changes that name it.
    package static func replaying(_ bytes: [UInt8], path: String, on content: PageContent, encoded: EncodedStrokes,
                          snapshot identity: SnapshotIdentity, scanBudget: Int? = nil, salvaging: Bool = false) -> JournalReplay {
        var replay = JournalReplay(content: content, encoded: encoded, snapshot: identity, journal: .current)
        replay.scanBudget = scanBudget
        replay.fileSize = bytes.count
        replay.salvaging = salvaging
        bytes.withUnsafeBytes { raw in replay.apply(raw, path: path) }
        return replay
    }

    /// Replaying on a salvaged snapshot (`replaying(salvaging:)`).
    package var salvaging = false
    /// Salvaging: elements of the frames that could not be applied (a delete, move or replace of
    /// an element the page lacks, an append of one it already has).
    package var elementsNotApplied = 0

    /// Applies what of `change` applies to the page: an append without the elements already on
    /// it, a delete or move of the elements it has, a replace whose stroke is gone puts the pieces
    /// on top, an update of an element the page lacks adds that version. Returns the elements
    /// (ids) that could not be applied.
    static func applyLeniently(_ change: PageChange, to content: inout PageContent, ids: inout Set<UUID>) -> Int {
        switch change {
        case .append(let new):
            var skipped = 0
            for e in new {
                if ids.contains(e.id) { skipped += 1; continue }
                content.elements.append(e)
                ids.insert(e.id)
            }
            return skipped
        case .delete(let gone):
            let present = Array(Set(gone).intersection(ids))
            if !present.isEmpty { try? content.apply(.delete(present)); ids.subtract(present) }
            return gone.count - present.count
        case .replace(let id, let pieces):
            let fresh = pieces.filter { !ids.contains($0.id) || $0.id == id }
            if ids.contains(id), (try? content.apply(.replace(id, with: fresh))) != nil {
                ids.remove(id)
                ids.formUnion(fresh.map(\.id))
                return pieces.count - fresh.count
            }
            let added = fresh.filter { !ids.contains($0.id) }
            content.elements.append(contentsOf: added)
            ids.formUnion(added.map(\.id))
            return 1 + pieces.count - added.count
        case .update(let new):
            var skipped = 0
            var seen = Set<UUID>()
            for e in new where seen.insert(e.id).inserted {
                if ids.contains(e.id) {
                    if (try? content.apply(.update([e]))) == nil { skipped += 1 }
                } else {
                    content.elements.append(e)
                    ids.insert(e.id)
                }
            }
            return skipped + new.count - seen.count
        case .move(let moved, let position):
            var seen = Set<UUID>()
            let present = moved.filter { ids.contains($0) && seen.insert($0).inserted }
            guard !present.isEmpty else { return moved.count }
            var to = position
            if case .index(let i) = position { to = .index(max(0, min(i, content.elements.count - present.count))) }
            if (try? content.apply(.move(present, to: to))) == nil { return moved.count }
            return moved.count - present.count
        case .resize:
            return (try? content.apply(change)) == nil ? 1 : 0
        }
    }

    /// Applies one change as `PageContent.apply` does (same checks, same errors' meaning), with
    /// appends checked against `ids` instead of a scan of the page.
    private static func apply(_ change: PageChange, to content: inout PageContent, ids: inout Set<UUID>) throws(PageChangeError) {
        switch change {
        case .append(let new):
            var fresh = Set<UUID>()
            for e in new {
                guard fresh.insert(e.id).inserted else { throw PageChangeError("new elements repeat an id") }
                guard !ids.contains(e.id) else { throw PageChangeError("element \(e.id) is already on the page") }
            }
            content.elements.append(contentsOf: new)
            ids.formUnion(fresh)
        case .delete(let gone):
            try content.apply(change)
            ids.subtract(gone)
        case .replace(let id, let pieces):
            try content.apply(change)
            ids.remove(id)
            ids.formUnion(pieces.map(\.id))
        case .update, .move, .resize:
            try content.apply(change)
        }
    }

    private mutating func apply(_ bytes: UnsafeRawBufferPointer, path: String) {
        let header: JournalFormat.Header
        do { header = try JournalFormat.decodeHeader(bytes) } catch {
            journal = .damaged("\(error)")
            findings.append(Finding(.error, path, "\(error); the journal is not applied (kept aside when the page is next written)"))
            return
        }
        self.header = header
        if salvaging {
            salvageAll(bytes, header: header, path: path)
            return
        }
        guard header.base == snapshot else {
            journal = .stale
            findings.append(Finding(.info, path, "journal generation \(header.generation) names another snapshot: a compaction finished its snapshot but not the new journal; its frames are already in the snapshot"))
            return
        }
        let scan = JournalScan(bytes, generation: header.generation, endMarks: header.version >= 2,
                               chunk: header.version >= 3 ? header.allocationChunk : 0)
        let changes = JournalChangeCodec(codec: header.codec, version: header.version)
        // With a budget, what the whole journal would cost is added up first, from the decoded
        // frames alone (decoding is linear in the bytes), so a journal over it costs no replay.
        if let scanBudget {
            let cost = JournalReplay.estimatedScan(scan.frames + scan.later, bytes, changes: changes, elements: content.elements.count)
            if cost > scanBudget {
                scanned = cost
                overBudget = true
                return
            }
        }
        // The ids on the page, so that replaying appends checks them in constant time (PageContent's
        // own check scans the page: quadratic over a journal of thousands of strokes).
        var ids = Set(content.elements.map(\.id))
        for frame in scan.frames {
            let decoded: [PageChange]
            do {
                decoded = try changes.decodeFrame(type: frame.type, UnsafeRawBufferPointer(rebasing: bytes[frame.payload]), fileOffset: frame.payload.lowerBound)
                guard charge(decoded) else {
                    validEnd = frame.extent.lowerBound
                    return
                }
                if decoded.count == 1 {
                    // In place: `apply` leaves the content unchanged when it throws, and a copy
                    // per frame would copy the page's element array once per frame.
                    try JournalReplay.apply(decoded[0], to: &content, ids: &ids)
                } else {
                    var next = content, nextIDs = ids
                    for change in decoded { try JournalReplay.apply(change, to: &next, ids: &nextIDs) }
                    content = next
                    ids = nextIDs
                }
            } catch {
                journal = .damaged("frame \(frameCount) at byte \(frame.extent.lowerBound) does not apply: \(error)")
                findings.append(Finding(.error, path, "frame \(frameCount) at byte \(frame.extent.lowerBound) is intact but does not apply (\(error)); replay stopped before it (the journal is kept aside when the page is next written)"))
                validEnd = frame.extent.lowerBound
                return
            }
            for change in decoded {
                noteApplied(change)
            }
            frameCount += 1
            frameBytes += frame.extent.count
        }
        validEnd = scan.validEnd
        if scan.cutShort, case .clean = scan.tail {
            // Cut in the zeros after the end mark: nothing lost; the next write restores the size.
            let chunk = header.allocationChunk
            tailToClear = scan.validEnd..<bytes.count  // cleared up to the next multiple of the chunk
            findings.append(Finding(.warning, path, "the journal is \(bytes.count) bytes, not a multiple of its \(chunk)-byte chunk: cut short after its end mark (its \(frameCount) frame\(frameCount == 1 ? "" : "s") intact, nothing lost); the next write restores its size"))
        }
        switch scan.tail {
        case .clean:
            break
        case .torn(let at):
            tailToClear = at..<scan.dataEnd
            findings.append(Finding(.info, path, "torn tail at byte \(at) (a save cut short by a crash, never acknowledged); ignored, cleared by the next write"))
        case .unsearched(let at):
            journal = .damaged("frame \(frameCount) at byte \(at) fails its check and too many bytes follow it to rule out valid frames")
            findings.append(Finding(.error, path, "frame \(frameCount) at byte \(at) fails its check and \(scan.dataEnd - at) nonzero bytes follow it, too many to search for valid frames: treated as damage; replay stopped at byte \(at) (the journal is kept aside when the page is next written)"))
        case let .missingEnd(at, later) where scan.acknowledgedAfter != nil || scan.cutShort:
            let n = content.elements.count
            if let ack = scan.acknowledgedAfter {
                journal = .damaged("frame \(frameCount) at byte \(at) fails its check but was acknowledged (ack mark at byte \(ack.ackAt))")
                findings.append(Finding(.error, path, "frame \(frameCount) at byte \(at) fails its check, but the ack mark at byte \(ack.ackAt) shows it was acknowledged: damage, not a torn write; at least \(ack.saves) save\(ack.saves == 1 ? "" : "s") lost; the page holds \(n) element\(n == 1 ? "" : "s") (the journal is kept aside when the page is next written)"))
            } else {
                journal = .damaged("the journal is cut short at byte \(fileSize) after frame \(frameCount - 1)")
                let lost = later.map { "at least \($0) save\($0 == 1 ? "" : "s") lost" } ?? "the saves after it lost (how many is unknown)"
                findings.append(Finding(.error, path, "the journal is \(fileSize) bytes, not a multiple of its \(header.allocationChunk)-byte chunk, and ends inside or right after its frames (byte \(at)): cut short, not torn by a crash; \(lost); the page holds \(n) element\(n == 1 ? "" : "s") (the journal is kept aside when the page is next written)"))
            }
        case let .missingEnd(at, later):
            journal = .damaged("the journal has no end mark after frame \(frameCount - 1) at byte \(at)")
            let lost = later.map { "at least \($0) save\($0 == 1 ? "" : "s") lost" } ?? "saves after it lost (how many is unknown)"
            findings.append(Finding(.error, path, "the journal's end mark is missing after its \(frameCount) valid frame\(frameCount == 1 ? "" : "s") (byte \(at)): its bytes there were zeroed, cut off or overwritten, not torn by a crash; \(lost); the page holds \(content.elements.count) element\(content.elements.count == 1 ? "" : "s") (the journal is kept aside when the page is next written)"))
        case let .corrupt(at, after):
            journal = .damaged("frame \(frameCount) at byte \(at) is damaged and \(after) valid frames follow it")
            let (kept, notApplied) = salvage(scan.later, bytes, changes: changes, ids: &ids)
            let lost = scan.lostFrames
            findings.append(Finding(.error, path, "frame \(frameCount) at byte \(at) is damaged (not a torn tail): \(lost) save\(lost == 1 ? "" : "s") lost; the \(kept) valid frame\(kept == 1 ? "" : "s") after the damage \(kept == 1 ? "is" : "are") kept\(notApplied == 0 ? "" : ", except \(notApplied) change\(notApplied == 1 ? "" : "s") that named elements of the lost saves"); the page holds \(content.elements.count) element\(content.elements.count == 1 ? "" : "s") (the journal is kept aside when the page is next written)"))
        }
    }

    /// Salvaging (`replaying(salvaging:)`): every frame that checks, the chain from the header
    /// and the runs found after damage, applied leniently on the salvaged snapshot.
    private mutating func salvageAll(_ bytes: UnsafeRawBufferPointer, header: JournalFormat.Header, path: String) {
        let scan = JournalScan(bytes, generation: header.generation, endMarks: header.version >= 2,
                               chunk: header.version >= 3 ? header.allocationChunk : 0)
        let changes = JournalChangeCodec(codec: header.codec, version: header.version)
        var ids = Set(content.elements.map(\.id))
        var notDecoded = 0
        for frame in scan.frames + scan.later {
            guard let decoded = try? changes.decodeFrame(type: frame.type, UnsafeRawBufferPointer(rebasing: bytes[frame.payload]),
                                                         fileOffset: frame.payload.lowerBound) else {
                notDecoded += 1
                continue
            }
            guard charge(decoded) else { break }
            for change in decoded {
                elementsNotApplied += JournalReplay.applyLeniently(change, to: &content, ids: &ids)
                noteApplied(change)
            }
            frameCount += 1
            frameBytes += frame.extent.count
        }
        validEnd = scan.validEnd
        journal = .damaged("the snapshot it applies to is damaged")
        let damage: String
        switch scan.tail {
        case .clean, .torn: damage = ""
        default: damage = "; the journal is damaged too (\(scan.lostFrames) frame\(scan.lostFrames == 1 ? "" : "s") lost)"
        }
        let identity = header.base == snapshot ? "" : " (its header names the snapshot before the damage)"
        findings.append(Finding(.error, path, "the page's snapshot is damaged: its journal's \(frameCount) valid frame\(frameCount == 1 ? "" : "s") applied on what the snapshot kept\(identity)\(elementsNotApplied == 0 ? "" : ", \(elementsNotApplied) element change\(elementsNotApplied == 1 ? "" : "s") naming elements the damage took skipped")\(notDecoded == 0 ? "" : ", \(notDecoded) frame\(notDecoded == 1 ? "" : "s") that did not decode")\(damage); the page holds \(content.elements.count) element\(content.elements.count == 1 ? "" : "s")"))
    }

    /// What applying every frame that decodes would visit, counting the page's elements as the
    /// changes would leave them (an upper bound: a frame that does not apply stops the replay).
    private static func estimatedScan(_ frames: [JournalScan.Frame], _ bytes: UnsafeRawBufferPointer,
                                      changes: JournalChangeCodec, elements start: Int) -> Int {
        var elements = start
        var total = 0
        for frame in frames {
            guard let decoded = try? changes.decodeFrame(type: frame.type, UnsafeRawBufferPointer(rebasing: bytes[frame.payload]),
                                                         fileOffset: frame.payload.lowerBound) else { continue }
            let (cost, after) = scanCost(of: decoded, elements: elements)
            total = total > Int.max / 2 ? total : total + cost
            elements = after
        }
        return total
    }

    /// What applying `changes` in order to a page of `elements` elements visits, and the
    /// elements it leaves.
    private static func scanCost(of changes: [PageChange], elements start: Int) -> (cost: Int, elements: Int) {
        var elements = start
        var cost = 0
        for change in changes {
            switch change {
            case .append(let new):
                cost += new.count  // checked against `ids`, not by a scan
                elements += new.count
            case .delete(let gone):
                cost += change.scanCost(onPageOf: elements)
                elements = max(0, elements - gone.count)
            case .replace(_, let pieces):
                cost += change.scanCost(onPageOf: elements)
                elements += pieces.count - 1
            default:
                cost += change.scanCost(onPageOf: elements)
            }
        }
        return (cost, elements)
    }

    /// Adds what applying `changes` visits to `scanned`; false (and `overBudget`) when that
    /// passes the budget, before any of them is applied.
    private mutating func charge(_ changes: [PageChange]) -> Bool {
        scanned += JournalReplay.scanCost(of: changes, elements: content.elements.count).cost
        if let scanBudget, scanned > scanBudget {
            overBudget = true
            return false
        }
        return true
    }

    /// Applies the valid frames found after damage, change by change: a change that does not
    /// apply (it names an element a lost frame added) is skipped, the others are kept. Returns the
    /// frames applied and the changes skipped.
    private mutating func salvage(_ frames: [JournalScan.Frame], _ bytes: UnsafeRawBufferPointer, changes: JournalChangeCodec,
                                  ids: inout Set<UUID>) -> (kept: Int, notApplied: Int) {
        var kept = 0, notApplied = 0
        for frame in frames {
            guard let decoded = try? changes.decodeFrame(type: frame.type, UnsafeRawBufferPointer(rebasing: bytes[frame.payload]),
                                                         fileOffset: frame.payload.lowerBound) else {
                notApplied += 1
                continue
            }
            guard charge(decoded) else { break }
            for change in decoded {
                do throws(PageChangeError) {
                    try JournalReplay.apply(change, to: &content, ids: &ids)
                } catch {
                    notApplied += 1
                    continue
                }
                noteApplied(change)
            }
            kept += 1
            frameBytes += frame.extent.count
        }
        return (kept, notApplied)
    }
}

extension EncodedStrokes {
    /// Forgets the coded bytes of the elements `change` deletes or rewrites (they are coded again
    /// on the next write); appends, moves and resizes keep them.
    mutating func forget(changedBy change: PageChange) {
        switch change {
        case .delete(let ids): forget(ids)
        case .replace(let id, _): forget([id])
        case .update(let elements): forget(elements.map(\.id))
        case .append, .move, .resize: break
        }
    }
}
