// The model's JSON form (docs/json-form.md): copy and paste, drag and drop, state restoration.
// Written by hand, not synthesized, so the form is the documented one and stays stable.

import Foundation

/// The encoder and decoder that give the documented bytes of the JSON form.
public enum InkJSON {
    /// Sorted keys, no slashes escaped, no whitespace: the exact bytes docs/json-form.md shows.
    public static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }

    /// The JSON form of `value` (a `PageContent`, an `Element`, a `Stroke`, ...), in the
    /// documented canonical bytes: what an app puts on the pasteboard or in a drag session.
    /// - Throws: `EncodingError` when `value` cannot be encoded (the model's types always can).
    public static func encode<T: Encodable>(_ value: T) throws -> Data { try encoder().encode(value) }
    /// Reads a value of `type` from its JSON form, accepting any equivalent JSON (keys in any
    /// order, whitespace, escaped slashes). Every value read is exactly the value written.
    /// - Throws: `DecodingError.dataCorrupted` saying what is wrong when the JSON is not that
    ///   form (a wrong count of numbers, a number out of its range, two elements with one id, ...).
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try JSONDecoder().decode(type, from: data)
    }
}

/// Reads a fixed-length array of integers in their type's range, or says which is wrong.
private func integers<T: FixedWidthInteger & Decodable>(_ decoder: Decoder, _ count: Int, _ what: String) throws -> [T] {
    var c = try decoder.unkeyedContainer()
    var out: [T] = []
    while !c.isAtEnd { out.append(try c.decode(T.self)) }
    guard out.count == count else {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                debugDescription: "\(what) has \(out.count) numbers, not \(count)"))
    }
    return out
}

private func encodeIntegers<T: FixedWidthInteger & Encodable>(_ values: [T], _ encoder: Encoder) throws {
    var c = encoder.unkeyedContainer()
    for v in values { try c.encode(v) }
}

extension Sample: Codable {
    /// `[x, y, radius, pressure, time]`.
    public init(from decoder: Decoder) throws {
        var c = try decoder.unkeyedContainer()
        x = try c.decode(Int32.self)
        y = try c.decode(Int32.self)
        radius = try c.decode(UInt16.self)
        pressure = try c.decode(UInt16.self)
        time = try c.decode(UInt32.self)
        guard c.isAtEnd else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "a sample has more than 5 numbers"))
        }
    }
    /// Writes the JSON form (docs/json-form.md): `[x, y, radius, pressure, time]`.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.unkeyedContainer()
        try c.encode(x); try c.encode(y); try c.encode(radius); try c.encode(pressure); try c.encode(time)
    }
}

extension QuantizedSize: Codable {
    /// `[width, height]`.
    public init(from decoder: Decoder) throws {
        let v: [Int32] = try integers(decoder, 2, "a size")
        self.init(width: v[0], height: v[1])
    }
    /// Writes the JSON form (docs/json-form.md): `[width, height]`.
    public func encode(to encoder: Encoder) throws { try encodeIntegers([width, height], encoder) }
}

extension QuantizedRect: Codable {
    /// `[x, y, width, height]`.
    public init(from decoder: Decoder) throws {
        let v: [Int32] = try integers(decoder, 4, "a rectangle")
        self.init(x: v[0], y: v[1], width: v[2], height: v[3])
    }
    /// Writes the JSON form (docs/json-form.md): `[x, y, width, height]`.
    public func encode(to encoder: Encoder) throws { try encodeIntegers([x, y, width, height], encoder) }
}

extension RGBA8: Codable {
    /// `[r, g, b, a]`.
    public init(from decoder: Decoder) throws {
        let v: [UInt8] = try integers(decoder, 4, "a colour")
        self.init(r: v[0], g: v[1], b: v[2], a: v[3])
    }
    /// Writes the JSON form (docs/json-form.md): `[r, g, b, a]`.
    public func encode(to encoder: Encoder) throws { try encodeIntegers([r, g, b, a], encoder) }
}

extension Tool: Codable {
    /// The tool's name: `"pen"`, `"pencil"`, `"marker"`, `"highlighter"`, or `"tool<raw>"`.
    public init(from decoder: Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let tool = Tool(name: name) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown tool name '\(name)'"))
        }
        self = tool
    }
    /// Writes the JSON form (docs/json-form.md): the tool's name (`description`).
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

extension Ink: Codable {
    private enum Keys: String, CodingKey { case tool, color, width }
    /// Reads the JSON form (docs/json-form.md): `{"color": [r, g, b, a], "tool": name,
    /// "width": n}`.
    /// - Throws: `DecodingError` when a key is missing or a value is out of its range.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(tool: try c.decode(Tool.self, forKey: .tool), color: try c.decode(RGBA8.self, forKey: .color),
                  width: try c.decode(UInt16.self, forKey: .width))
    }
    /// Writes the JSON form (docs/json-form.md): `{"color": [r, g, b, a], "tool": name,
    /// "width": n}`.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(tool, forKey: .tool)
        try c.encode(color, forKey: .color)
        try c.encode(width, forKey: .width)
    }
}

