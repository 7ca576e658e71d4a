// Where a command reads and writes: the library root, DOC references, and the files named by -o
// and by import, checked before anything is written so errors name the user's own paths.

import Foundation
import LulucatStore
import LulucatSync
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A path made absolute against the working directory, with `.`, `..` and repeated slashes
/// resolved by name. A relative library or file is the user's, never a path from `/`.
func absolutePath(_ path: String) -> String {
    let joined = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    var parts: [Substring] = []
    for part in joined.split(separator: "/", omittingEmptySubsequences: true) {
        if part == "." { continue }
        if part == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
        parts.append(part)
    }
    return "/" + parts.joined(separator: "/")
}

/// How `lnote help` names the default library on this platform.
#if canImport(Darwin)
let defaultLibraryDescription = "~/Documents/Notes"
#else
let defaultLibraryDescription = "$XDG_DATA_HOME/lulucat/Notes or ~/.local/share/lulucat/Notes"
#endif

/// The library a command works on: `--library DIR`, else `$LNOTE_LIBRARY`, else the platform
/// default (`Library.defaultRoot()`), made absolute against the working directory.
func library(_ args: Arguments) -> Library {
    let root = absolutePath(args.value("library") ?? Library.defaultRoot())
    libraryInUse.withLock { $0 = root }
    return Library(root: root)
}

/// The library folder this run works on, once a command has named it (for `describeFailure`).
let libraryInUse = Mutex<String?>(nil)

/// A document named on the command line, and the library that holds it (the package's own
/// folder when DOC is a package path).
struct DocumentRef {
    var library: Library
    var package: DocumentPackage
    var id: UUID { package.id }
}

/// Whether `ref` names a package folder rather than an id, id prefix or title: it ends in
/// `.lnote`, or it has a slash and is an existing path.
func isPackagePath(_ ref: String) -> Bool {
    var r = ref
    while r.count > 1 && r.hasSuffix("/") { r.removeLast() }
    if r.hasSuffix("." + DocumentPackage.pathExtension) { return true }
    return r.contains("/") && FileManager.default.fileExists(atPath: absolutePath(r))
}

/// Resolves DOC: a package path (relative to the working directory, or absolute), or a document
/// id, a unique id prefix or an exact title in `lib`.
func resolveDocument(_ ref: String, in lib: Library) throws -> DocumentRef {
    if isPackagePath(ref) {
        var package = try DocumentPackage(path: absolutePath(ref))
        // A bare `<UUID>.lnote` not in the working directory names the library's own package.
        if !isDirectory(package.path) && !ref.contains("/") { package = lib.package(package.id) }
        guard isDirectory(package.path) else { throw PathError("no document package at '\(ref)'") }
        return DocumentRef(library: Library(root: splitParent(package.path)), package: package)
    }
    let id = try lib.resolve(ref)
    let package = lib.package(id)
    // A full id resolves to itself: say plainly when no such document is here (not "its
    // document.json is corrupt"), and when it is in the trash, how to bring it back.
    if PathKind(package.path) == .missing {
        if (try? lib.trashedDocuments())?.contains(where: { $0.id == id }) == true {
            throw PathError("document \(id.uuidString) is in the trash; 'lnote restore \(id.uuidString)' brings it back")
        }
        throw PathError("no document \(id.uuidString) in \(lib.root)")
    }
    return DocumentRef(library: lib, package: package)
}

/// Resolves DOC as a package path or a library reference (id, id prefix, title).
func resolvePackage(_ ref: String, in lib: Library) throws -> DocumentPackage {
    try resolveDocument(ref, in: lib).package
}

func isDirectory(_ path: String) -> Bool {
    var isDirectory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
}

func splitParent(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

/// What is at a path, without following a last symbolic link.
enum PathKind: Equatable {
    case missing, regular, directory, symlink, other(String)

    init(_ path: String) {
        var st = stat()
        guard lstat(path, &st) == 0 else { self = .missing; return }
        switch st.st_mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symlink
        case S_IFIFO: self = .other("a FIFO")
        case S_IFCHR: self = .other("a character device")
        case S_IFBLK: self = .other("a block device")
        case S_IFSOCK: self = .other("a socket")
        default: self = .other("not a regular file")
        }
    }
}

