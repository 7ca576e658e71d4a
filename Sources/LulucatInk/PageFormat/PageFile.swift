// The page content file: header, ink table, framed elements and a CRC32C trailer.
// Specified byte by byte in docs/page-format.md.

import Foundation

/// Encodes and decodes `pages/<page-id>.content` files, the format docs/page-format.md specifies
/// byte by byte.
///
/// An app reads and edits pages through a document session, which saves them; `PageFile` is for
/// reading or writing the bytes of one page outside a library (an extension given a page file, a
/// test fixture).
public enum PageFile {
    /// The four bytes every page content file begins with: `LNPG`.
    public static let magic: [UInt8] = [0x4C, 0x4E, 0x50, 0x47]
    /// The format version this build writes and the newest it reads. Version 1 (an ink table,
    /// elements without their own checks) is still read, and written as the canonical form
    /// (`canonicalVersion`, `canonicalBytes`) that hashes and exchanges pages.
    public static let version: UInt16 = 2
    /// The version of the **canonical form** of a page: the bytes that are a page's identity
    /// outside this device, independent of the version the page file is stored in (`version`).
    ///
    /// What depends on it: sync's page blobs (their bytes, hence their content-addressed names)
    /// and element fingerprints (`PageBlob`, docs/sync.md), and the store's content hash
    /// (`PageContent.contentHash`, used by verified migration). Changing it changes every blob
    /// name, every fingerprint and every content hash, so it never changes for existing data:
    /// a new page format version changes `version`, not this.
    package static let canonicalVersion: UInt16 = 1

    /// The canonical bytes of `content`: its page file in `canonicalVersion`, samples coded with
    /// `codec`. The one encoding that hashes, fingerprints or exchanges pages; use it, never
    /// `encode(_:codec:version:)` with a version literal.
    ///
    /// - Parameter reusing: coded strokes to copy instead of coding again (as in
    ///   `encode(_:codec:reusing:version:hollow:)`); the bytes are the same either way.
    /// - Parameter hollow: ids of hollow strokes `content` may hold; each must be copied from
    ///   `reusing` (otherwise `unencodable`).
    /// - Throws: `PageFormatError.unencodable` for a page no engine could store.
    package static func canonicalBytes(_ content: PageContent, codec: SampleCodecID, reusing: EncodedStrokes? = nil,
                                       hollow: Set<UUID> = []) throws(PageFormatError) -> [UInt8] {
        try encode(content, codec: codec, reusing: reusing, version: canonicalVersion, hollow: hollow).bytes
    }
    /// The fixed part of every version's header (magic, version, codec, flags, canvas size).
    package static let headerSize = 16
    /// Version 2's header: the 16 bytes, the element count (u32) and the header's CRC32C (u32).
    package static let checkedHeaderSize = 24
    package static let trailerSize = 4

    /// Element kind bytes.
    package typealias Kind = ElementCodec.Kind

    /// Most samples one stroke may hold (about 73 minutes at 240 Hz).
    public static let maxSamplesPerStroke = 1 << 20
    /// Most distinct inks a page may hold (version 1's ink table).
    package static let maxInks = 1 << 16

    // MARK: Encoding

    /// The bytes of a page content file holding `content`, its samples coded with `codec`.
    ///
    /// - Throws: `PageFormatError.unencodable` for an element `ElementCodec.check` refuses, or (version
    ///   1) more than `maxInks` distinct inks.
    public static func encode(_ content: PageContent, codec: SampleCodecID = .compact, version: UInt16 = version) throws(PageFormatError) -> [UInt8] {
        try encode(content, codec: codec, reusing: nil, version: version).bytes
    }

