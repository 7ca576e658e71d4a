// The rules an entry name must follow to be written or extracted: relative, no escapes, portable.

import Foundation

/// Checks on archive entry names, shared by the writer (we never write what we would refuse) and
/// the reader (names from another device are untrusted).
package enum EntryName {
    /// Why `name` is unsafe, or nil when it is a clean relative path. A trailing `/` marks a
    /// directory entry and is allowed.
    package static func problem(_ name: String) -> String? {
        if name.isEmpty { return "the name is empty" }
        if name.utf8.count > 1024 { return "the name is longer than 1,024 bytes" }
        if name.hasPrefix("/") { return "the name is an absolute path" }
        if name.contains("\\") { return "the name contains a backslash" }
        if name.contains(":") { return "the name contains a colon (a drive letter or stream name)" }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "the name contains a control character"
        }
        var components = name.split(separator: "/", omittingEmptySubsequences: false)
        if name.hasSuffix("/") { components.removeLast() }
        for c in components {
            if c.isEmpty { return "the name has an empty path component (\"//\")" }
            if c == "." { return "the name has a \".\" component" }
            if c == ".." { return "the name has a \"..\" component" }
        }
        return nil
    }

    static func isDirectory(_ name: String) -> Bool { name.hasSuffix("/") }

    /// The key two names collide on when extracted to a case-insensitive, normalization-insensitive
    /// file system such as APFS: "A.json", "a.json" and "a.json/" all land on the same file.
    package static func collisionKey(_ name: String) -> String {
        var n = name
        while n.hasSuffix("/") { n.removeLast() }
        return n.precomposedStringWithCanonicalMapping.lowercased()
    }

    /// The collision keys of the folders that contain `name` ("a/b/c" -> "a", "a/b").
    static func parentKeys(_ name: String) -> [String] {
        let key = collisionKey(name)
        var result: [String] = []
        var index = key.startIndex
        while let slash = key[index...].firstIndex(of: "/") {
            result.append(String(key[..<slash]))
            index = key.index(after: slash)
        }
        return result
    }
}

/// Tracks names seen so far and refuses a name that would land on the same file as an earlier
/// one, or a file where an earlier entry needs a folder (and the reverse).
struct NameCollisionGuard {
    private var seen: [String: String] = [:]       // key -> first name
    private var fileKeys: Set<String> = []
    private var folderKeys: [String: String] = [:] // folder key -> a name inside it

    mutating func insert(_ name: String) throws(ArchiveError) {
        let key = EntryName.collisionKey(name)
        if let other = seen[key] {
            let how = other == name ? "appears twice in the archive"
                : "collides with \"\(other)\" on a case-insensitive file system"
            throw ArchiveError(.duplicateName, entry: name, "the name \(how)")
        }
        seen[key] = name
        let isDirectory = EntryName.isDirectory(name)
        if !isDirectory {
            if let inside = folderKeys[key] {
                throw ArchiveError(.duplicateName, entry: name, "a file has the name of the folder holding \"\(inside)\"")
            }
            fileKeys.insert(key)
        }
        for parent in EntryName.parentKeys(name) {
            if fileKeys.contains(parent) {
                throw ArchiveError(.duplicateName, entry: name, "its folder \"\(parent)\" is also a file in the archive")
            }
            if folderKeys[parent] == nil { folderKeys[parent] = name }
        }
    }
}
