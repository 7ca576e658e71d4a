// swift-tools-version: 6.0
// LulucatStore: the storage engine of Lulucat Notes, and its command-line tool `lnote`.
import PackageDescription

/// The platforms without ImageIO or CryptoKit, where JPEG goes through libjpeg-turbo (CJPEG) and
/// crypto through libcrypto (CLibcrypto).
let nonApple: [Platform] = [.linux, .android, .windows, .openbsd, .wasi]

let package = Package(
    name: "LulucatStore",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "LulucatInk", targets: ["LulucatInk"]),
        .library(name: "LulucatStore", targets: ["LulucatStore"]),
        // The SQLite engine, opt-in: an app that links it calls `Library.enableSQLiteEngine()` once
        // (docs/sqlite-engine.md); without it LulucatStore links no SQLite at all.
        .library(name: "LulucatStoreSQLite", targets: ["LulucatStoreSQLite"]),
        // Page thumbnails, opt-in: `Library.enableThumbnails()` draws them with LulucatRender
        // (docs/package-format.md: thumbnails are optional); without it sessions write none.
        .library(name: "LulucatStoreThumbnails", targets: ["LulucatStoreThumbnails"]),
        // Repair, engine migration and restoring a page from recovered/, opt-in (an app that
        // offers them imports it; nothing to enable). A session's open-time repair stays in the store.
        .library(name: "LulucatStoreMaintenance", targets: ["LulucatStoreMaintenance"]),
        .library(name: "LulucatInterchange", targets: ["LulucatInterchange"]),
        .library(name: "LulucatSync", targets: ["LulucatSync"]),
        // End-to-end encryption for sync (issue 17): vended so LulucatSync and an app can use it.
        .library(name: "LulucatCrypto", targets: ["LulucatCrypto"]),
        .executable(name: "lnote", targets: ["lnote"]),
        // No product vends the workshop (LulucatHandwriting, LulucatStoreTesting,
        // LulucatInterchangeTesting, LulucatSyncTesting) or lnote-dev: an app links the engine alone.
    ],
    targets: [
        // Pure values and codecs: the ink model, the page content format, CRC32C. No I/O.
        .target(name: "LulucatInk", dependencies: ["CCRC32C"]),
        // CRC32C with the processor's instructions where it has them.
        .target(name: "CCRC32C"),

        // System C libraries, through module maps.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // libjpeg-turbo behind a small C shim whose errors return instead of exiting. Only where
        // ImageIO is absent: Apple platforms code JPEG with ImageIO (the iOS SDK has no libjpeg), so
        // neither the shim nor -ljpeg is built there (docs/platforms.md).
        .target(name: "CJPEG", linkerSettings: [.linkedLibrary("jpeg", .when(platforms: nonApple))]),
        // OpenSSL 3's libcrypto for LulucatCrypto. Only where CryptoKit is absent: Apple platforms
        // use CryptoKit and CommonCrypto, and never build or link this (docs/platforms.md).
        .systemLibrary(name: "CLibcrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),

        // A VFS shim that coalesces SQLite's WAL writes (docs/sqlite-engine.md §6.1).
        .target(name: "CLulucatVFS", dependencies: ["CSQLite"]),
        // A thin SQLite wrapper of our own (GRDB's layering).
        .target(name: "LulucatSQLite", dependencies: ["CSQLite", "CLulucatVFS"]),
        // The rasterizer, SVG, PNG and JPEG encoders.
        .target(name: "LulucatRender",
                dependencies: ["LulucatInk", .target(name: "CJPEG", condition: .when(platforms: nonApple)), "CZlib"]),
        // Files, packages, the library, document sessions and the storage engines.
        // openat2 (Linux) / O_NOFOLLOW_ANY (Apple) for one-call, link-refusing opens below a folder.
        .target(name: "CLulucatOpen"),
        .target(name: "LulucatStore", dependencies: ["LulucatInk", "CLulucatOpen"]),
        // The SQLite engine (level 2), registered into the store's engine table by
        // `Library.enableSQLiteEngine()`.
        .target(name: "LulucatStoreSQLite", dependencies: ["LulucatStore", "LulucatInk", "LulucatSQLite"]),
        // The thumbnail renderer (LulucatRender) the store's ThumbnailWriter draws with, registered by
        // `Library.enableThumbnails()`.
        .target(name: "LulucatStoreThumbnails", dependencies: ["LulucatStore", "LulucatInk", "LulucatRender"]),
        // `DocumentRepair`, `EngineMigration`, `Library.restorePage`: maintenance an app calls explicitly.
        .target(name: "LulucatStoreMaintenance", dependencies: ["LulucatStore", "LulucatInk"]),
        // The crypto layer of end-to-end encryption: the platform's primitives behind one interface,
        // the key settings and the encrypted object format (docs/encryption.md).
        .target(name: "LulucatCrypto",
                dependencies: [.target(name: "CLibcrypto", condition: .when(platforms: nonApple))]),
        // One-file export/import (zip) and W3C InkML.
        .target(name: "LulucatInterchange", dependencies: ["LulucatStore", "LulucatInk", "CZlib"]),

        // What lnote and lnote-dev share: the command protocol, the option parser, exit codes.
        .target(name: "LnoteCommandLine"),
        .executableTarget(name: "lnote",
                          dependencies: ["LulucatInk", "LulucatStore", "LulucatRender",
                                         "LulucatInterchange", "LulucatSQLite", "LulucatHandwriting",
                                         "LulucatSync", "LnoteCommandLine", "LulucatStoreSQLite",
                                         "LulucatStoreThumbnails", "LulucatStoreMaintenance"]),
        // Sync through a folder or a WebDAV server (docs/sync.md).
        .target(name: "LulucatSync", dependencies: ["LulucatStore", "LulucatInk", "LulucatCrypto"]),

        // The workshop: targets that no product vends. Generators and real-ink reading, the crash
        // harness with its simulated file system and flows, the fuzz checks shared with swift test,
        // and the developers' tool (benchmarks, the crash checker).
        .target(name: "LulucatHandwriting", dependencies: ["LulucatInk"]),
        .target(name: "LulucatStoreTesting",
                dependencies: ["LulucatStore", "LulucatInk", "LulucatHandwriting", "LulucatSQLite", "LulucatStoreSQLite",
                               "LulucatStoreThumbnails", "LulucatStoreMaintenance"]),
        .target(name: "LulucatInterchangeTesting",
                dependencies: ["LulucatInterchange", "LulucatStore", "LulucatInk", "LulucatHandwriting", "LulucatStoreTesting"]),
        // Apache with mod_dav, OpenStack Swift with s3api, and a fault proxy for the sync tests and
        // lnote-dev bench sync (LulucatSync: the S3 server's bucket is made with S3Remote).
        .target(name: "LulucatSyncTestSupport", dependencies: ["LulucatSync"]),
        // The sync tests' helpers and the client-crash check of a round, shared with lnote-dev crashcheck.
        .target(name: "LulucatSyncTesting",
                dependencies: ["LulucatSync", "LulucatStore", "LulucatInk", "LulucatHandwriting", "LulucatStoreTesting"]),
        .executableTarget(name: "lnote-dev",
                          dependencies: ["LulucatInk", "LulucatStore", "LulucatRender", "LulucatInterchange",
                                         "LulucatSQLite", "LulucatHandwriting", "LulucatStoreTesting",
                                         "LulucatInterchangeTesting", "LulucatCrypto", "LnoteCommandLine",
                                         "LulucatSync", "LulucatSyncTesting", "LulucatSyncTestSupport", "LulucatStoreSQLite",
                                         "LulucatStoreThumbnails",
                                         "LulucatStoreMaintenance"]),

        .testTarget(name: "LulucatInkTests", dependencies: ["LulucatInk", "LulucatHandwriting"]),
        .testTarget(name: "LulucatSQLiteTests", dependencies: ["LulucatSQLite"]),
        .testTarget(name: "LulucatRenderTests", dependencies: ["LulucatRender", "LulucatInk", "LulucatHandwriting"]),
        .testTarget(name: "LulucatStoreTests",
                    dependencies: ["LulucatStore", "LulucatInk", "LulucatHandwriting", "LulucatStoreTesting",
                                   "LulucatStoreSQLite", "LulucatSQLite", "LulucatStoreThumbnails", "LulucatStoreMaintenance"]),
        .testTarget(name: "LulucatStoreSQLiteTests",
                    dependencies: ["LulucatStoreSQLite", "LulucatStore", "LulucatSQLite", "LulucatInk", "LulucatStoreTesting",
                                   "LulucatStoreMaintenance", "LulucatStoreThumbnails", "LulucatHandwriting"]),
        .testTarget(name: "LulucatInterchangeTests",
                    dependencies: ["LulucatInterchange", "LulucatStore", "LulucatInk", "LulucatRender", "LulucatHandwriting",
                                   "LulucatStoreTesting", "LulucatInterchangeTesting", "LulucatStoreSQLite",
                                   "LulucatStoreThumbnails", "LulucatStoreMaintenance"]),
        .testTarget(name: "LulucatCryptoTests", dependencies: ["LulucatCrypto"]),
        // LulucatStore and LulucatInk: the cross-process reader tests read what an lnote-dev process writes.
        // LulucatSyncTestSupport: `lnote sync` through the S3 store the tests start.
        .testTarget(name: "LnoteCLITests", dependencies: ["lnote", "lnote-dev", "LulucatStore", "LulucatInk", "LulucatStoreSQLite",
                                                       "LulucatStoreThumbnails", "LulucatStoreMaintenance", "LulucatSyncTestSupport",
                                                       "LulucatStoreTesting"]),
        .testTarget(name: "LulucatSyncTests",
                    dependencies: ["LulucatSync", "LulucatSyncTestSupport", "LulucatSyncTesting", "LulucatStore", "LulucatInk",
                                   "LulucatCrypto", "LulucatStoreTesting", "LulucatStoreSQLite", "LulucatStoreThumbnails",
                                   "LulucatStoreMaintenance"]),
    ]
)
