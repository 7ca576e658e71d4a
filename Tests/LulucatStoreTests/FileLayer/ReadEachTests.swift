// FileSystem.readEach: PosixFileSystem's own (the folder opened once, each package relative to it)
// gives what the default gives (readFile and info on each path) in every hostile place: a missing
// file, a link for the package or for the file, a FIFO, a folder, a file over the limit, a marker.

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

    static func readAll(_ fs: any FileSystem, _ folder: String, _ names: [String], limit: Int) throws -> [Read] {
        var out: [Read] = []
        try fs.readEach(in: folder, names: names, file: "manifest.json", limit: limit, probe: ".needs-repair") { i, bytes, probed in
            #expect(i == out.count)
            switch bytes {
            case .success(let b): out.append(Read(bytes: b, errno: nil, found: nil, probed: probed))
            case .failure(let e): out.append(Read(bytes: nil, errno: e.errno, found: e.found, probed: probed))
            }
        }
        return out
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
        names.append("absent.lnote")
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/a-file.lnote"))
        names.append("a-file.lnote")

        let posix = try ReadEachTests.readAll(PosixFileSystem(), folder, names, limit: 50)
        let byPath = try ReadEachTests.readAll(ForwardingFileSystem(PosixFileSystem()), folder, names, limit: 50)
        #expect(posix.count == names.count)
        for (i, name) in names.enumerated() {
            // Both say the same of every package; an error is the same errno, and names a link,
            // FIFO or folder alike (the package link refused as a link, never followed).
            #expect(posix[i].bytes == byPath[i].bytes, "\(name)")
            #expect(posix[i].probed == byPath[i].probed, "\(name)")
            #expect((posix[i].errno == nil) == (byPath[i].errno == nil), "\(name): \(posix[i]) \(byPath[i])")
            #expect(posix[i].found == byPath[i].found, "\(name): \(posix[i]) \(byPath[i])")
        }
        let expected: [String: Read] = [
            "plain.lnote": Read(bytes: Array("{\"a\":1}\n".utf8), probed: false),
            "empty.lnote": Read(bytes: [], probed: false),
            "marked.lnote": Read(bytes: Array("{\"a\":1}\n".utf8), probed: true),
            "linked-marker.lnote": Read(bytes: Array("{\"a\":1}\n".utf8), probed: true),
        ]
        for (i, name) in names.enumerated() {
            if let e = expected[name] {
                #expect(posix[i].bytes == e.bytes && posix[i].probed == e.probed, "\(name)")
            } else {
                #expect(posix[i].bytes == nil, "\(name) must not be read")
            }
        }
        #expect(posix[names.firstIndex(of: "missing.lnote")!].probed)
        #expect(posix[names.firstIndex(of: "large.lnote")!].errno == EFBIG)
        #expect(posix[names.firstIndex(of: "linked-package.lnote")!].found == "symbolic link")
        #expect(posix[names.firstIndex(of: "linked-file.lnote")!].found == "symbolic link")
        #expect(posix[names.firstIndex(of: "fifo.lnote")!].found == "FIFO")
    }

    @Test func aMissingFolderThrows() {
        let tmp = TemporaryFolder()
        #expect(throws: FileError.self) {
            try PosixFileSystem().readEach(in: tmp.path + "/nothing", names: ["x.lnote"], file: "manifest.json", limit: 10, probe: ".m") { _, _, _ in }
        }
    }
}

extension ReadEachTests.Read {
    init(bytes: [UInt8], probed: Bool) { self.init(bytes: bytes, errno: nil, found: nil, probed: probed) }
}