extension Stroke: Codable {
    private enum Keys: String, CodingKey { case id, ink, samples, azimuth, altitude, opacity }
    /// - Throws: `DecodingError.dataCorrupted` when a channel's length differs from the samples'.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(id: try c.decode(UUID.self, forKey: .id), ink: try c.decode(Ink.self, forKey: .ink),
                  samples: try c.decode([Sample].self, forKey: .samples),
                  azimuth: try c.decodeIfPresent([UInt16].self, forKey: .azimuth),
                  altitude: try c.decodeIfPresent([UInt16].self, forKey: .altitude),
                  opacity: try c.decodeIfPresent([UInt16].self, forKey: .opacity))
        guard channelsAreConsistent else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "stroke \(id) has a channel whose length differs from its \(samples.count) samples"))
        }
    }
    /// Writes the JSON form (docs/json-form.md): `"id"`, `"ink"`, `"samples"` and a key for each
    /// optional channel the stroke has (`"azimuth"`, `"altitude"`, `"opacity"`).
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(id, forKey: .id)
        try c.encode(ink, forKey: .ink)
        try c.encode(samples, forKey: .samples)
        try c.encodeIfPresent(azimuth, forKey: .azimuth)
        try c.encodeIfPresent(altitude, forKey: .altitude)
        try c.encodeIfPresent(opacity, forKey: .opacity)
    }
}

extension ImageElement: Codable {
    private enum Keys: String, CodingKey { case id, asset, frame, rotation }
    /// Reads the JSON form (docs/json-form.md): `{"asset", "frame", "id", "rotation"}`.
    /// - Throws: `DecodingError` when a key is missing or a value is out of its range.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(id: try c.decode(UUID.self, forKey: .id), assetID: try c.decode(UUID.self, forKey: .asset),
                  frame: try c.decode(QuantizedRect.self, forKey: .frame), rotation: try c.decode(Int32.self, forKey: .rotation))
    }
    /// Writes the JSON form (docs/json-form.md): `{"asset", "frame", "id", "rotation"}`.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(id, forKey: .id)
        try c.encode(assetID, forKey: .asset)
        try c.encode(frame, forKey: .frame)
        try c.encode(rotation, forKey: .rotation)
    }
}

extension UnknownElement: Codable {
    private enum Keys: String, CodingKey { case kind, payload }
    /// - Throws: `DecodingError.dataCorrupted` when the payload is not base64 or shorter than an id.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let kind = try c.decode(UInt8.self, forKey: .kind)
        guard let payload = Data(base64Encoded: try c.decode(String.self, forKey: .payload)) else {
            throw DecodingError.dataCorruptedError(forKey: .payload, in: c, debugDescription: "payload is not base64")
        }
        do { try self.init(kind: kind, payload: payload) } catch {
            throw DecodingError.dataCorruptedError(forKey: .payload, in: c, debugDescription: "\(error)")
        }
    }
    /// Writes the JSON form (docs/json-form.md): `{"kind": n, "payload": base64}`, the payload
    /// with its id.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(kind, forKey: .kind)
        try c.encode(payload.base64EncodedString(), forKey: .payload)
    }
}

extension Element: Codable {
    /// An object with exactly one key naming the case: `{"stroke": ...}`, `{"image": ...}` or `{"unknown": ...}`.
    private enum Keys: String, CodingKey, CaseIterable { case stroke, image, unknown }
    /// Reads the JSON form (docs/json-form.md): an object with one key naming the case,
    /// `{"stroke": ...}`, `{"image": ...}` or `{"unknown": ...}`.
    /// - Throws: `DecodingError.dataCorrupted` when the object has none or several of those keys,
    ///   or the value of the case does not decode.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        guard c.allKeys.count == 1, let key = c.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "an element has exactly one of the keys stroke, image, unknown (found \(c.allKeys.map(\.stringValue)))"))
        }
        switch key {
        case .stroke: self = .stroke(try c.decode(Stroke.self, forKey: .stroke))
        case .image: self = .image(try c.decode(ImageElement.self, forKey: .image))
        case .unknown: self = .unknown(try c.decode(UnknownElement.self, forKey: .unknown))
        }
    }
    /// Writes the JSON form (docs/json-form.md): an object with one key naming the case,
    /// `{"stroke": ...}`, `{"image": ...}` or `{"unknown": ...}`.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        switch self {
        case .stroke(let s): try c.encode(s, forKey: .stroke)
        case .image(let i): try c.encode(i, forKey: .image)
        case .unknown(let u): try c.encode(u, forKey: .unknown)
        }
    }
}

extension PageContent: Codable {
    private enum Keys: String, CodingKey { case canvas, elements }
    /// - Throws: `DecodingError.dataCorrupted` when two elements share an id.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(canvasSize: try c.decode(QuantizedSize.self, forKey: .canvas),
                  elements: try c.decode([Element].self, forKey: .elements))
        guard Set(elements.map(\.id)).count == elements.count else {
            throw DecodingError.dataCorruptedError(forKey: .elements, in: c, debugDescription: "two elements share an id")
        }
    }
    /// Writes the JSON form (docs/json-form.md): `{"canvas": [width, height], "elements": [...]}`,
    /// elements in z-order.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(canvasSize, forKey: .canvas)
        try c.encode(elements, forKey: .elements)
    }
}
