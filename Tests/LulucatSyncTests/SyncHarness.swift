// Two or three real libraries and one remote (a folder, or Apache WebDAV), with the invariants
// every scenario checks after it converges.

import Foundation
import LulucatInk
import LulucatStore
import LulucatSyncTesting
import Testing
@testable import LulucatSync
import LulucatSyncTestSupport

enum RemoteKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case folder, webdav
    /// WebDAV on the other servers (`WebDAVServer`).
    case nginx, lighttpd, rclone
    var testDescription: String { rawValue }
    var server: WebDAVServer.Kind? { WebDAVServer.Kind(rawValue: rawValue) }
}

final class SyncHarness: @unchecked Sendable {
    let kind: RemoteKind
    var server: ApacheServer?
    var other: WebDAVServer?
    let remoteFolder: String
    var libraries: [Library] = []
    var remotes: [any Remote] = []

    init(_ kind: RemoteKind, libraries n: Int) throws {
        self.kind = kind
        remoteFolder = temporaryFolder("remote")
        if kind == .webdav { server = try ApacheServer() }
        if let k = kind.server { other = try WebDAVServer(k) }
        for i in 0..<n {
            libraries.append(Library(root: temporaryFolder("lib\(i)")))
            remotes.append(try makeRemote())
        }
    }

    func makeRemote() throws -> any Remote {
        switch kind {
        case .folder: return FolderRemote(root: remoteFolder)
        case .webdav: return try WebDAVRemote(url: server!.url, credentials: nil, timeout: 120)
        case .nginx, .lighttpd, .rclone: return try WebDAVRemote(url: other!.url, credentials: nil, timeout: 120)
        }
    }

    @discardableResult
    func sync(_ i: Int, options: SyncOptions = testSyncOptions) async throws -> SyncReport {
        let r = try await libraries[i].sync(with: remotes[i], options: options)
        #expect(r.problems.isEmpty, "library \(i): \(r.problems)")
        #expect(r.skipped.isEmpty, "library \(i): \(r.skipped)")
        return r
    }

    /// Rounds until every library has seen every other's last change: two passes.
    func converge() async throws {
        for _ in 0..<2 { for i in libraries.indices { try await sync(i) } }
    }

    /// Everyone holds the same documents, pages, order and elements; `lnote verify` is clean;
    /// every head's blobs exist and match their names.
    func checkConverged(sourceLocation: SourceLocation = #_sourceLocation) async throws -> LibraryContents {
        let first = try await contents(of: libraries[0])
        for lib in libraries.dropFirst() {
            let c = try await contents(of: lib)
            #expect(c == first, "libraries differ:\n\(first)\n---\n\(c)", sourceLocation: sourceLocation)
        }
        for lib in libraries {
            for e in try await lib.documents() {
                let findings = DocumentVerifier(fileSystem: lib.fileSystem).verify(e.package).filter { $0.severity == .error }
                #expect(findings.isEmpty, "verify \(e.id): \(findings)", sourceLocation: sourceLocation)
            }
        }
        try await checkBlobs(sourceLocation: sourceLocation)
        return first
    }

    func checkBlobs(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let remote = try makeRemote()
        let listed = try await remote.list("blobs").map(\.name)
        // A lost reply may leave an upload's temporary file beside the blobs (debris, §8): not a
        // blob, and nothing else may be there.
        for name in listed where BlobName(hex: name) == nil {
            #expect(BlobName.isUploadDebris(name), "blobs/\(name) is neither a blob nor upload debris", sourceLocation: sourceLocation)
        }
        let blobNames = Set(listed.filter { BlobName(hex: $0) != nil })
        for e in try await remote.list("heads") where Head.parseFileName(e.name) != nil {
            let head = try Head.decode(try await remote.get("heads/" + e.name, maxBytes: Head.maxBytes).bytes)
            for p in head.pages.values {
                #expect(blobNames.contains(p.blob.hex), "head \(e.name) names missing page blob \(p.blob)", sourceLocation: sourceLocation)
            }
            for a in head.assets.values { #expect(blobNames.contains(a.blob.hex), sourceLocation: sourceLocation) }
        }
        for name in blobNames {
            let bytes = try await remote.get("blobs/" + name, maxBytes: PageBlob.maxBytes).bytes
            #expect(BlobName(of: bytes).hex == name, "blob \(name) does not match its name", sourceLocation: sourceLocation)
        }
    }

    func stop() {
        server?.stop()
        other?.stop()
    }

    deinit {
        server?.stop()
        other?.stop()
        for path in [remoteFolder] + libraries.map(\.root) { try? FileManager.default.removeItem(atPath: path) }
    }
}
