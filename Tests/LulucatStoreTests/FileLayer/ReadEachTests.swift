// FileSystem.readEach: PosixFileSystem's own (the folder read once, each package's file opened
// relative to it in one call, or each package folder first where that call is missing) gives what
// the default gives (contentsOfDirectory, then readFile and info on each path) in every hostile
// place: a missing file, a link for the package or for the file, a FIFO, a folder, a file over the
// limit, a marker; and it offers every name but "." and ".." to `accept`, reading only those taken.

import Foundation
import Testing
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct ReadEachTests {
    struct Read: Equatable {
        var bytes: [UInt8]?
        var errno: Int32?
        var found: String?
        var probed: Bool
    }

    /// What `readEach` gave, by name; the names it offered to `accept`, in order.
    static func readAll(_ fs: any FileSystem, _ folder: String, limit: Int,
                        accept: @escaping (String) -> Bool = { $0.hasSuffix(".lnote") }) throws -> ([String: Read], offered: [String]) {
        var out: [String: Read] = [:]
        var offered: [String] = []
        try fs.readEach(in: folder, file: "manifest.json", limit: limit, probe: ".needs-repair",
                        accept: { let n = String(decoding: $0, as: UTF8.self); offered.append(n); return accept(n) }) { raw, bytes, probed in
            let name = String(decoding: raw, as: UTF8.self)
            #expect(name == offered.last, "body is called for the name just accepted")
            #expect(out[name] == nil, "\(name) read twice")
            switch bytes {
            case .success(let b): out[name] = Read(bytes: Array(b), errno: nil, found: nil, probed: probed)
            case .failure(let e): out[name] = Read(bytes: nil, errno: e.errno, found: e.found, probed: probed)
            }
        }
        return (out, offered)
    }

    @Test(arguments: [false, true]) func posixAgreesWithTheDefaultEverywhere(inTrash: Bool) throws {
        let place = HostileLibrary()
        let folder = inTrash ? place.root + "/.trash" : place.root
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        func package(_ name: String, manifest: String? = "{\"a\":1}\n", marker: Bool = false) throws -> String {
            let path = folder + "/" + name
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            if let manifest { try Data(manifest.utf8).write(to: URL(fileURLWithPath: path + "/manifest.json")) }
            if marker { try Data("torn page".utf8).write(to: URL(fileURLWithPath: path + "/.needs-repair")) }
            return name
        }
        var names: [String] = []
        names.append(try package("plain.lnote"))
        names.append(try package("empty.lnote", manifest: ""))
        names.append(try package("marked.lnote", marker: true))
        names.append(try package("missing.lnote", manifest: nil, marker: true))
        names.append(try package("large.lnote", manifest: String(repeating: "x", count: 100)))
        names.append(try package("fifo.lnote", manifest: nil))
        try makeFIFO(folder + "/fifo.lnote/manifest.json")
        names.append(try package("folder.lnote", manifest: nil))
        try FileManager.default.createDirectory(atPath: folder + "/folder.lnote/manifest.json", withIntermediateDirectories: true)
        names.append(try package("linked-file.lnote", manifest: nil))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: place.outside + "/manifest.json"))
        try FileManager.default.createSymbolicLink(atPath: folder + "/linked-file.lnote/manifest.json", withDestinationPath: place.outside + "/manifest.json")
        names.append(try package("linked-package.lnote"))
        try replaceWithLink(folder + "/linked-package.lnote", movingTo: place.outside + "/package")
        names.append(try package("linked-marker.lnote"))
        try FileManager.default.createSymbolicLink(atPath: folder + "/linked-marker.lnote/.needs-repair", withDestinationPath: "/nonexistent")
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/a-file.lnote"))
        names.append("a-file.lnote")
        _ = try package("not-taken")  // offered to `accept`, refused: never read

        let (posix, offered) = try ReadEachTests.readAll(PosixFileSystem(), folder, limit: 50)
        let (byPath, offeredByPath) = try ReadEachTests.readAll(ForwardingFileSystem(PosixFileSystem()), folder, limit: 50)
        // Where openat2 (or O_NOFOLLOW_ANY) is missing, each package folder is opened first: the same.
        var stepwiseFS = PosixFileSystem()
        stepwiseFS.oneCallOpens = false
        let (stepwise, _) = try ReadEachTests.readAll(stepwiseFS, folder, limit: 50)
        #expect(stepwise == posix)
        #expect(Set(offered) == Set(names + ["not-taken"]) && offered.count == names.count + 1)
        #expect(Set(offeredByPath) == Set(offered))
        #expect(Set(posix.keys) == Set(names))
        for name in names {
            // Both say the same of every package; an error is the same errno, and names a link,
            // FIFO or folder alike (the package link refused as a link, never followed).
            let p = try #require(posix[name]), b = try #require(byPath[name])
            #expect(p.bytes == b.bytes, "\(name)")
            #expect(p.probed == b.probed, "\(name)")
            #expect((p.errno == nil) == (b.errno == nil), "\(name): \(p) \(b)")
            #expect(p.found == b.found, "\(name): \(p) \(b)")
        }
        let expected: [String: Read] = [
            "plain.lnote": Read(bytes: Array("{\"a\":1}\n".utf8), probed: false),
            "empty.lnote": Read(bytes: [], probed: false),
            "marked.lnote": Read(bytes: Array("{\"a\":1}\n".utf8), probed: true),
            "linked-marker.lnote": Read(bytes: Array("{\"a\":1}\n".utf8), probed: true),
        ]
        for name in names {
            if let e = expected[name] {
                #expect(posix[name]?.bytes == e.bytes && posix[name]?.probed == e.probed, "\(name)")
            } else {
                #expect(posix[name]?.bytes == nil, "\(name) must not be read")
            }
        }
        #expect(posix["missing.lnote"]?.probed == true)
        #expect(posix["large.lnote"]?.errno == EFBIG)
        #expect(posix["linked-package.lnote"]?.found == "symbolic link")
        #expect(posix["linked-file.lnote"]?.found == "symbolic link")
        #expect(posix["fifo.lnote"]?.found == "FIFO")
    }

    /// One buffer serves every read: a small file after a large one gives its own bytes alone,
    /// and a file larger than the buffer so far grows it.
    @Test func theReusedBufferGivesEachFileItsOwnBytes() throws {
        let tmp = TemporaryFolder()
        var want: [String: [UInt8]] = [:]
        for (k, size) in [0, 5, 70_000, 3, 4096, 4097, 1, 200_000, 2].enumerated() {
            let name = "p\(k).lnote"
            try FileManager.default.createDirectory(atPath: tmp.path + "/" + name, withIntermediateDirectories: true)
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ k) }
            try Data(bytes).write(to: URL(fileURLWithPath: tmp.path + "/" + name + "/manifest.json"))
            want[name] = bytes
        }
        let (read, _) = try ReadEachTests.readAll(PosixFileSystem(), tmp.path, limit: 1 << 20)
        #expect(read.count == want.count)
        for (name, bytes) in want { #expect(read[name]?.bytes == bytes, "\(name)") }
    }

    @Test func aMissingFolderThrows() {
        let tmp = TemporaryFolder()
        #expect(throws: FileError.self) {
            try PosixFileSystem().readEach(in: tmp.path + "/nothing", file: "manifest.json", limit: 10, probe: ".m", accept: { _ in true }) { _, _, _ in }
        }
    }
}

extension ReadEachTests.Read {
    init(bytes: [UInt8], probed: Bool) { self.init(bytes: bytes, errno: nil, found: nil, probed: probed) }
}
