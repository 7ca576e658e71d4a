// The page blob (docs/sync.md §3.1): a page's content and what the merge knows of each element,
// and the local page state (.sync/docs) which is the same tables with ids and fingerprints.

import Foundation
import LulucatInk

/// A page's elements as the merge sees them, with their content.
package struct PageSnapshot: Sendable, Equatable {
    package var state: PageState
    package var canvas: QuantizedSize
    /// Present elements by id.
    package var elements: [UUID: Element]

    package init(state: PageState, canvas: QuantizedSize, elements: [UUID: Element]) {
        self.state = state
        self.canvas = canvas
        self.elements = elements
    }
}

package enum PageBlob {
    package static let magic: [UInt8] = [0x4C, 0x53, 0x50, 0x42]  // "LSPB"
    static let stateMagic: [UInt8] = [0x4C, 0x53, 0x50, 0x53]     // "LSPS", local only
    package static let version: UInt16 = 1
    package static let maxBytes = 256 << 20
    static let maxTable = 1 << 24

    /// The fingerprint of one element: FNV-1a 64 of the canonical bytes
    /// (`PageFile.canonicalBytes`) of a one-element fixed16 page.
    package static func fingerprint(_ element: Element) -> UInt64 {
        let bytes = (try? PageFile.canonicalBytes(PageContent(canvasSize: QuantizedSize(width: 0, height: 0), elements: [element]),
                                                  codec: .fixed16)) ?? []
        return fnv1a64(bytes)
    }

    /// The canonical blob of a page. Every present element must have its content in `elements`.
    /// - Parameter reusing: coded strokes to copy instead of coding again; every stroke in it must
    ///   have the samples it has in `elements` (forget the others first).
    /// - Parameter hollow: strokes of `elements` read hollow (no samples,
    ///   `PageFile.decodeKeepingStrokes(_:hollowing:)`): each must be in `reusing`, in the blob's
    ///   codec, so that its coded bytes are copied; otherwise nothing is encoded (an error).
    package static func encode(state: PageState, canvas: QuantizedSize, elements: [UUID: Element],
                              reusing: EncodedStrokes? = nil, hollow: Set<UUID> = []) throws(SyncFormatError) -> [UInt8] {
        let order = state.orderedEntries
        var content = PageContent(canvasSize: canvas)
        content.elements.reserveCapacity(order.count)
        for (id, _) in order {
            guard let e = elements[id] else { throw .invalid(0, "no content for element \(id)") }
            content.elements.append(e)
        }
        // A hollow stroke (no samples) must be copied from `reusing`: PageFile refuses to code it.
        let file: [UInt8]
        do { file = try PageFile.canonicalBytes(content, codec: .compact, reusing: reusing, hollow: hollow) } catch {
            throw .invalid(0, "the page does not code: \(error)")
        }
        var w = SyncWriter()
        w.raw(magic)
        w.uint16(version)
        w.uint16(0)
        let devices = writeTables(state, &w)
        w.varint(order.count)
        for (_, e) in order { writeEntry(e, devices: devices, &w) }
        w.varint(file.count)
        w.raw(file)
        return w.bytes
    }

    /// Decodes a blob whose name has been checked. Fingerprints are computed from the content.
    /// - Parameter admit: when given, shown what the page holds (`PageFile.check`: counted one
    ///   element at a time, nothing kept) and its page file's size before the page is decoded;
    ///   what it throws refuses the blob, so a page over a limit never takes its memory.
    package static func decode(_ bytes: [UInt8],
                               admit: ((PageSummary, _ pageFileBytes: Int) throws(SyncFormatError) -> Void)? = nil) throws(SyncFormatError) -> PageSnapshot {
        guard bytes.count <= maxBytes else { throw .invalid(0, "blob larger than \(maxBytes) bytes") }
        var r = SyncReader(bytes)
        guard Array(try r.raw(4)) == magic else { throw .badMagic }
        let v = try r.uint16()
        guard v <= version else { throw .newerVersion(Int(v)) }
        _ = try r.uint16()
        let (devices, tombstones) = try readTables(&r)
        let n = try r.count(limit: maxTable, minBytes: 3)
        var entries: [(Stamp, PositionKey)] = []
        entries.reserveCapacity(n)
        for _ in 0..<n { entries.append(try readEntry(devices: devices, &r)) }
        let fileLength = try r.count(limit: maxBytes)
        let file = Array(try r.raw(fileLength))
        guard r.remaining == 0 else { throw .invalid(r.offset, "bytes after the page file") }
        if let admit {
            let summary: PageSummary
            do { summary = try PageFile.check(file) } catch { throw .invalid(r.offset, "page file: \(error)") }
            try admit(summary, file.count)
        }
        let content: PageContent
        do { content = try PageFile.decode(file) } catch { throw .invalid(r.offset, "page file: \(error)") }
        guard content.elements.count == n else {
            throw .invalid(r.offset, "\(n) element entries for \(content.elements.count) elements")
        }
        var state = PageState(elements: [:], tombstones: tombstones)
        var elements: [UUID: Element] = [:]
        for (e, (stamp, key)) in zip(content.elements, entries) {
            guard elements[e.id] == nil, !tombstones.contains(e.id) else { throw .invalid(0, "element \(e.id) repeated or tombstoned") }
            elements[e.id] = e
            state.elements[e.id] = ElementEntry(stamp: stamp, key: key, fingerprint: fingerprint(e))
        }
        return PageSnapshot(state: state, canvas: content.canvasSize, elements: elements)
    }

    // MARK: The local page state

    /// The page state with ids and fingerprints, for `.sync/docs`: no content.
    static func encodeState(_ state: PageState) -> [UInt8] {
        var w = SyncWriter()
        w.raw(stateMagic)
        w.uint16(version)
        w.uint16(0)
        let devices = writeTables(state, &w)
        let order = state.orderedEntries
        w.varint(order.count)
        for (id, e) in order {
            w.uuid(id)
            writeEntry(e, devices: devices, &w)
            w.uint64(e.fingerprint)
        }
        return w.bytes
    }

    static func decodeState(_ bytes: [UInt8]) throws(SyncFormatError) -> PageState {
        var r = SyncReader(bytes)
        guard Array(try r.raw(4)) == stateMagic else { throw .badMagic }
        let v = try r.uint16()
        guard v <= version else { throw .newerVersion(Int(v)) }
        _ = try r.uint16()
        let (devices, tombstones) = try readTables(&r)
        let n = try r.count(limit: maxTable, minBytes: 27)
        var state = PageState(elements: [:], tombstones: tombstones)
        for _ in 0..<n {
            let id = try r.uuid()
            let (stamp, key) = try readEntry(devices: devices, &r)
            state.elements[id] = ElementEntry(stamp: stamp, key: key, fingerprint: try r.uint64())
        }
        return state
    }

    // MARK: Shared tables

    private static func writeTables(_ state: PageState, _ w: inout SyncWriter) -> [UUID: Int] {
        // Few devices, many elements: a short list searched from its last find, not a set.
        var distinct: [UUID] = []
        var lastDevice: UUID?
        for e in state.elements.values where e.stamp.device != lastDevice {
            lastDevice = e.stamp.device
            if !distinct.contains(e.stamp.device) { distinct.append(e.stamp.device) }
        }
        let devices = distinct.sorted { $0.precedesInBytes($1) }
        w.varint(devices.count)
        for d in devices { w.uuid(d) }
        let tombs = state.tombstones.sorted { $0.precedesInBytes($1) }
        w.varint(tombs.count)
        for t in tombs { w.uuid(t) }
        var index: [UUID: Int] = [:]
        for (i, d) in devices.enumerated() { index[d] = i }
        return index
    }

    private static func readTables(_ r: inout SyncReader) throws(SyncFormatError) -> ([UUID], Set<UUID>) {
        let nd = try r.count(limit: maxTable, minBytes: 16)
        var devices: [UUID] = []
        for _ in 0..<nd { devices.append(try r.uuid()) }
        guard Set(devices).count == nd else { throw .invalid(r.offset, "device table repeats a device") }
        let nt = try r.count(limit: maxTable, minBytes: 16)
        var tombstones = Set<UUID>()
        tombstones.reserveCapacity(nt)
        for _ in 0..<nt { tombstones.insert(try r.uuid()) }
        guard tombstones.count == nt else { throw .invalid(r.offset, "tombstones repeat an id") }
        return (devices, tombstones)
    }

    private static func writeEntry(_ e: ElementEntry, devices: [UUID: Int], _ w: inout SyncWriter) {
        w.varint(e.stamp.clock)
        w.varint(devices[e.stamp.device]!)
        w.varint(e.key.digits.count)
        for d in e.key.digits { w.varint(UInt64(d)) }
    }

    private static func readEntry(devices: [UUID], _ r: inout SyncReader) throws(SyncFormatError) -> (Stamp, PositionKey) {
        let clock = try r.clock()
        let di = try r.varint()
        guard di < UInt64(devices.count) else { throw .invalid(r.offset, "device index \(di) outside the table") }
        let kl = try r.varint()
        guard kl >= 1, kl <= UInt64(PositionKey.maxDigits) else { throw .invalid(r.offset, "key of \(kl) digits") }
        var digits: [UInt32] = []
        for _ in 0..<kl {
            let d = try r.varint()
            guard d <= UInt64(UInt32.max) else { throw .invalid(r.offset, "key digit too large") }
            digits.append(UInt32(d))
        }
        return (Stamp(clock: clock, device: devices[Int(di)]), PositionKey(digits))
    }
}