/// A failure about a path the user named, said in the user's words.
struct PathError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Checks an output file (`-o`) before any work: it may exist only as a regular file (it is then
/// replaced), and its folder must exist and be writable. Returns the absolute path.
func checkedOutputPath(_ path: String) throws -> String {
    // "-" is standard output to most tools: never a file named "-" written by surprise.
    if path == "-" { throw UsageError("-o - (standard output) is not supported: name a file") }
    let absolute = absolutePath(path)
    if path.hasSuffix("/") { throw PathError("'\(path)' names a folder; -o takes a file name") }
    switch PathKind(absolute) {
    case .missing, .regular: break
    case .directory: throw PathError("'\(path)' is a folder; -o takes a file name (for example \(path)/page.png)")
    case .symlink: throw PathError("'\(path)' is a symbolic link; refusing to replace it (name the file itself)")
    case .other(let what): throw PathError("'\(path)' exists and is \(what), not a regular file; refusing to replace it")
    }
    let folder = splitParent(absolute)
    // A package holds only what its format lists: an output file never lands inside one.
    if folder.split(separator: "/").contains(where: { DocumentPackage.id(fromDirectoryName: String($0)) != nil }) {
        throw PathError("'\(path)' is inside a document package; write it somewhere else")
    }
    switch PathKind(folder) {
    case .directory: break
    case .missing: throw PathError("cannot write '\(path)': the folder \(folder) does not exist")
    case .symlink:
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw PathError("cannot write '\(path)': \(folder) is not a folder")
        }
    default: throw PathError("cannot write '\(path)': \(folder) is not a folder")
    }
    guard access(folder, W_OK) == 0 else {
        throw PathError("cannot write '\(path)': the folder \(folder) is not writable (\(String(cString: strerror(errno))))")
    }
    return absolute
}

/// Writes an output file atomically; a failure names the user's path, not the temporary file.
func writeOutput(_ data: Data, to path: String, as shown: String) throws {
    let failure: (any Error)? = {
        do { try PosixFileSystem().writeAtomically(data, to: path); return nil } catch { return error }
    }()
    guard let failure else { return }
    if let e = failure as? FileError { throw PathError("cannot write '\(shown)': \(String(cString: strerror(e.errno)))") }
    throw PathError("cannot write '\(shown)': \(failure)")
}

/// Reads a file named on the command line for import: it must be a regular file (a folder, a
/// FIFO or a device gets a clear refusal, never a blocked read). The kind is checked by name
/// before the file is opened (opening some devices acts on them), then again on the descriptor,
/// opened non-blocking, so a file swapped in between cannot block either. The bytes are mapped.
func readInputFile(_ path: String) throws -> Data {
    let absolute = absolutePath(path)
    func refuse(_ mode: mode_t) -> PathError? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR:
            if DocumentPackage.id(fromDirectoryName: URL(fileURLWithPath: absolute).lastPathComponent) != nil {
                return PathError("'\(path)' is a document package folder; import takes a .zip export or an InkML file (use the folder as DOC, or copy it into the library)")
            }
            return PathError("'\(path)' is a folder; import takes a .zip export or an InkML file")
        default: return PathError("'\(path)' is not a regular file; import takes a .zip export or an InkML file")
        }
    }
    var st = stat()
    guard stat(absolute, &st) == 0 else { throw PathError("cannot read '\(path)': \(String(cString: strerror(errno)))") }
    if let refusal = refuse(st.st_mode) { throw refusal }
    let fd = open(absolute, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { throw PathError("cannot read '\(path)': \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    guard fstat(fd, &st) == 0 else { throw PathError("cannot read '\(path)': \(String(cString: strerror(errno)))") }
    if let refusal = refuse(st.st_mode) { throw refusal }
    let size = Int(st.st_size)
    guard size > 0 else { return Data() }
    guard let bytes = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), bytes != MAP_FAILED else {
        throw PathError("cannot read '\(path)': \(String(cString: strerror(errno)))")
    }
    return Data(bytesNoCopy: bytes, count: size, deallocator: .custom { p, n in munmap(p, n) })
}

/// What an import file holds, from its name and its first bytes.
enum ImportKind { case zip, inkML }

func importKind(of data: Data, path: String) throws -> ImportKind {
    let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
    let head = [UInt8](data.prefix(256))
    let isZip = head.starts(with: [0x50, 0x4B, 0x03, 0x04]) || head.starts(with: [0x50, 0x4B, 0x05, 0x06])
    var body = head[...]
    if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
    let isUTF16 = head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF])
        || (head.count >= 2 && ((head[0] == 0x3C && head[1] == 0) || (head[0] == 0 && head[1] == 0x3C)))
    let isXML = isUTF16 || body.drop(while: { [0x20, 0x09, 0x0A, 0x0D].contains($0) }).first == UInt8(ascii: "<")
    switch ext {
    case "zip": return .zip
    case "inkml", "xml": return .inkML
    default:
        if isZip { return .zip }
        if isXML { return .inkML }
        let shown = ext.isEmpty ? "it" : "a .\(ext) file"
        throw PathError("'\(path)' is neither a one-file export (.zip) nor an InkML file (\(shown) does not start like either)")
    }
}

