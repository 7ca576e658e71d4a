// A content hash of a page that does not depend on the engine that stored it, for verified
// migration: SHA-256 of the page's canonical bytes (docs/page-format.md, `PageFile.canonicalBytes`
// with the fixed16 codec).

import LulucatInk

extension PageContent {
    /// The lowercase hex SHA-256 of `PageFile.canonicalBytes(self, codec: .fixed16)` (the hash is
    /// defined on the canonical form, `PageFile.canonicalVersion`, so it does not change when the
    /// page format does).
    ///
    /// Two pages have the same hash exactly when they hold the same canvas size and the same
    /// elements in the same order (ids, inks, every sample and channel value, unknown payloads).
    ///
    /// - Throws: `PageFormatError.unencodable` for a page no engine could store.
    package func contentHash() throws(PageFormatError) -> String {
        let digest = SHA256.hash(try PageFile.canonicalBytes(self, codec: .fixed16))
        return digest.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