    /// Encodes a page, copying the coded samples of strokes `reusing` already holds instead of
    /// coding them again, and returns the coded strokes of the new file for the next save.
    ///
    /// - Parameter hollow: ids of hollow strokes (`decodeKeepingStrokes(_:hollowing:)`) that
    ///   `content` may hold: each must be copied from `cache`; one that would be coded from its
    ///   (missing) samples is refused (`unencodable`).
    package static func encode(_ content: PageContent, codec: SampleCodecID, reusing cache: EncodedStrokes?, version: UInt16 = version,
                               hollow: Set<UUID> = []) throws(PageFormatError) -> (bytes: [UInt8], strokes: EncodedStrokes) {
        precondition(version == 1 || version == 2, "page format version \(version)")
        let reuse = cache?.codec == codec ? cache : nil
        // A version-2 file from a version-2 file: the records of unchanged strokes are copied as
        // they are, in runs (`spliceVersion2`), neither checked nor coded again.
        let splicing = version == 2 && reuse.map { r in
            r.bytes.count >= checkedHeaderSize + trailerSize && r.bytes[4] == 2 && r.bytes[5] == 0
        } == true
        var estimate = checkedHeaderSize + trailerSize + 16
        if splicing {
            estimate += reuse!.bytes.count + 4096
        } else {
            for element in content.elements {
                try ElementCodec.check(element)
                if case .stroke(let s) = element {
                    estimate += 40 + s.samples.count * (codec == .fixed16 ? 16 + 2 * s.channels.rawValue.nonzeroBitCount : 4)
                }
            }
        }
        var w = ByteWriter(capacity: estimate)
        w.writeBytes(magic)
        w.writeUInt16(version)
        w.writeUInt8(codec.rawValue)
        w.writeUInt8(0)  // flags, reserved
        w.writeInt32(content.canvasSize.width)
        w.writeInt32(content.canvasSize.height)
        var parts: [UUID: Range<Int>] = [:]
        parts.reserveCapacity(content.elements.count)
        if version == 1 {
            try encodeVersion1(content, codec: codec, reuse: reuse, hollow: hollow, into: &w, parts: &parts)
        } else {
            guard content.elements.count <= Int(UInt32.max) else { throw .unencodable("too many elements") }
            w.writeUInt32(UInt32(content.elements.count))
            w.writeUInt32(CRC32C.checksum(w.bytes))
            if splicing, let reuse {
                try spliceVersion2(content.elements, codec: codec, from: reuse, hollow: hollow, into: &w, parts: &parts)
            } else {
              for element in content.elements {
                if case .stroke(let s) = element, let reuse, let part = reuse.parts[s.id] {
                    // An unchanged stroke: copy its coded samples from the last file.
                    parts[s.id] = reuse.bytes.withUnsafeBytes {
                        ElementCodec.writeStrokeRecord(id: s.id, ink: s.ink, coded: UnsafeRawBufferPointer(rebasing: $0[part]), into: &w)
                    }
                    continue
                }
                try refuseHollow(element, hollow)
                if let part = try ElementCodec.writeRecord(element, codec: codec, into: &w) { parts[element.id] = part }
              }
            }
        }
        let crc = CRC32C.checksum(w.bytes)
        w.writeUInt32(crc)
        return (w.bytes, EncodedStrokes(codec: codec, bytes: w.bytes, parts: parts))
    }

    /// Encodes a page whose first elements are, unchanged and in order, those of the page file
    /// `previous` was read from or written as, and whose other elements were appended since
    /// (a stroke written on a page, the usual save). The file's records are copied as one block,
    /// its header is written again (element count, canvas size) and only the appended elements
    /// are coded and checksummed: the trailer's CRC32C is combined from the old one
    /// (`CRC32C.combine`), so the work is the bytes appended plus one copy, not a step per stroke.
    /// The bytes are exactly those `encode(_:codec:reusing:)` gives for the same content.
    ///
    /// The caller vouches that `content.elements` begins with the file's elements as they were
    /// coded (the session knows: every change since the file was read or written appended
    /// elements or resized the canvas). What can be checked without a step per stroke is checked:
    /// the codec, the version (2), that the content holds at least the file's elements, and that
    /// the last of them and the appended ones are what the coded strokes say.
    ///
    /// - Returns: nil when `previous` cannot be extended so (another codec, a version-1 file,
    ///   fewer elements than the file holds); encode the page whole then.
    /// - Throws: `PageFormatError.unencodable` for an appended element `ElementCodec.check` refuses.
    package static func encode(_ content: PageContent, codec: SampleCodecID,
                               appendingTo previous: EncodedStrokes) throws(PageFormatError) -> (bytes: [UInt8], strokes: EncodedStrokes)? {
        var strokes = previous
        guard let bytes = try extend(&strokes, to: content, codec: codec) else { return nil }
        return (bytes, strokes)
    }

