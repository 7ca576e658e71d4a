// The package's needs-repair marker: written when damage is found (a session's open or a page
// read), cleared by `lnote repair`; the library listing checks for it (docs/package-format.md).

import Foundation

extension DocumentPackage {
    /// `.needs-repair`: UTF-8 text, what was found (one line, at most `needsRepairLimit` bytes).
    static let needsRepairName = ".needs-repair"
    static let needsRepairLimit = 512
    var needsRepairPath: String { path + "/" + DocumentPackage.needsRepairName }

    /// Writes the marker (atomically; best effort: a marker that cannot be written costs the
    /// library view its flag, never the open or the read that found the damage).
    package func markNeedsRepair(_ reason: String, fileSystem fs: any FileSystem) {
        var line = reason.replacingOccurrences(of: "\n", with: " ")
        if line.utf8.count > DocumentPackage.needsRepairLimit {
            line = String(decoding: Array(line.utf8.prefix(DocumentPackage.needsRepairLimit)), as: UTF8.self)
        }
        if let current = try? fs.readFile(needsRepairPath, limit: DocumentPackage.needsRepairLimit * 2),
           String(decoding: current, as: UTF8.self) == line { return }
        try? fs.writeAtomically(Array(line.utf8), to: needsRepairPath)
    }

    /// What the marker says, or nil when there is none.
    func needsRepairReason(fileSystem fs: any FileSystem) -> String? {
        guard (try? fs.info(needsRepairPath)) ?? nil != nil else { return nil }
        let bytes = (try? fs.readFile(needsRepairPath, limit: DocumentPackage.needsRepairLimit * 2)) ?? []
        let text = String(decoding: bytes, as: UTF8.self)
        return text.isEmpty ? "damage was found" : text
    }

    package func clearNeedsRepair(fileSystem fs: any FileSystem) throws(StoreError) {
        try fs.checked.removeIfPresent(needsRepairPath)
    }
}
