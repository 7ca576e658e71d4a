// Assets through the session: an image can only refer to an asset the package has, its file can be
// looked up, and the same bytes inserted twice are stored once (the asset id comes from a hash).

import Foundation
import LulucatInk

extension DocumentSession {
    /// The file of the asset an image shows.
    ///
    /// - Throws: `StoreError.invalidArgument` when the package has no such asset.
    public func assetPath(of image: ImageElement) throws(StoreError) -> String {
        try checkOpen()
        guard let ext = try assets()[image.assetID] else {
            throw .invalidArgument("the document has no image asset \(image.assetID)")
        }
        return package.assetPath(image.assetID, ext: ext)
    }

    /// The file of the asset an image shows, as a file URL (`assetPath(of:)`'s file), for
    /// Apple's APIs that take one (`CGImageSourceCreateWithURL`, `Data(contentsOf:)`).
    ///
    /// - Throws: `StoreError.invalidArgument` when the package has no such asset.
    public func assetURL(of image: ImageElement) throws(StoreError) -> URL {
        URL(fileURLWithPath: try assetPath(of: image), isDirectory: false)
    }

    /// The assets in the package, read from its folder once and kept up to date by this session.
    func assets() throws(StoreError) -> [UUID: String] {
        if let known = knownAssets { return known }
        let found = try PackageReader.scanAssets(package, fileSystem: fileSystem).assets
        knownAssets = found
        return found
    }

    /// Refuses a change that would make a page show an asset the package does not have (SPEC §5:
    /// no dangling reference, even through the public API).
    func checkAssets(of change: PageChange) throws(StoreError) {
        let elements: [Element]
        switch change {
        case .append(let e), .update(let e), .replace(_, let e): elements = e
        case .delete, .move, .resize: return
        }
        var known: [UUID: String]?
        for case .image(let image) in elements {
            if known == nil { known = try assets() }
            guard known?[image.assetID] != nil else {
                throw .invalidArgument("image \(image.id) shows asset \(image.assetID), which is not in the document; insert it with insertImage")
            }
        }
    }

    /// Stores an image's bytes as an asset, once: the id is made from a hash of the bytes (and the
    /// type), so the same picture inserted again finds its file and shares it. A file already
    /// there under that id with other bytes (a package from elsewhere) is left alone and the
    /// picture gets an id of its own.
    func storeAsset(_ data: Data, ext: String) throws(StoreError) -> UUID {
        let id = Self.assetID(data, ext: ext)
        let fs = fileSystem
        if try assets()[id] == ext {
            let path = package.assetPath(id, ext: ext)
            if let existing = try? fs.readFile(path, limit: data.count + 1), existing.elementsEqual(data) { return id }
            let fresh = UUID()
            try writeAsset(data, id: fresh, ext: ext)
            knownAssets?[fresh] = ext
            return fresh
        }
        try writeAsset(data, id: id, ext: ext)
        knownAssets?[id] = ext
        return id
    }

    /// A UUID (version 8: custom) from the first 16 bytes of SHA-256 over the type and the bytes.
    static func assetID(_ data: Data, ext: String) -> UUID {
        var message = Array(ext.utf8)
        message.append(0)
        message.append(contentsOf: data)
        var b = SHA256.hash(message)
        b[6] = (b[6] & 0x0F) | 0x80
        b[8] = (b[8] & 0x3F) | 0x80
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}
