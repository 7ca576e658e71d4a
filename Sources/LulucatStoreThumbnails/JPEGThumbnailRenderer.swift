// Thumbnails drawn by LulucatRender (the rasterizer and libjpeg-turbo's or ImageIO's JPEG), for the
// store's ThumbnailWriter: the opt-in product LulucatStoreThumbnails, registered by
// `Library.enableThumbnails()`.

import Foundation
import LulucatInk
import LulucatRender
import LulucatStore

extension Library {
    /// Makes every session of this process write page thumbnails (`thumbnails/<page>.jpg`, the
    /// library grid's covers), and `ThumbnailWriter.rebuild` draws them. Call it once at
    /// launch; calling it again, from any thread, changes nothing. Without it no thumbnail is
    /// written (docs/package-format.md: thumbnails are derived and optional).
    ///
    /// ```swift
    /// import LulucatStore
    /// import LulucatStoreThumbnails
    ///
    /// Library.enableThumbnails()
    /// ```
    public static func enableThumbnails() {
        ThumbnailRenderers.register(JPEGThumbnailRenderer())
    }
}

/// `Thumbnail.jpeg` with the package's images decoded as they are drawn.
struct JPEGThumbnailRenderer: ThumbnailRenderer {
    func jpeg(_ content: PageContent, width: Int, maxHeight: Int?, quality: Int,
              asset: (UUID) throws -> Data?) throws -> (data: Data, problems: [String]) {
        let (data, problems) = try Thumbnail.jpeg(content, width: width, maxHeight: maxHeight, quality: quality) { id in
            try asset(id).map { try RGBAImage(decoding: $0) }
        }
        return (data, problems.map { "\($0)" })
    }
}

// Regenerating a package's thumbnails (`lnote thumbnails`), with the renderer this module brings.
extension ThumbnailWriter {
    /// Regenerates the thumbnails of a package that are missing, or older than their page (or all
    /// of them with `all`), holding the document's lock. Returns what it did; a document open in a
    /// session is an error finding, nothing written.
    public static func rebuild(_ package: DocumentPackage, all: Bool = false, options: ThumbnailOptions = ThumbnailOptions(),
                               fileSystem fs: any FileSystem = PosixFileSystem()) -> [Finding] {
        var findings: [Finding] = []
        guard isAvailable else {
            return [Finding(.warning, package.path, "thumbnails not rebuilt: this build draws no thumbnails (link LulucatStoreThumbnails and call Library.enableThumbnails())")]
        }
        // The document's lock: a session writing the pages (or another rebuild) is not raced.
        let lock: FileDescriptor
        do { lock = try package.lockForWriting(fs) } catch {
            return [Finding(.error, package.path, "thumbnails not rebuilt: \(error)")]
        }
        defer { fs.unlock(lock) }
        _ = try? package.completeTransaction(fileSystem: fs, findings: &findings)
        guard let doc = try? PackageReader.readDocument(package, fileSystem: fs) else {
            return [Finding(.error, package.documentPath, "cannot be read; thumbnails not rebuilt")]
        }
        let engine = try? DocumentSession.makeEngine(doc, package: package, fileSystem: fs)
        for (i, entry) in doc.pages.enumerated() {
            let path = package.thumbnailPath(entry.id)
            if !all, !isStale(path, page: package.pagePath(entry.id), modified: entry.modified) { continue }
            do {
                guard let engine else { throw StoreError.invalidArgument("no engine for this document") }
                let content = try engine.loadPage(entry.id)
                findings += try write(content, page: entry.id, in: package, options: options, fileSystem: fs)
                findings.append(Finding(.repaired, path, "thumbnail of page \(i + 1) \(all ? "rebuilt" : "regenerated (missing or stale)")"))
            } catch {
                findings.append(Finding(.warning, path, "thumbnail of page \(i + 1) not written: \(error)"))
            }
        }
        return findings
    }

    /// A thumbnail is stale when it is missing or older than its page's content or metadata.
    static func isStale(_ thumbnail: String, page: String, modified: Date) -> Bool {
        let fm = FileManager.default
        guard let t = (try? fm.attributesOfItem(atPath: thumbnail))?[.modificationDate] as? Date else { return true }
        if t < modified { return true }
        if let p = (try? fm.attributesOfItem(atPath: page))?[.modificationDate] as? Date, p > t { return true }
        return false
    }
}