    /// `encode(_:codec:appendingTo:)` in place: `strokes` becomes the coded strokes of the new
    /// file. When nothing else holds `strokes`' buffers (the session hands its own over), the
    /// file grows where it is: no copy of the old records at all, the work is the appended
    /// elements'. Otherwise they are copied once, as by `encode(_:codec:appendingTo:)`.
    ///
    /// - Returns: the new file's bytes (sharing `strokes`' buffer), or nil, `strokes` unchanged,
    ///   when it cannot be extended so.
    /// - Throws: `PageFormatError.unencodable` for an appended element `ElementCodec.check`
    ///   refuses, `strokes` unchanged.
    package static func extend(_ strokes: inout EncodedStrokes, to content: PageContent,
                               codec: SampleCodecID) throws(PageFormatError) -> [UInt8]? {
        let oldLength = strokes.bytes.count
        guard strokes.codec == codec, oldLength >= checkedHeaderSize + trailerSize else { return nil }
        let (oldVersion, oldCount, oldTrailer, oldHeaderCRC) = strokes.bytes.withUnsafeBytes { raw in
            (UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 4, as: UInt16.self)),
             Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt32.self))),
             UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: oldLength - trailerSize, as: UInt32.self)),
             CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<checkedHeaderSize])))
        }
        let elements = content.elements
        guard oldVersion == 2, oldCount <= elements.count, elements.count <= Int(UInt32.max) else { return nil }
        // The last element the file holds is its last stroke still (when a stroke), and no
        // appended stroke is one of the file's: a caller whose page is not the file's plus
        // appended elements is, in the usual mistakes, refused here (and the page coded whole).
        if oldCount > 0, case .stroke(let s) = elements[oldCount - 1], strokes.parts[s.id] == nil { return nil }
        var extra = trailerSize
        for element in elements[oldCount...] {
            try ElementCodec.check(element)
            if case .stroke(let s) = element {
                if strokes.parts[s.id] != nil { return nil }
                extra += 40 + s.samples.count * (codec == .fixed16 ? 16 + 2 * s.channels.rawValue.nonzeroBitCount : 4)
            } else {
                extra += 64
            }
        }
        // From here nothing throws (every appended element checked): the buffer is taken over.
        let recordsEnd = oldLength - trailerSize
        var w = ByteWriter(capacity: 0)
        swap(&w.bytes, &strokes.bytes)
        // One copy when the buffer is shared (or too small: then it grows by half at least, so
        // a page saved stroke by stroke is not copied at every save); none otherwise.
        let needed = recordsEnd + extra
        w.bytes.reserveCapacity(w.bytes.capacity >= needed ? needed : max(needed, oldLength + oldLength / 2))
        w.bytes.removeLast(trailerSize)
        // The header again: the canvas may have been resized, the count grew.
        w.bytes.withUnsafeMutableBytes { h in
            h.storeBytes(of: UInt32(bitPattern: content.canvasSize.width).littleEndian, toByteOffset: 8, as: UInt32.self)
            h.storeBytes(of: UInt32(bitPattern: content.canvasSize.height).littleEndian, toByteOffset: 12, as: UInt32.self)
            h.storeBytes(of: UInt32(elements.count).littleEndian, toByteOffset: 16, as: UInt32.self)
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(h)[0..<20]))
            h.storeBytes(of: crc.littleEndian, toByteOffset: 20, as: UInt32.self)
        }
        for element in elements[oldCount...] {
            let part: Range<Int>?
            do { part = try ElementCodec.writeRecord(element, codec: codec, into: &w) } catch {
                preconditionFailure("an element that checked could not be coded: \(error)")
            }
            if let part { strokes.parts[element.id] = part }
        }
        // CRC32C(new header ‖ old records ‖ new records) from the old trailer: the old records'
        // own CRC comes out of it by the old header's, and goes into the new one's.
        let recordsLength = recordsEnd - checkedHeaderSize
        let newHeaderCRC = w.bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<checkedHeaderSize])) }
        let oldRecordsCRC = CRC32C.suffix(of: oldTrailer, prefix: oldHeaderCRC, lengthB: recordsLength)
        let throughOld = CRC32C.combine(newHeaderCRC, oldRecordsCRC, lengthB: recordsLength)
        let crc = w.bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[recordsEnd...]), continuing: throughOld) }
        w.writeUInt32(crc)
        strokes.bytes = w.bytes
        return w.bytes
    }

    /// Version 2's records from a version-2 file's coded strokes: a stroke `reuse` holds (its
    /// samples unchanged: changed ones are forgotten) whose record in that file names the same id
    /// and ink is copied whole, record checks included (a record does not depend on where it is),
    /// and records that follow each other in both files are copied as one block. The work for an
    /// unchanged stroke is a lookup and a 23-byte comparison; other elements are coded.
    static func spliceVersion2(_ elements: [Element], codec: SampleCodecID, from reuse: EncodedStrokes, hollow: Set<UUID>,
                               into w: inout ByteWriter, parts: inout [UUID: Range<Int>]) throws(PageFormatError) {
        let old = reuse.bytes
        let recordsEnd = old.count - trailerSize
        // The old bytes not copied yet: a run of whole records, and where it lands in `w`.
        var run: Range<Int>?
        var runTarget = 0
        func flush(_ w: inout ByteWriter) {
            guard let r = run else { return }
            old.withUnsafeBytes { w.writeBytes(UnsafeRawBufferPointer(rebasing: $0[r])) }
            run = nil
        }
        for element in elements {
            if case .stroke(let s) = element, let part = reuse.parts[s.id],
               let record = strokeRecord(of: s, codedAt: part, in: old, recordsEnd: recordsEnd) {
                if let r = run, r.upperBound == record.lowerBound {
                    run = r.lowerBound..<record.upperBound
                } else {
                    flush(&w)
                    run = record
                    runTarget = w.count
                }
                // Where its coded part lands: the run's place in `w` plus its offset in the run.
                let shift = runTarget - run!.lowerBound
                parts[s.id] = (part.lowerBound + shift)..<(part.upperBound + shift)
                continue
            }
            flush(&w)
            if case .stroke(let s) = element, let part = reuse.parts[s.id] {
                // Held, but its record is not where the coded part says (or the ink changed):
                // its coded samples are copied into a new record, as a version-1 file's are.
                try ElementCodec.check(element)
                parts[s.id] = old.withUnsafeBytes {
                    ElementCodec.writeStrokeRecord(id: s.id, ink: s.ink, coded: UnsafeRawBufferPointer(rebasing: $0[part]), into: &w)
                }
                continue
            }
            try refuseHollow(element, hollow)
            if let part = try ElementCodec.writeRecord(element, codec: codec, into: &w) { parts[element.id] = part }
        }
        flush(&w)
    }

    /// The whole record (kind to CRC) in a version-2 file `bytes` whose coded part is `part`,
    /// when it is a stroke record naming `stroke`'s id and ink; nil otherwise.
    static func strokeRecord(of stroke: Stroke, codedAt part: Range<Int>, in bytes: [UInt8], recordsEnd: Int) -> Range<Int>? {
        let length = 16 + 7 + part.count
        let payloadStart = part.lowerBound - 23
        let start = payloadStart - 2 - varintSize(UInt64(length)) - 1
        let end = part.upperBound + trailerSize
        guard start >= checkedHeaderSize, end <= recordsEnd else { return nil }
        return bytes.withUnsafeBytes { raw -> Range<Int>? in
            guard raw[start] == Kind.stroke else { return nil }
            // The length varint as written (the shortest form) and the id and ink of the stroke.
            var v = UInt64(length), i = start + 1
            while v >= 0x80 {
                guard raw[i] == UInt8(truncatingIfNeeded: v) | 0x80 else { return nil }
                v >>= 7
                i += 1
            }
            guard raw[i] == UInt8(v) else { return nil }
            let matches = withUnsafeBytes(of: stroke.id.uuid) { id in
                id.elementsEqual(UnsafeRawBufferPointer(rebasing: raw[payloadStart..<payloadStart + 16]))
            }
            let ink = stroke.ink, k = payloadStart + 16
            guard matches, raw[k] == ink.tool.rawValue, raw[k + 1] == ink.color.r, raw[k + 2] == ink.color.g,
                  raw[k + 3] == ink.color.b, raw[k + 4] == ink.color.a,
                  raw[k + 5] == UInt8(truncatingIfNeeded: ink.width), raw[k + 6] == UInt8(truncatingIfNeeded: ink.width >> 8) else { return nil }
            return start..<end
        }
    }

    /// Version 1 after the header: the ink table, the element count, the elements framed without checks.
    static func refuseHollow(_ element: Element, _ hollow: Set<UUID>) throws(PageFormatError) {
        if !hollow.isEmpty, case .stroke(let s) = element, s.samples.isEmpty, hollow.contains(s.id) {
            throw .unencodable("stroke \(s.id) was read hollow and is not in the coded strokes to copy")
        }
    }

    static func encodeVersion1(_ content: PageContent, codec: SampleCodecID, reuse: EncodedStrokes?, hollow: Set<UUID> = [],
                               into w: inout ByteWriter, parts: inout [UUID: Range<Int>]) throws(PageFormatError) {
        var inks: [Ink] = []
        var inkIndex: [Ink: Int] = [:]
        // Strokes in a row usually share their ink: the last one found is asked first.
        var last: (ink: Ink, index: Int)?
        func index(of ink: Ink) -> Int? {
            if let l = last, l.ink == ink { return l.index }
            guard let i = inkIndex[ink] else { return nil }
            last = (ink, i)
            return i
        }
        for element in content.elements {
            guard case .stroke(let s) = element, index(of: s.ink) == nil else { continue }
            inkIndex[s.ink] = inks.count
            last = (s.ink, inks.count)
            inks.append(s.ink)
        }
        guard inks.count <= maxInks else { throw .unencodable("page has \(inks.count) distinct inks, more than \(maxInks)") }
        w.writeVarint(inks.count)
        for ink in inks { ElementCodec.writeInk(ink, into: &w) }
        w.writeVarint(content.elements.count)
        for element in content.elements {
            guard case .stroke(let s) = element else {
                try ElementCodec.writeFramed(element, inkIndex: nil, codec: codec, into: &w)
                continue
            }
            let ink = index(of: s.ink)!
            if let reuse, let part = reuse.parts[s.id] {
                w.writeUInt8(Kind.stroke)
                w.writeVarint(16 + varintSize(UInt64(ink)) + part.count)
                w.writeUUID(s.id)
                w.writeVarint(ink)
                let start = w.count
                reuse.bytes.withUnsafeBytes { w.writeBytes(UnsafeRawBufferPointer(rebasing: $0[part])) }
                parts[s.id] = start..<w.count
                continue
            }
            try refuseHollow(element, hollow)
            var payload = ByteWriter(capacity: 64)
            let part = try ElementCodec.writePayload(element, inkIndex: ink, codec: codec, into: &payload)!
            w.writeUInt8(Kind.stroke)
            w.writeVarint(payload.count)
            let shift = w.count
            w.writeBytes(payload.bytes)
            parts[s.id] = (part.lowerBound + shift)..<(part.upperBound + shift)
        }
    }

    static func varintSize(_ v: UInt64) -> Int {
        var n = 1, x = v
        while x >= 0x80 { x >>= 7; n += 1 }
        return n
    }

    // MARK: Decoding

    /// The header of a page file, readable without decoding its elements.
    package struct Header: Equatable, Sendable {
        package var version: UInt16
        package var codec: SampleCodecID
        package var canvasSize: QuantizedSize
        /// Version 2: how many elements follow (checked by `verifyHeaderChecksum`).
        package var elementCount: Int?
    }

    /// Decodes a page content file, checking its magic, version, codec and CRC32C first.
    ///
    /// - Throws: `PageFormatError` saying what is wrong and at which byte.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(PageFormatError) -> PageContent {
        var parts: [UUID: Range<Int>]? = nil
        return try decode(bytes, recording: &parts)
    }

    /// Decodes a page and keeps where each stroke's coded samples are, so that saving the page
    /// again copies the strokes that did not change.
    package static func decodeKeepingStrokes(_ bytes: [UInt8]) throws(PageFormatError) -> (content: PageContent, strokes: EncodedStrokes) {
        var parts: [UUID: Range<Int>]? = [:]
        let content = try bytes.withUnsafeBytes { raw in
            Result { () throws(PageFormatError) in try decode(raw, recording: &parts) }
        }.get()
        let header = try bytes.withUnsafeBytes { raw in Result { () throws(PageFormatError) in try readHeader(raw) } }.get()
        return (content, EncodedStrokes(codec: header.codec, bytes: bytes, parts: parts ?? [:]))
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, recording parts: inout [UUID: Range<Int>]?) throws(PageFormatError) -> PageContent {
        var elements: [Element] = []
        let header = try walk(bytes, recording: &parts, reserve: { elements.reserveCapacity($0) }) { elements.append($0) }
        return PageContent(canvasSize: header.canvasSize, elements: elements)
    }

    /// Decodes a page keeping its coded strokes, as `decodeKeepingStrokes`, except that the strokes
    /// `hollowing` picks are **hollow**: their id and ink are read, their samples are not decoded
    /// (the stroke is returned with no samples and no optional channels) and their coded bytes are
    /// kept as for any stroke. `hollowing` is asked, for each stroke of a version-2 file, its id,
    /// the digest of its coded bytes (`EncodedStrokes.digest`) and the file's codec; version-1
    /// files are decoded whole. The file's CRC32C is checked as always, but a hollow stroke's coded
    /// samples are not: pick only strokes whose bytes (by digest) were decoded before.
    ///
    /// A hollow stroke is a placeholder, not the page's stroke: it is good only for what needs its
    /// id, its ink and its coded bytes (an `encode` that copies it from the returned coded
    /// strokes, in the same codec). Returns the ids of the hollow strokes.
    package static func decodeKeepingStrokes(_ bytes: [UInt8], hollowing: (UUID, UInt64, SampleCodecID) -> Bool) throws(PageFormatError)
        -> (content: PageContent, strokes: EncodedStrokes, hollow: Set<UUID>) {
        var parts: [UUID: Range<Int>]? = [:]
        var hollow = Set<UUID>()
        let (content, header) = try withoutActuallyEscaping(hollowing) { hollowing in
            bytes.withUnsafeBytes { raw in
                Result { () throws(PageFormatError) in
                    var elements: [Element] = []
                    let header = try walk(raw, recording: &parts, hollowing: hollowing, hollow: &hollow,
                                          reserve: { elements.reserveCapacity($0) }) { elements.append($0) }
                    return (PageContent(canvasSize: header.canvasSize, elements: elements), header)
                }
            }
        }.get()
        return (content, EncodedStrokes(codec: header.codec, bytes: bytes, parts: parts ?? [:]), hollow)
    }

    /// What a page file holds, checked exactly as `decode` checks it (magic, version, codec, CRC,
    /// every element and sample), without keeping its elements: each is decoded, counted and
    /// dropped, so the memory it takes is one element's, not the page's. Import and verify use
    /// it on pages they only check (export-format.md §6).
    package static func check(_ bytes: UnsafeRawBufferPointer) throws(PageFormatError) -> PageSummary {
        var parts: [UUID: Range<Int>]? = nil
        var summary = PageSummary(canvasSize: QuantizedSize(width: 0, height: 0), elementCount: 0, sampleCount: 0, assetIDs: [])
        let canvas = try readHeader(bytes).canvasSize
        let header = try walk(bytes, recording: &parts, reserve: { _ in }) { element in
            summary.elementCount += 1
            switch element {
            case .stroke(let s):
                summary.sampleCount += s.samples.count
                if let b = s.centreBounds, !b.meets(canvas) { summary.strokesOffPage += 1 }
            case .image(let i): summary.assetIDs.insert(i.assetID)
            case .unknown: break
            }
        }
        summary.canvasSize = header.canvasSize
        return summary
    }

    package static func check(_ bytes: [UInt8]) throws(PageFormatError) -> PageSummary {
        try bytes.withUnsafeBytes { raw in Result { () throws(PageFormatError) in try check(raw) } }.get()
    }

    /// Checks the header and CRC, then decodes the elements in order, handing each to `visit`.
    private static func walk(_ bytes: UnsafeRawBufferPointer, recording parts: inout [UUID: Range<Int>]?,
                             reserve: (Int) -> Void, visit: (Element) -> Void) throws(PageFormatError) -> Header {
        var hollow = Set<UUID>()
        return try walk(bytes, recording: &parts, hollowing: nil, hollow: &hollow, reserve: reserve, visit: visit)
    }

    private static func walk(_ bytes: UnsafeRawBufferPointer, recording parts: inout [UUID: Range<Int>]?,
                             hollowing: ((UUID, UInt64, SampleCodecID) -> Bool)?, hollow: inout Set<UUID>,
                             reserve: (Int) -> Void, visit: (Element) -> Void) throws(PageFormatError) -> Header {
        let header = try readHeader(bytes)
        try verifyChecksum(bytes)
        if header.version >= 2 {
            // The whole file checks, so its records do too: they are not checked again.
            try verifyHeaderChecksum(bytes)
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[checkedHeaderSize..<bytes.count - trailerSize]), base: checkedHeaderSize)
            let count = header.elementCount ?? 0
            guard count <= r.remaining / ElementCodec.minimumRecord else {
                throw .invalidField(offset: 16, "element count \(count) but only \(r.remaining) bytes of elements")
            }
            reserve(count)
            var part: Range<Int>?
            for _ in 0..<count {
                part = nil
                if let hollowing {
                    let at = r
                    if let h = try ElementCodec.readStrokeRecordHead(&r) {
                        let digest = EncodedStrokes.digest(codec: header.codec, ink: h.ink,
                                                           coded: UnsafeRawBufferPointer(rebasing: bytes[h.part]))
                        if hollowing(h.id, digest, header.codec) {
                            guard hollow.insert(h.id).inserted else {
                                throw .invalidField(offset: h.part.lowerBound, "stroke \(h.id) appears twice")
                            }
                            parts?[h.id] = h.part
                            visit(.stroke(Stroke(id: h.id, ink: h.ink, samples: [])))
                            continue
                        }
                    }
                    r = at
                }
                let element = try ElementCodec.readRecord(&r, codec: header.codec, verify: false, part: &part)
                if let part { parts?[element.id] = part }
                visit(element)
            }
            guard r.isAtEnd else {
                throw .invalidField(offset: r.fileOffset, "\(r.remaining) bytes left over after the last element")
            }
            return header
        }
        var r = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[headerSize..<bytes.count - trailerSize]), base: headerSize)

        // Each ink takes 7 bytes and each element at least 2, so these counts are bounded by the bytes.
        let inkCount = try r.readCount(limit: min(maxInks, r.remaining / 7), "ink count")
        var inks: [Ink] = []
        inks.reserveCapacity(inkCount)
        for _ in 0..<inkCount { inks.append(try ElementCodec.readInk(&r)) }

        let elementCount = try r.readCount(limit: r.remaining / 2, "element count")
        reserve(elementCount)
        var part: Range<Int>?
        for _ in 0..<elementCount {
            part = nil
            let element = try ElementCodec.readFramed(&r, inks: inks, codec: header.codec, part: &part)
            if let part { parts?[element.id] = part }
            visit(element)
        }
        guard r.isAtEnd else {
            throw .invalidField(offset: r.fileOffset, "\(r.remaining) bytes left over after the last element")
        }
        return header
    }

    /// Decodes the bytes of a page content file (version 1 or 2), checking its magic, version,
    /// codec and CRC32C first.
    ///
    /// - Throws: `PageFormatError` saying what is wrong and at which byte.
    public static func decode(_ bytes: [UInt8]) throws(PageFormatError) -> PageContent {
        try bytes.withUnsafeBytes { raw in Result { () throws(PageFormatError) in try decode(raw) } }.get()
    }

    /// Decodes a page content file read into `data`, as `decode(_:)` with its bytes does.
    ///
    /// - Throws: `PageFormatError` saying what is wrong and at which byte.
    public static func decode(_ data: Data) throws(PageFormatError) -> PageContent {
        try data.withUnsafeBytes { raw in Result { () throws(PageFormatError) in try decode(raw) } }.get()
    }

    /// Reads and checks the 16-byte header (magic, version, codec, flags).
    package static func readHeader(_ bytes: UnsafeRawBufferPointer) throws(PageFormatError) -> Header {
        var r = ByteReader(bytes)
        guard bytes.count >= 4 else {
            throw .truncated(offset: 0, needed: headerSize + trailerSize, available: bytes.count)
        }
        guard bytes.prefix(4).elementsEqual(magic) else { throw .badMagic }
        try r.skip(4)
        try r.need(headerSize - 4)
        let version = try r.readUInt16()
        guard version >= 1 else { throw .invalidField(offset: 4, "format version 0") }
        guard version <= self.version else { throw .unsupportedVersion(version) }
        let codecByte = try r.readUInt8()
        guard let codec = SampleCodecID(rawValue: codecByte) else { throw .unknownCodec(codecByte) }
        let flags = try r.readUInt8()
        guard flags == 0 else { throw .invalidField(offset: 7, "reserved flags 0x\(String(flags, radix: 16)) are not zero") }
        let size = QuantizedSize(width: try r.readInt32(), height: try r.readInt32())
        guard size.width >= 0, size.height >= 0 else {
            throw .invalidField(offset: 8, "negative canvas size \(size.width) x \(size.height)")
        }
        let fixed = version >= 2 ? checkedHeaderSize : headerSize
        guard bytes.count >= fixed + trailerSize else {
            throw .truncated(offset: bytes.count, needed: fixed + trailerSize - bytes.count, available: 0)
        }
        let count = version >= 2 ? Int(try r.readUInt32()) : nil
        return Header(version: version, codec: codec, canvasSize: size, elementCount: count)
    }

    /// Version 2: checks the header's own CRC32C (bytes 20..<24, over bytes 0..<20).
    package static func verifyHeaderChecksum(_ bytes: UnsafeRawBufferPointer) throws(PageFormatError) {
        guard bytes.count >= checkedHeaderSize else {
            throw .truncated(offset: bytes.count, needed: checkedHeaderSize - bytes.count, available: 0)
        }
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 20, as: UInt32.self))
        let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<20]))
        guard stored == computed else { throw .invalidField(offset: 20, "the header's CRC32C is 0x\(String(computed, radix: 16)) but it says 0x\(String(stored, radix: 16))") }
    }

    /// Checks the CRC32C trailer over everything before it.
    package static func verifyChecksum(_ bytes: UnsafeRawBufferPointer) throws(PageFormatError) {
        let body = UnsafeRawBufferPointer(rebasing: bytes[0..<bytes.count - trailerSize])
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - trailerSize, as: UInt32.self))
        let computed = CRC32C.checksum(body)
        guard stored == computed else { throw .checksumMismatch(stored: stored, computed: computed) }
    }
}

