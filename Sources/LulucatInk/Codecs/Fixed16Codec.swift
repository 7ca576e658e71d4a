// The seed's fixed layout: 16 bytes a sample, little-endian, copied in bulk where the host allows.

/// `fixed16`: each sample as x Int32, y Int32, radius UInt16, pressure UInt16, time UInt32,
/// little-endian; then each present optional channel (azimuth, altitude, opacity) as UInt16 LE a
/// sample. It is also the BLOB layout of the SQLite engine.
package enum Fixed16Codec: SampleCodec {
    package static let bytesPerSample = 16

    /// Whether `Sample` in memory is exactly the little-endian record, so bulk copies are exact.
    @usableFromInline static let memoryIsRecord: Bool = {
        #if _endian(little)
        return MemoryLayout<Sample>.size == 16 && MemoryLayout<Sample>.stride == 16
            && MemoryLayout<Sample>.offset(of: \Sample.x) == 0 && MemoryLayout<Sample>.offset(of: \Sample.y) == 4
            && MemoryLayout<Sample>.offset(of: \Sample.radius) == 8
            && MemoryLayout<Sample>.offset(of: \Sample.pressure) == 10
            && MemoryLayout<Sample>.offset(of: \Sample.time) == 12
        #else
        return false
        #endif
    }()

    package static func encode(_ stroke: Stroke, into writer: inout ByteWriter) {
        writeRecords(stroke.samples, into: &writer)
        for channel in stroke.optionalChannelValues {
            writer.append(count: channel.count * 2) { dst in
                for (i, v) in channel.enumerated() { dst.storeBytes(of: v.littleEndian, toByteOffset: 2 * i, as: UInt16.self) }
            }
        }
    }

    /// Appends the 16-byte records of `samples`.
    package static func writeRecords(_ samples: [Sample], into writer: inout ByteWriter) {
        let n = samples.count * 16
        if memoryIsRecord {
            samples.withUnsafeBytes { src in writer.writeBytes(src) }
            return
        }
        writer.append(count: n) { dst in
            for (i, s) in samples.enumerated() {
                let o = i * 16
                dst.storeBytes(of: s.x.littleEndian, toByteOffset: o, as: Int32.self)
                dst.storeBytes(of: s.y.littleEndian, toByteOffset: o + 4, as: Int32.self)
                dst.storeBytes(of: s.radius.littleEndian, toByteOffset: o + 8, as: UInt16.self)
                dst.storeBytes(of: s.pressure.littleEndian, toByteOffset: o + 10, as: UInt16.self)
                dst.storeBytes(of: s.time.littleEndian, toByteOffset: o + 12, as: UInt32.self)
            }
        }
    }

    /// Reads `count` 16-byte records from `raw` (which must hold at least `count * 16` bytes).
    package static func readRecords(_ raw: UnsafeRawBufferPointer, count: Int) -> [Sample] {
        precondition(raw.count >= count * 16)
        return [Sample](unsafeUninitializedCapacity: count) { dst, initialized in
            if memoryIsRecord, count > 0 {
                UnsafeMutableRawPointer(dst.baseAddress!).copyMemory(from: raw.baseAddress!, byteCount: count * 16)
            } else {
                for i in 0..<count {
                    let o = i * 16
                    dst[i] = Sample(
                        x: Int32(littleEndian: raw.loadUnaligned(fromByteOffset: o, as: Int32.self)),
                        y: Int32(littleEndian: raw.loadUnaligned(fromByteOffset: o + 4, as: Int32.self)),
                        radius: UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: o + 8, as: UInt16.self)),
                        pressure: UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: o + 10, as: UInt16.self)),
                        time: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: o + 12, as: UInt32.self)))
                }
            }
            initialized = count
        }
    }

    package static func decode(count: Int, channels: OptionalChannels, from reader: inout ByteReader)
        throws(PageFormatError) -> (samples: [Sample], channels: [[UInt16]]) {
        let channelCount = channels.rawValue.nonzeroBitCount
        let (bytes, overflow) = count.multipliedReportingOverflow(by: 16 + 2 * channelCount)
        if overflow { throw PageFormatError.invalidField(offset: reader.fileOffset, "sample count \(count) is impossible") }
        try reader.need(bytes)
        let recordSlice = try reader.readSlice(count * 16)
        let samples = readRecords(recordSlice.buffer, count: count)
        var values: [[UInt16]] = []
        for _ in 0..<channelCount {
            let slice = try reader.readSlice(count * 2)
            values.append((0..<count).map { UInt16(littleEndian: slice.buffer.loadUnaligned(fromByteOffset: 2 * $0, as: UInt16.self)) })
        }
        return (samples, values)
    }
}
