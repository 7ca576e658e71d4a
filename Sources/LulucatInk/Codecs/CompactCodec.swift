// PLACEHOLDER until the compact codec lands: codes like fixed16 so the page format works end to end.

/// `compact`: lossless delta coding with a bit-level code. (Being written; see issue 2.)
public enum CompactCodec: SampleCodec {
    public static func encode(_ stroke: Stroke, into writer: inout ByteWriter) {
        Fixed16Codec.encode(stroke, into: &writer)
    }
    public static func decode(count: Int, channels: OptionalChannels, from reader: inout ByteReader)
        throws(PageFormatError) -> (samples: [Sample], channels: [[UInt16]]) {
        try Fixed16Codec.decode(count: count, channels: channels, from: &reader)
    }
}
