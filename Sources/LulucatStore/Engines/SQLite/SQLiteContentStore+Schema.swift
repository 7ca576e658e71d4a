// The content database's schema, versioned with PRAGMA user_version, and its migrations.
// Column by column in docs/sqlite-engine.md; change both together.

import LulucatSQLite

extension SQLiteContentStore {
    /// The schema version this build writes and the newest it reads.
    package static let schemaVersion: Int64 = 2

    /// Migration `i` takes the schema from version `i` to `i + 1`. Each runs in its own
    /// transaction together with the `user_version` bump, so a crash leaves one version or the next.
    static let migrations: [String] = [
        // 0 -> 1: the first schema.
        """
        CREATE TABLE pages (
            id            BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
            canvas_width  INTEGER NOT NULL,
            canvas_height INTEGER NOT NULL
        ) STRICT;
        CREATE TABLE strokes (
            page_id      BLOB    NOT NULL,
            z            INTEGER NOT NULL,
            stroke_id    BLOB    NOT NULL,
            tool         INTEGER NOT NULL,
            rgba         INTEGER NOT NULL,
            width        INTEGER NOT NULL,
            channels     INTEGER NOT NULL,
            sample_count INTEGER NOT NULL,
            samples      BLOB    NOT NULL
        ) STRICT;
        CREATE UNIQUE INDEX strokes_by_z  ON strokes (page_id, z);
        CREATE UNIQUE INDEX strokes_by_id ON strokes (page_id, stroke_id);
        CREATE TABLE images (
            page_id  BLOB    NOT NULL,
            z        INTEGER NOT NULL,
            image_id BLOB    NOT NULL,
            asset_id BLOB    NOT NULL,
            x        INTEGER NOT NULL,
            y        INTEGER NOT NULL,
            width    INTEGER NOT NULL,
            height   INTEGER NOT NULL,
            rotation INTEGER NOT NULL
        ) STRICT;
        CREATE UNIQUE INDEX images_by_z  ON images (page_id, z);
        CREATE UNIQUE INDEX images_by_id ON images (page_id, image_id);
        CREATE TABLE unknown_elements (
            page_id    BLOB    NOT NULL,
            z          INTEGER NOT NULL,
            element_id BLOB    NOT NULL,
            kind       INTEGER NOT NULL,
            payload    BLOB    NOT NULL
        ) STRICT;
        CREATE UNIQUE INDEX unknown_elements_by_z  ON unknown_elements (page_id, z);
        CREATE UNIQUE INDEX unknown_elements_by_id ON unknown_elements (page_id, element_id);
        """,
        // 1 -> 2: a CRC32C on every content row (RowChecksum), and the codec of each stroke's
        // samples BLOB (0 fixed16, the only coding of version 1). The checksums of the rows already
        // there are filled in by `fillRowChecksums` in the same transaction.
        """
        ALTER TABLE pages ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE strokes ADD COLUMN codec INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE strokes ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE images ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE unknown_elements ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX strokes_fixed16 ON strokes (page_id) WHERE codec = 0;
        """,
    ]

    /// The tables and indexes version 2 must have (a version-1 file has them after its migration); anything else (a trigger, a view) is refused,
    /// because a database from another device must not run code of its own when we write to it.
    static let expectedObjects: Set<String> = [
        "table:pages", "index:sqlite_autoindex_pages_1",
        "table:strokes", "index:strokes_by_z", "index:strokes_by_id",
        "table:images", "index:images_by_z", "index:images_by_id",
        "table:unknown_elements", "index:unknown_elements_by_z", "index:unknown_elements_by_id",
        "index:strokes_fixed16",
    ]

    /// Brings a new database to the current schema, or checks an existing one.
    func prepareSchema() throws {
        let found = try connection.userVersion()
        guard found <= Self.schemaVersion else {
            throw SQLiteEngineError.newerSchema(file: path, found: found, supported: Self.schemaVersion)
        }
        if found < Self.schemaVersion {
            for version in Int(found)..<Int(Self.schemaVersion) {
                try connection.transaction {
                    try connection.execute(Self.migrations[version])
                    if version == 1 { try fillRowChecksums() }
                    try connection.setUserVersion(Int32(version + 1))
                }
            }
        }
        try checkSchemaObjects()
        if found == 1 {
            // A version-1 file was made without auto_vacuum: one VACUUM (atomic, through the WAL)
            // rewrites it so the pages compactSamples frees can be given back.
            try connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
            try connection.execute("VACUUM")
        }
    }

    private func checkSchemaObjects() throws {
        let list = try connection.prepare("SELECT type, name FROM sqlite_master")
        var found: Set<String> = []
        while try list.step() {
            found.insert("\(list.string(at: 0) ?? ""):\(list.string(at: 1) ?? "")")
        }
        let unexpected = found.subtracting(Self.expectedObjects)
        let missing = Self.expectedObjects.subtracting(found)
        guard unexpected.isEmpty, missing.isEmpty else {
            var parts: [String] = []
            if !missing.isEmpty { parts.append("missing \(missing.sorted().joined(separator: ", "))") }
            if !unexpected.isEmpty { parts.append("unexpected \(unexpected.sorted().joined(separator: ", "))") }
            throw SQLiteEngineError.unexpectedSchema(file: path, detail: parts.joined(separator: "; "))
        }
    }
}