/// What `PageFile.check` reports of a valid page: what document.json records of it, and its size.
package struct PageSummary: Hashable, Sendable {
    package var canvasSize: QuantizedSize
    package var elementCount: Int
    package var sampleCount: Int
    /// Asset ids the page's images show.
    package var assetIDs: Set<UUID>
    /// Strokes none of whose samples' centres lies on the page: ink the page never shows (a
    /// stroke partly off the page, drawn past its edge, is not counted). Verify warns of them.
    package var strokesOffPage: Int

    package init(canvasSize: QuantizedSize, elementCount: Int, sampleCount: Int, assetIDs: Set<UUID>,
                 strokesOffPage: Int = 0) {
        self.canvasSize = canvasSize
        self.elementCount = elementCount
        self.sampleCount = sampleCount
        self.assetIDs = assetIDs
        self.strokesOffPage = strokesOffPage
    }

    /// The summary of decoded content.
    package init(_ content: PageContent) {
        self.init(canvasSize: content.canvasSize, elementCount: content.elements.count,
                  sampleCount: content.sampleCount, assetIDs: content.assetIDs,
                  strokesOffPage: content.strokes.reduce(0) { n, s in n + (s.centreBounds.map { $0.meets(content.canvasSize) } == false ? 1 : 0) })
    }
}

