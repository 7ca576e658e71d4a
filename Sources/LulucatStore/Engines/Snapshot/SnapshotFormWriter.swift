// Migration into the snapshot engine's form, beside the engine (Migration/EngineForm.swift has the FormWriter protocol).

import Foundation
import LulucatInk

/// The snapshot form: `pages/<id>.content`, each written atomically and durably. Files with these
/// names are not the truth while document.json names another engine.
final class SnapshotFormWriter: FormWriter {
    let engine: SnapshotEngine
    init(package: DocumentPackage, fileSystem: any FileSystem, codec: SampleCodecID) {
        engine = SnapshotEngine(package: package, fileSystem: fileSystem, codec: codec)
    }
    func write(_ page: UUID, _ content: PageContent) throws(StoreError) { try engine.createPage(page, content: content) }
    func finish() throws(StoreError) {}
    func abandon() {}
}
