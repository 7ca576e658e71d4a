// Every public error of LulucatStore, LulucatInk and LulucatSQLite is a LocalizedError: an app's
// `localizedDescription` is a sentence in plain words (never Foundation's generic "could not be
// completed", never a type name or an errno), with a recovery suggestion.

import Foundation
import Testing
import LulucatInk
import LulucatSQLite
@testable import LulucatStore
#if canImport(Glibc)
import Glibc
#endif

/// Checks what an app shows of `error`: its `errorDescription` is its `localizedDescription`, a
/// sentence (a capital, a period) without type names or errno; a recovery suggestion, when `suggests`.
private func expectReadable(_ error: any LocalizedError, suggests: Bool = true, errno: Int32? = nil,
                    sourceLocation: SourceLocation = #_sourceLocation) {
    let text = (error as any Error).localizedDescription
    #expect(text == error.errorDescription, "\(error)", sourceLocation: sourceLocation)
    #expect(!text.isEmpty && text.hasSuffix(".") && text.first!.isUppercase, "\(text)", sourceLocation: sourceLocation)
    #expect(!text.contains("could not be completed"), "\(text)", sourceLocation: sourceLocation)
    let banned = ["Error(", "Error.", "Error ", "Failure", "errno", "SQLITE", "ENOSPC", "EACCES", "EROFS", "ENOENT", "ENOTDIR",
                  "EEXIST", "EIO", "CRC", "0x", "LNPG", "UUID"]
    for word in banned { #expect(!text.contains(word), "\(text) contains \(word)", sourceLocation: sourceLocation) }
    if let errno {
        #expect(!text.contains(String(cString: strerror(errno))), "\(text)", sourceLocation: sourceLocation)
        #expect(!text.contains("(\(errno))"), "\(text)", sourceLocation: sourceLocation)
    }
    if suggests {
        let s = error.recoverySuggestion
        #expect(s.map { !$0.isEmpty && $0.hasSuffix(".") } == true, "\(error): \(s ?? "no suggestion")", sourceLocation: sourceLocation)
    }
}

@Suite struct StoreLocalizedErrorsTests {
    let page = UUID(), element = UUID()
    let file = "/home/u/Notes/Trip.lnote/content.sqlite"

    @Test func inkErrors() {
        let page: [PageFormatError] = [
            .truncated(offset: 12, needed: 4, available: 1), .badMagic, .unsupportedVersion(99), .unknownCodec(7),
            .checksumMismatch(stored: 1, computed: 2), .invalidField(offset: 3, "count"), .unencodable("channel"),
        ]
        for e in page { expectReadable(e) }
        expectReadable(PageChangeError("update names element X, which the page does not have"))
        expectReadable(QuantizeError(what: "x", value: .nan, allowed: "finite"))
        // A thrown quantize error, as an app meets it.
        #expect(throws: QuantizeError.self) { try Quantize.coordinate(.infinity) }
        do throws(QuantizeError) { _ = try Quantize.coordinate(.infinity) } catch { expectReadable(error) }
    }

    @Test func migrationErrors() {
        expectReadable(MigrationError.verification(page: page, "element count differs"))
        expectReadable(MigrationError.verification(page: nil, "page list differs"))
        #expect(!MigrationError.verification(page: page, "x").localizedDescription.contains(String(page.uuidString.prefix(8))))
        #expect(MigrationError.verification(page: page, "x", number: 2).localizedDescription.contains("page 2"))
    }

    @Test func contentDatabaseErrors() {
        let failures = [SQLiteFailure.full, SQLiteFailure.readonly, SQLiteFailure.busy, SQLiteFailure.locked, SQLiteFailure.ioError, 1, 11, 19, 2067]
        let all: [SQLiteEngineError] = [
            .missing(file: file), .corrupt(file: file, detail: "file is not a database"),
            .newerSchema(file: file, found: 9, supported: 2), .unexpectedSchema(file: file, detail: "no table pages"),
            .invalidRow(file: file, table: "elements", detail: "short blob"), .inUse(file: file),
            .checksumMismatch(file: file, table: "elements", page: page, element: element),
            .checksumMismatch(file: file, table: "pages", page: page, element: nil),
            .pageNotFound(file: file, page: page), .elementNotFound(file: file, page: page, element: element),
            .duplicateElement(file: file, page: page, element: element), .unencodable("channel"), .invalidChange("below itself"),
        ] + failures.map { .database(file: file, SQLiteFailure(extendedCode: $0, description: "SQLite error \($0)")) }
        for e in all {
            expectReadable(e)
            // The same words as the StoreError that carries it.
            #expect(e.localizedDescription == StoreError.contentDatabase(e).localizedDescription)
        }
        for code in failures { expectReadable(SQLiteFailure(extendedCode: code, description: "SQLite error \(code)")) }
        #expect(SQLiteFailure(extendedCode: SQLiteFailure.full, description: "").localizedDescription.contains("full"))
    }

    @Test func fileErrors() {
        let inDocument = "/home/u/Notes/Trip.lnote/pages/\(page.uuidString).page"
        let outside = "/home/u/Notes/.sync/state.json"
        for path in [inDocument, outside, "/home/u/Notes/Trip.lnote"] {
            for errno in [ENOSPC, EDQUOT, EROFS, EACCES, EPERM, ENOENT, ENOTDIR, EIO, EINVAL, EAGAIN, EBUSY] {
                expectReadable(FileError("write", path: path, errno: errno), errno: errno)
            }
            expectReadable(FileError("open", path: path, errno: ELOOP, found: "symbolic link"), errno: ELOOP)
        }
        #expect(FileError("write", path: inDocument, errno: ENOSPC).localizedDescription
                == "A page of the document could not be saved because the device is full.")
        #expect(FileError("write", path: outside, errno: ENOSPC).localizedDescription == "A file could not be saved because the device is full.")
        #expect(FileError("open", path: outside, errno: ENOTDIR).localizedDescription.contains("is a file, not a folder"))
    }

    @Test func sqliteWrapperErrors() {
        let codes: [ResultCode] = [.error, .abort, .busy, .locked, .readonly, .ioError, .corrupt, .full, .notFound, .cantOpen,
                                   .constraint, .mismatch, .misuse, .range, .notADatabase]
        for c in codes {
            expectReadable(SQLiteError(extendedCode: c.rawValue, message: "m", sql: "SELECT 1", path: file))
        }
        expectReadable(SQLiteError(extendedCode: 2067, message: "UNIQUE constraint failed: t.a", sql: "INSERT", path: nil))
        #expect(SQLiteError(extendedCode: 13, message: "database or disk is full").localizedDescription.contains("device is full"))
        for errno in [ENOSPC, EDQUOT, EROFS, EACCES, EPERM, ENOENT, EIO, EINVAL] {
            expectReadable(SQLiteFileBackendError(errno: errno), errno: errno)
        }
    }
}
