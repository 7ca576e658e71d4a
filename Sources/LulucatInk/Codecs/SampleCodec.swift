// The sample codecs a page file can use, and what each must provide.

/// The sample codec of a page file, as the byte in its header names it.
public enum SampleCodecID: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// The seed's layout: 16 bytes a sample, little-endian; optional channels after.
    case fixed16 = 0
    /// Lossless delta coding with a bit-level entropy code; the default on disk.
    case compact = 1

    /// The codec's name, as document.json and `lnote` write it: `fixed16` or `compact`.
    public var description: String { self == .fixed16 ? "fixed16" : "compact" }
    /// The codec a name written by `description` names; nil for any other name.
    public init?(name: String) {
        guard let c = SampleCodecID.allCases.first(where: { $0.description == name }) else { return nil }
        self = c
    }
}

/// Codes the samples of one stroke (and its optional channels). The sample count and the channel
/// set are written by the page format before the coded bytes; the codec writes everything else.
package protocol SampleCodec {
    /// Appends the coded samples and optional channels of `stroke` to `writer`.
    static func encode(_ stroke: Stroke, into writer: inout ByteWriter)
    /// Decodes `count` samples and the channels in `channels` from `reader`, which holds exactly
    /// this stroke's coded bytes. Must check every count against what `reader` can hold before it
    /// allocates.
    static func decode(count: Int, channels: OptionalChannels, from reader: inout ByteReader)
        throws(PageFormatError) -> (samples: [Sample], channels: [[UInt16]])
}

extension SampleCodecID {
    var codec: any SampleCodec.Type {
        switch self {
        case .fixed16: return Fixed16Codec.self
        case .compact: return CompactCodec.self
        }
    }

    /// The coded bytes of one stroke's samples alone, as this codec writes them in a page file
    /// (sample count included; id, ink and element framing not).
    package func codedSampleBytes(_ stroke: Stroke) -> Int {
        var w = ByteWriter(capacity: stroke.samples.count * 4 + 16)
        w.writeVarint(stroke.samples.count)
        codec.encode(stroke, into: &w)
        return w.count
    }

    /// Encodes only a stroke's samples (no count), as a page file would, for benchmarks and BLOBs.
    package func encodeSamples(_ stroke: Stroke, into writer: inout ByteWriter) {
        codec.encode(stroke, into: &writer)
    }

    /// Decodes samples written by `encodeSamples`.
    package func decodeSamples(count: Int, channels: OptionalChannels, from reader: inout ByteReader)
        throws(PageFormatError) -> (samples: [Sample], channels: [[UInt16]]) {
        try codec.decode(count: count, channels: channels, from: &reader)
    }
}
