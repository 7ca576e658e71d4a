// The typed files of `.sync/` (LocalStateFiles.swift): a base's bytes exactly as docs/sync.md §6
// gives them and read back by JSONDecoder as the same value; entries that do not decode dropped
// one by one; files that do not decode taken as missing; the library key 0600 through the seam.

import Foundation
import LulucatStore
import LulucatCrypto
import LulucatSyncTesting
import Testing
@testable import LulucatSync

@Suite struct SyncStateFilesTests {
    @Test func aBaseIsWrittenWithSortedKeysAndReadBackAsTheSameValue() throws {
        let page = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
        let b = BaseFile(docModified: 17, head: "AAEC", pageModified: [page: -1, "0" + page.dropFirst(): 5],
                         prints: [page: "TFNGUA=="], published: true, states: [page: "AQI="], version: 3)
        let text = String(decoding: b.encoded(), as: UTF8.self)
        #expect(text == """
            {"docModified":17,"head":"AAEC","pageModified":{"0F9619FF-8B86-D011-B42D-00C04FC964FF":5,\
            "6F9619FF-8B86-D011-B42D-00C04FC964FF":-1},"prints":{"6F9619FF-8B86-D011-B42D-00C04FC964FF":"TFNGUA=="},\
            "published":true,"states":{"6F9619FF-8B86-D011-B42D-00C04FC964FF":"AQI="},"version":3}

            """)
        #expect(try JSONDecoder().decode(BaseFile.self, from: Data(b.encoded())) == b)
        // Format 1's fields, which only the tests write now, come back too.
        let old = BaseFile(docModified: 1, head: "", pageModified: [:], prints: nil, published: false, states: nil,
                           stateDigests: [page: "ff"], version: nil)
        #expect(try JSONDecoder().decode(BaseFile.self, from: Data(old.encoded())) == old)
        #expect(String(decoding: old.encoded(), as: UTF8.self)
                == "{\"docModified\":1,\"head\":\"\",\"pageModified\":{},\"published\":false,\"stateDigests\":{\"\(page)\":\"ff\"}}\n")
    }

    @Test func filesThatDoNotDecodeAreTakenAsMissingAndBadEntriesAreDropped() throws {
        let lib = Library(root: temporaryFolder("state-files"))
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        let store = SyncStateStore(library: lib)
        try store.prepare()
        // The index: one good entry among a bad one and a bad key.
        let good = UUID()
        let text = """
            {"\(good.uuidString)": {"docModified": 3, "published": true, "live": false, "file": "1-2-3"},
             "\(UUID().uuidString)": {"docModified": "three"}, "not-a-uuid": {"docModified": 1, "published": true, "live": true, "file": ""}}
            """
        try lib.fileSystem.writeAtomically(Array(text.utf8), to: store.indexPath)
        #expect(store.index() == [good: SyncStateStore.IndexEntry(docModified: 3, published: true, live: false, file: "1-2-3")])
        try store.saveIndex(store.index())
        #expect(store.index().count == 1)
        // seen.json that is not an object of strings: no head taken as seen.
        try lib.fileSystem.writeAtomically(Array("[1, 2]".utf8), to: store.folder + "/seen.json")
        #expect(store.seen().isEmpty)
        // device.json with a lower-case id is not this library's id: a new one is made and kept.
        try lib.fileSystem.writeAtomically(Array("{\"device\": \"\(UUID().uuidString.lowercased())\"}".utf8), to: store.folder + "/device.json")
        let device = try store.deviceID()
        #expect(try store.deviceID() == device)
        #expect(store.read(DeviceFile.self, store.folder + "/device.json")?.device == device.uuidString)
        // remote.json round trip, slashes unescaped.
        try SyncConfiguration(remote: "http://127.0.0.1:1/notes/").save(lib)
        #expect(SyncConfiguration.read(lib) == SyncConfiguration(remote: "http://127.0.0.1:1/notes/"))
        let remoteText = String(decoding: try lib.fileSystem.readFile(SyncConfiguration.path(lib)), as: UTF8.self)
        #expect(remoteText.contains("\"http://127.0.0.1:1/notes/\""), "\(remoteText)")
    }

    @Test func theLibraryKeyIsItsOwnersAloneAndReadBackWhole() throws {
        let lib = Library(root: temporaryFolder("key-file"))
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        try SyncStateStore(library: lib).prepare()
        let key = try LibraryKey.generate()
        try LocalEncryption.writeKey(key, lib)
        let attributes = try FileManager.default.attributesOfItem(atPath: LocalEncryption.keyPath(lib))
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try LocalEncryption.readKey(lib).keyCheck == key.keyCheck)
        // One byte more or less is not a key.
        var bytes = try lib.fileSystem.readFile(LocalEncryption.keyPath(lib))
        bytes.append(0)
        try lib.fileSystem.writeAtomically(bytes, to: LocalEncryption.keyPath(lib))
        #expect(throws: SyncError.self) { try LocalEncryption.readKey(lib) }
        bytes.removeLast(2)
        try lib.fileSystem.writeAtomically(bytes, to: LocalEncryption.keyPath(lib))
        #expect(throws: SyncError.self) { try LocalEncryption.readKey(lib) }
        LocalEncryption.remove(lib)
        #expect(!LocalEncryption.isSetUp(lib))
    }
}