// MARK: Salvage

extension PageFile {
    /// What a damaged page file still holds: every element whose own record checks.
    package struct Salvage: Sendable, Equatable {
        package var content: PageContent
        /// How many elements the file says it holds, when its header checks (else unknown).
        package var expected: Int?
        /// Whether the header (canvas size, codec, element count) checked.
        package var headerIntact: Bool
        /// Whether the file decoded whole (nothing was lost).
        package var intact: Bool
        package var salvaged: Int { content.elements.count }
        /// Elements lost: `expected − salvaged` when the header says how many there were.
        package var lost: Int? { expected.map { max(0, $0 - salvaged) } }
    }

    /// Most payload bytes a salvage checksums while searching for records (a file of garbage
    /// cannot make it take long).
    package static let salvageBudget = 256 << 20

    /// Every element of a page file whose own bytes still parse and check, in file order.
    ///
    /// A file that decodes is returned whole. A damaged version-2 file gives each record whose
    /// header check and CRC32C match at any offset (the damage may have moved the framing), decoded
    /// with the header's codec (or, with a damaged header, whichever codec decodes it exactly). A
    /// damaged version-1 file gives nothing: its elements carry no checks of their own, and an
    /// unchecked element could be a changed one. Never throws; never returns an element whose bytes
    /// did not check.
    ///
    /// - Parameter fallback: the canvas size when the header is damaged (document.json's).
    package static func salvage(_ bytes: [UInt8], canvasSize fallback: QuantizedSize) -> Salvage {
        if let content = try? decode(bytes) {
            return Salvage(content: content, expected: content.elements.count, headerIntact: true, intact: true)
        }
        return bytes.withUnsafeBytes { raw in
            var header: Header?
            if let h = try? readHeader(raw), h.version >= 2, (try? verifyHeaderChecksum(raw)) != nil { header = h }
            var codecs: [SampleCodecID]
            if let header { codecs = [header.codec] } else {
                codecs = raw.count > 6 ? SampleCodecID(rawValue: raw[6]).map { [$0] } ?? [] : []
                for c in [SampleCodecID.compact, .fixed16] where !codecs.contains(c) { codecs.append(c) }
            }
            var result = Salvage(content: PageContent(canvasSize: header?.canvasSize ?? fallback), expected: header?.elementCount,
                                 headerIntact: header != nil, intact: false)
            var seen = Set<UUID>()
            var budget = salvageBudget
            var offset = header != nil ? checkedHeaderSize : 0
            while offset < raw.count, budget > 0 {
                guard let record = ElementCodec.record(in: raw, at: offset, verify: true, budget: &budget) else {
                    offset += 1
                    continue
                }
                var element: Element?
                for codec in codecs {
                    var p = ByteReader(UnsafeRawBufferPointer(rebasing: raw[record.payload]), base: record.payload.lowerBound)
                    var part: Range<Int>?
                    if let e = try? ElementCodec.readPayload(kind: record.kind, &p, inks: nil, codec: codec, part: &part) {
                        element = e
                        break
                    }
                }
                guard let element, seen.insert(element.id).inserted else {
                    offset += 1
                    continue
                }
                result.content.elements.append(element)
                offset = record.end
            }
            return result
        }
    }
}