/// An error in the words a person needs. A refusal to write (a read-only volume, permissions)
/// inside a library names the library, not the internal file it came from (a document's `.lock`,
/// a staging folder), in the store's own words (`StoreError.notWritable`, as an app shows it).
func describeFailure(_ error: Error) -> String {
    let file: FileError?
    switch error {
    case let e as FileError: file = e
    case StoreError.file(let e): file = e
    case SyncError.localState(let e), SyncError.store(.file(let e)): file = e
    default: file = nil
    }
    guard let f = file, [EROFS, EACCES, EPERM].contains(f.errno),
          let root = StoreError.libraryRoot(containing: f.path) ?? libraryInUse.withLock({ $0 }).flatMap({ root in
              f.path == root || f.path.hasPrefix(root + "/") ? root : nil
          }) else { return numberingPages("\(error)") }
    return StoreError.notWritable(library: root, errno: f.errno)
}

/// A message with each page named by its number in its document ("page 2") instead of its id; the
/// page file's path that may follow the id (or the number the error already carries) in
/// parentheses goes too (a finding names its file first). The number comes from `pages` (the
/// document the message is about), else from the document the file in parentheses lies in; an id
/// found in neither is left as it is.
func numberingPages(_ text: String, _ pages: [UUID] = []) -> String {
    let numbered = /page ([0-9]+) \(([^()]*\.lnote\/[^()]*)\)/
    let text = text.replacing(numbered) { m in "page \(m.output.1)" }
    let named = /page ([0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12})( \(([^()]*)\))?/
    var pagesOf: [String: [UUID]] = [:]
    func pagesOfDocument(holding file: Substring) -> [UUID] {
        guard let end = file.range(of: ".lnote/", options: .backwards) else { return [] }
        let packagePath = String(file[..<end.lowerBound]) + ".lnote"
        if let known = pagesOf[packagePath] { return known }
        let found = (try? DocumentPackage(path: packagePath)).flatMap {
            try? PackageReader.readDocument($0, fileSystem: PosixFileSystem()).pages.map(\.id)
        } ?? []
        pagesOf[packagePath] = found
        return found
    }
    return text.replacing(named) { (m: Regex<(Substring, Substring, Substring?, Substring?)>.Match) -> String in
        let id = String(m.output.1)
        var candidates = pages
        if !candidates.contains(where: { $0.uuidString == id }), let file = m.output.3 { candidates = pagesOfDocument(holding: file) }
        guard let i = candidates.firstIndex(where: { $0.uuidString == id }) else { return String(m.output.0) }
        return "page \(i + 1)"
    }
}

/// The signals that interrupt a command (see main.swift): the first cancels it, a second ends the
/// process at once.
enum Interruption {
    private static let seen = Mutex<Int32?>(nil)

    /// The first signal received, if any.
    static var received: Int32? { seen.withLock { $0 } }

    /// Handles SIGINT, SIGTERM and SIGHUP from now on; keep the sources for as long as they apply.
    static func install(cancelling work: Task<Int32, Never>) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { @Sendable in
                let first = seen.withLock { seen -> Bool in
                    defer { if seen == nil { seen = number } }
                    return seen == nil
                }
                guard first else { _exit(128 + number) }
                work.cancel()
            }
            source.resume()
            return source
        }
    }
}
