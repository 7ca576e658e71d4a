// The change token of a server that lists no ETag (nginx + dav-ext, docs/sync.md §9): from
// `getlastmodified` and `getcontentlength`, given only once the file was left alone for 2 s by the
// listing's `Date`, so a file written again within its second with the same size is never taken
// for the copy already read.

import Foundation
import Testing
@testable import LulucatSync

@Suite struct ChangeTokenTests {
    @Test func httpDatesAreReadExactlyAndOtherFormsRefused() {
        #expect(HTTPDate.seconds("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(HTTPDate.seconds("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.seconds("Mon, 07 Dec 2026 07:31:41 GMT") == 1_796_628_701)
        #expect(HTTPDate.seconds("Tue, 29 Feb 2028 23:59:59 GMT") == 1_835_481_599)
        for bad in ["", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC",
                    "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nux 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:49:37 GMT",
                    "Sun, 06 Nov 1994 08:49:3x GMT", "Sun, 32 Nov 1994 08:49:37 GMT"] {
            #expect(HTTPDate.seconds(bad) == nil, "\(bad)")
        }
    }

    @Test func aTokenIsGivenOnlyOnceTheFileIsTwoSecondsOld() {
        let written = "Mon, 07 Dec 2026 07:31:41 GMT"
        let t = HTTPDate.seconds(written)!
        // Listed in its own second, or the next: none (the file may be written again unseen).
        #expect(WebDAVRemote.changeToken(lastModified: written, size: 10, listedAt: t) == nil)
        #expect(WebDAVRemote.changeToken(lastModified: written, size: 10, listedAt: t + 1) == nil)
        #expect(WebDAVRemote.changeToken(lastModified: written, size: 10, listedAt: t - 5) == nil)  // the server's clock went back
        #expect(WebDAVRemote.changeToken(lastModified: written, size: 10, listedAt: t + 2) == "lm:\(t):10")
        // No Date on the listing, no size, an unreadable time: none.
        #expect(WebDAVRemote.changeToken(lastModified: written, size: 10, listedAt: nil) == nil)
        #expect(WebDAVRemote.changeToken(lastModified: written, size: nil, listedAt: t + 9) == nil)
        #expect(WebDAVRemote.changeToken(lastModified: "yesterday", size: 10, listedAt: t + 9) == nil)
        // Another size or a later second: another token.
        #expect(WebDAVRemote.changeToken(lastModified: written, size: 11, listedAt: t + 2) != "lm:\(t):10")
        #expect(WebDAVRemote.changeToken(lastModified: "Mon, 07 Dec 2026 07:31:42 GMT", size: 10, listedAt: t + 3) == "lm:\(t + 1):10")
    }

    @Test func uploadDebrisIsToldFromBlobs() {
        let hex = String(repeating: "ab", count: 32)
        #expect(BlobName.isUploadDebris(hex + ".0123456789abcdef.tmp"))
        #expect(BlobName.isUploadDebris(hex + ".0000012345"))
        for name in [hex, hex + ".", hex + "x.tmp", "ab.tmp", String(repeating: "AB", count: 32) + ".tmp", hex + ".a b", hex + "." + String(repeating: "x", count: 64)] {
            #expect(!BlobName.isUploadDebris(name), "\(name)")
        }
    }
}
