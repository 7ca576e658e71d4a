// swift-tools-version: 6.0
// LulucatStore: the storage engine of Lulucat Notes, and its command-line tool `lnote`.
import PackageDescription

let package = Package(
    name: "LulucatStore",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "LulucatInk", targets: ["LulucatInk"]),
        .library(name: "LulucatStore", targets: ["LulucatStore"]),
        .library(name: "LulucatInterchange", targets: ["LulucatInterchange"]),
        .library(name: "LulucatSync", targets: ["LulucatSync"]),
        .executable(name: "lnote", targets: ["lnote"]),
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
        // libjpeg-turbo behind a small C shim whose errors return instead of exiting.
        .target(name: "CJPEG", linkerSettings: [.linkedLibrary("jpeg")]),

        // A VFS shim that coalesces SQLite's WAL writes (docs/sqlite-engine.md §6.1).
        .target(name: "CLulucatVFS", dependencies: ["CSQLite"]),
        // A thin SQLite wrapper of our own (GRDB's layering).
        .target(name: "LulucatSQLite", dependencies: ["CSQLite", "CLulucatVFS"]),
        // The rasterizer, SVG, PNG and JPEG encoders.
        .target(name: "LulucatRender", dependencies: ["LulucatInk", "CJPEG", "CZlib"]),
        // Files, packages, the library, document sessions and the storage engines.
        .target(name: "LulucatStore", dependencies: ["LulucatInk", "LulucatSQLite", "LulucatRender"]),
        // One-file export/import (zip) and W3C InkML.
        .target(name: "LulucatInterchange", dependencies: ["LulucatStore", "LulucatInk", "CZlib"]),

        // Sync through a folder or a WebDAV server (docs/sync.md).
        .target(name: "LulucatSync", dependencies: ["LulucatStore", "LulucatInk"]),

        // Not products: Apache with mod_dav and a fault proxy for the sync tests, and the sync bench.
        .target(name: "LulucatSyncTestSupport"),
        .executableTarget(name: "LulucatSyncBench",
                          dependencies: ["LulucatSync", "LulucatSyncTestSupport", "LulucatStore", "LulucatInk"]),

        .executableTarget(name: "lnote",
                          dependencies: ["LulucatInk", "LulucatStore", "LulucatRender",
                                         "LulucatInterchange", "LulucatSQLite", "LulucatSync"]),

        .testTarget(name: "LulucatInkTests", dependencies: ["LulucatInk"]),
        .testTarget(name: "LulucatSQLiteTests", dependencies: ["LulucatSQLite"]),
        .testTarget(name: "LulucatRenderTests", dependencies: ["LulucatRender", "LulucatInk"]),
        .testTarget(name: "LulucatStoreTests", dependencies: ["LulucatStore", "LulucatInk"]),
        .testTarget(name: "LulucatInterchangeTests",
                    dependencies: ["LulucatInterchange", "LulucatStore", "LulucatInk"]),
        .testTarget(name: "LnoteCLITests", dependencies: ["lnote"]),
        .testTarget(name: "LulucatSyncTests",
                    dependencies: ["LulucatSync", "LulucatSyncTestSupport", "LulucatStore", "LulucatInk"]),
    ]
)