/// The coded bytes of each stroke of one page file (from its channel byte to the end of its coded
/// samples), kept so that the next save of the page copies unchanged strokes instead of coding
/// them again. A stroke whose samples change under the same id must be forgotten first.
package struct EncodedStrokes: Sendable {
    package let codec: SampleCodecID
    /// The whole page file the strokes were read from or written to.
    var bytes: [UInt8]
    var parts: [UUID: Range<Int>]

    /// How many strokes it holds.
    package var count: Int { parts.count }

    /// Drops strokes whose samples changed (or that left the page) so they are coded afresh.
    package mutating func forget<S: Sequence>(_ ids: S) where S.Element == UUID {
        for id in ids { parts[id] = nil }
    }

    /// A stable digest of what `stroke` holds, read from its coded bytes instead of its samples:
    /// FNV-1a 64 over the codec byte, the ink's 7 bytes as the page file writes them (tool, r, g,
    /// b, a, width little-endian) and the stroke's coded part (channel byte, sample count, coded
    /// samples). With the stroke's id it determines the stroke (a decoder rebuilds the stroke
    /// from exactly these). Nil when these coded strokes do not hold `stroke`. The same on every
    /// device and run (sync keeps it beside a stroke's fingerprint, docs/sync.md §6).
    package func digest(of stroke: Stroke) -> UInt64? {
        guard let part = parts[stroke.id] else { return nil }
        return bytes.withUnsafeBytes { Self.digest(codec: codec, ink: stroke.ink, coded: UnsafeRawBufferPointer(rebasing: $0[part])) }
    }

    static func digest(codec: SampleCodecID, ink: Ink, coded: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        @inline(__always) func mix(_ b: UInt8) { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        mix(codec.rawValue)
        mix(ink.tool.rawValue)
        mix(ink.color.r); mix(ink.color.g); mix(ink.color.b); mix(ink.color.a)
        mix(UInt8(truncatingIfNeeded: ink.width)); mix(UInt8(truncatingIfNeeded: ink.width >> 8))
        for b in coded { mix(b) }
        return h
    }
}
