// The sizes a package file may have: checked before a file is read whole, and before one is written.

/// Sizes the store keeps every package file within (package-format.md §7).
package enum PackageLimits {
    /// A page content file (or a page's journal): larger is refused by size before it is read,
    /// and a save that would write a larger page fails.
    package static let maxPageFileSize = 512 << 20
    /// A page's journal (what journal replay reads at most).
    package static let maxJournalFileSize = JournalFormat.maxPayload * 4
}
