// What the tests check of every public error an app may show: its `localizedDescription` is a
// sentence a person reads and it says what to do. Shared by the store's, the interchange's and the
// sync's walks over every case of their error types.

import Foundation

/// What is wrong with what an app would show of `error`; empty when it is fit to show:
///
/// - `errorDescription` is set and is `localizedDescription` (never Foundation's generic "The
///   operation could not be completed. (… error 1.)");
/// - it is a sentence: a capital first, a period (or "?" / "!") last;
/// - it names no page by its id (no UUID, nor the 8 hex digits that began one) and no internal
///   file of a library (a temporary `.lnote-tmp-…`, a `.lock`, `document.json`, `manifest.json`,
///   `content.sqlite`, a path inside a package);
/// - `recoverySuggestion` is set, and is a sentence too.
public func userFacingProblems(_ error: any LocalizedError) -> [String] {
    // A UUID, or the first 8 hex digits of one as a word with at least one letter A–F (a page id
    // as messages used to show it; a plain number such as a byte count is not one).
    let pageIDPattern = /[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-|\b(?=[0-9]*[A-Fa-f])[0-9A-Fa-f]{8}\b/
    var problems: [String] = []
    guard let text = error.errorDescription, !text.isEmpty else { return ["no errorDescription"] }
    if (error as any Error).localizedDescription != text { problems.append("localizedDescription is not errorDescription") }
    if !(text.first?.isUppercase ?? false) { problems.append("does not start with a capital: \(text)") }
    if !(text.hasSuffix(".") || text.hasSuffix("?") || text.hasSuffix("!")) { problems.append("does not end a sentence: \(text)") }
    let lowered = text.lowercased()
    for phrase in ["error 1", "operation could not be completed", "could not be completed"] where lowered.contains(phrase) {
        problems.append("Foundation's generic words (\(phrase)): \(text)")
    }
    for name in [temporaryFilePrefixForTests, ".lock", "document.json", "manifest.json", "content.sqlite", ".lnote/"] where text.contains(name) {
        problems.append("names an internal file (\(name)): \(text)")
    }
    if text.contains(pageIDPattern) { problems.append("names a page by its id: \(text)") }
    if let s = error.recoverySuggestion {
        if s.isEmpty || !(s.hasSuffix(".") || s.hasSuffix("?") || s.hasSuffix("!")) { problems.append("recovery is not a sentence: \(s)") }
        if s.contains(pageIDPattern) { problems.append("recovery names a page by its id: \(s)") }
    } else {
        problems.append("no recoverySuggestion for: \(text)")
    }
    return problems
}

/// The prefix of the store's temporary files (`.lnote-tmp-`), spelled here so that the check does
/// not depend on the constant it checks against.
private let temporaryFilePrefixForTests = ".lnote-tmp-"

