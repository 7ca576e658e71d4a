// Page thumbnails, written off the saving path: a saved page's newest content is rendered and
// written to thumbnails/<page-id>.jpg by a background task. The first page's is the cover.
// Rendering is the registered renderer's (ThumbnailRenderer.swift, from LulucatStoreThumbnails):
// without it no thumbnail is written, which readers tolerate (thumbnails are derived and optional).

import Foundation
import LulucatInk

/// How thumbnails are made.
public struct ThumbnailOptions: Sendable, Equatable {
    /// Width in pixels of the library grid cell.
    public var width: Int
    /// When set, the page is fitted into width x maxHeight instead of following its aspect ratio.
    public var maxHeight: Int?
    /// JPEG quality, 1 to 100 (80 by default).
    public var quality: Int
    /// The default width of a library thumbnail, in pixels (LulucatRender's `Thumbnail.defaultWidth`).
    public static let defaultWidth = 256
    /// Options for thumbnails `width` pixels wide (fitted into `width` x `maxHeight` when that is
    /// set) at JPEG `quality`.
    public init(width: Int = ThumbnailOptions.defaultWidth, maxHeight: Int? = nil, quality: Int = 80) {
        self.width = width
        self.maxHeight = maxHeight
        self.quality = quality
    }
}

/// Renders and writes thumbnails in the background. A page saved again before its thumbnail was
/// written is rendered once, at its newest content. Problems (a missing asset drawn as a
/// placeholder, a failed write) are collected, never thrown at the saving session.
///
/// A session runs its own writer (`SessionOptions.thumbnails`); an app asks `isAvailable`, and
/// draws a closed document's missing or stale thumbnails again with `rebuild` from
/// LulucatStoreThumbnails.
public actor ThumbnailWriter {
    /// The size and quality this writer draws at.
    package let options: ThumbnailOptions
    let fileSystem: any FileSystem
    var pending: [String: PageSavedEvent] = [:]
    var order: [String] = []
    var worker: Task<Void, Never>?
    /// Pages whose thumbnail was written, and problems met.
    package private(set) var written = 0
    package private(set) var problems: [Finding] = []

    /// Called with the page id after each thumbnail file is written (the session's events).
    let onWritten: (@Sendable (UUID) -> Void)?

    /// A writer with nothing queued; it starts a task when the first page is queued.
    package init(options: ThumbnailOptions = ThumbnailOptions(), fileSystem: any FileSystem = PosixFileSystem()) {
        self.init(options: options, fileSystem: fileSystem, onWritten: nil)
    }

    init(options: ThumbnailOptions, fileSystem: any FileSystem, onWritten: (@Sendable (UUID) -> Void)?) {
        self.options = options
        self.fileSystem = fileSystem
        self.onWritten = onWritten
    }

    /// Queues a saved page; returns at once.
    package nonisolated func enqueue(_ event: PageSavedEvent) {
        Task { await self.add(event) }
    }

    func add(_ event: PageSavedEvent) {
        guard !stopped else { return }
        let key = event.package.thumbnailPath(event.pageID)
        if let old = pending[key], old.sequence > event.sequence { return }
        if pending[key] == nil { order.append(key) }
        pending[key] = event
        if worker == nil { worker = Task { await self.work() } }
    }

    func work() async {
        while !order.isEmpty {
            let key = order.removeFirst()
            guard let event = pending.removeValue(forKey: key) else { continue }
            do {
                let found = try ThumbnailWriter.write(event.content, page: event.pageID, in: event.package,
                                                      options: options, fileSystem: fileSystem)
                problems += found
                written += 1
                onWritten?(event.pageID)
            } catch {
                problems.append(Finding(.warning, key, "thumbnail not written: \(error)"))
            }
            await Task.yield()
        }
        worker = nil
    }

    /// Set by `stop()`: nothing more is queued or written.
    var stopped = false

    /// Drops the queued thumbnails and waits for the one being written, if any.
    func stop() async {
        stopped = true
        pending = [:]
        order = []
        await Task.yield()
        while let w = worker { await w.value }
    }

    /// Waits until every queued thumbnail is written.
    package func drain() async {
        // Events enqueued just before this call may still be on their way to `add`.
        await Task.yield()
        while let w = worker { await w.value }
    }

    /// Whether this build draws thumbnails: LulucatStoreThumbnails is linked and
    /// `Library.enableThumbnails()` was called. Without it sessions write none.
    public static var isAvailable: Bool { ThumbnailRenderers.current != nil }

    /// A page's thumbnail as JPEG bytes, not written anywhere (a past version's, for a history
    /// list), with the problems met while drawing. Images are drawn from `images`' assets when
    /// given and present.
    ///
    /// - Throws: `StoreError.invalidArgument` when this build draws no thumbnails (`isAvailable`).
    package static func jpeg(_ content: PageContent, images package: DocumentPackage?, options: ThumbnailOptions = ThumbnailOptions(),
                            fileSystem fs: any FileSystem = PosixFileSystem()) throws -> (data: Data, problems: [String]) {
        guard let renderer = ThumbnailRenderers.current else {
            throw StoreError.invalidArgument("this build draws no thumbnails: link LulucatStoreThumbnails and call Library.enableThumbnails()")
        }
        let assets = try package.map { try PackageReader.scanAssets($0, fileSystem: fs).assets } ?? [:]
        return try renderer.jpeg(content, width: options.width, maxHeight: options.maxHeight, quality: options.quality) { id in
            guard let package, let ext = assets[id] else { return nil }
            return Data(try fs.readFile(package.assetPath(id, ext: ext), limit: 256 << 20))
        }
    }

    /// Renders a page's thumbnail and writes it atomically. Returns the problems met while drawing.
    ///
    /// - Throws: `StoreError.invalidArgument` when this build draws no thumbnails (`isAvailable`).
    @discardableResult
    package static func write(_ content: PageContent, page: UUID, in package: DocumentPackage,
                             options: ThumbnailOptions = ThumbnailOptions(),
                             fileSystem fs: any FileSystem = PosixFileSystem()) throws -> [Finding] {
        let (data, problems) = try jpeg(content, images: package, options: options, fileSystem: fs)
        try fs.ensureDirectory(package.thumbnailsPath)
        try fs.writeAtomically(data, to: package.thumbnailPath(page))
        return problems.map { Finding(.warning, package.thumbnailPath(page), $0) }
    }
}
