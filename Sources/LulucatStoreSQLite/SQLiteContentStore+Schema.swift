// The content database's schema, versioned with PRAGMA user_version, and its migrations.
// Column by column in docs/sqlite-engine.md; change both together.

import LulucatSQLite
import LulucatStore

extension SQLiteContentStore {
    /// The schema version this build writes and the newest it reads.
    package static let schemaVersion: Int64 = 4

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
        // 2 -> 3: small at rest. Pages get an integer key that the element rows name instead of
        // the page's 16-byte id; the (page, id) indexes are gone (an id is found through the page's
        // rows, read once a save: PageWriter.placements); each row's samples BLOB is its last
        // column; images and unknown elements, small rows, are WITHOUT ROWID tables keyed by
        // (page, z), so they need no index of their own. Checksums are unchanged (they cover the page's id, not its key) and carried
        // over. A row whose page_id names no page row gets a page row of its own with crc 0 (a
        // damaged page row: salvage keeps its elements), so no row is dropped by the copy.
        """
        CREATE TABLE pages_v3 (
            key           INTEGER PRIMARY KEY,
            id            BLOB    NOT NULL UNIQUE,
            canvas_width  INTEGER NOT NULL,
            canvas_height INTEGER NOT NULL,
            crc           INTEGER NOT NULL
        ) STRICT;
        INSERT INTO pages_v3 (key, id, canvas_width, canvas_height, crc)
            SELECT rowid, id, canvas_width, canvas_height, crc FROM pages ORDER BY rowid;
        INSERT OR IGNORE INTO pages_v3 (id, canvas_width, canvas_height, crc)
            SELECT page_id, 0, 0, 0 FROM (SELECT page_id FROM strokes UNION SELECT page_id FROM images
                                          UNION SELECT page_id FROM unknown_elements);
        CREATE TABLE strokes_v3 (
            page         INTEGER NOT NULL,
            z            INTEGER NOT NULL,
            stroke_id    BLOB    NOT NULL,
            tool         INTEGER NOT NULL,
            rgba         INTEGER NOT NULL,
            width        INTEGER NOT NULL,
            channels     INTEGER NOT NULL,
            sample_count INTEGER NOT NULL,
            codec        INTEGER NOT NULL,
            crc          INTEGER NOT NULL,
            samples      BLOB    NOT NULL
        ) STRICT;
        INSERT INTO strokes_v3 SELECT p.key, s.z, s.stroke_id, s.tool, s.rgba, s.width, s.channels, s.sample_count,
                                      s.codec, s.crc, s.samples
            FROM strokes s JOIN pages_v3 p ON p.id = s.page_id ORDER BY p.key, s.z;
        CREATE TABLE images_v3 (
            page     INTEGER NOT NULL,
            z        INTEGER NOT NULL,
            image_id BLOB    NOT NULL,
            asset_id BLOB    NOT NULL,
            x        INTEGER NOT NULL,
            y        INTEGER NOT NULL,
            width    INTEGER NOT NULL,
            height   INTEGER NOT NULL,
            rotation INTEGER NOT NULL,
            crc      INTEGER NOT NULL,
            PRIMARY KEY (page, z)
        ) STRICT, WITHOUT ROWID;
        INSERT INTO images_v3 SELECT p.key, s.z, s.image_id, s.asset_id, s.x, s.y, s.width, s.height, s.rotation, s.crc
            FROM images s JOIN pages_v3 p ON p.id = s.page_id ORDER BY p.key, s.z;
        CREATE TABLE unknown_elements_v3 (
            page       INTEGER NOT NULL,
            z          INTEGER NOT NULL,
            element_id BLOB    NOT NULL,
            kind       INTEGER NOT NULL,
            crc        INTEGER NOT NULL,
            payload    BLOB    NOT NULL,
            PRIMARY KEY (page, z)
        ) STRICT, WITHOUT ROWID;
        INSERT INTO unknown_elements_v3 SELECT p.key, s.z, s.element_id, s.kind, s.crc, s.payload
            FROM unknown_elements s JOIN pages_v3 p ON p.id = s.page_id ORDER BY p.key, s.z;
        DROP TABLE pages;
        DROP TABLE strokes;
        DROP TABLE images;
        DROP TABLE unknown_elements;
        ALTER TABLE pages_v3 RENAME TO pages;
        ALTER TABLE strokes_v3 RENAME TO strokes;
        ALTER TABLE images_v3 RENAME TO images;
        ALTER TABLE unknown_elements_v3 RENAME TO unknown_elements;
        CREATE UNIQUE INDEX strokes_by_z ON strokes (page, z);
        CREATE INDEX strokes_fixed16 ON strokes (page) WHERE codec = 0;
        """,
        // 3 -> 4: an index of strokes by id again, keyed by the page's integer key, so that a save
        // finds the strokes it names, and checks that a new id is not on the page, without reading
        // every row of the page (a save's cost then grows with its changes, not with the page).
        // It holds the id's last 4 bytes (random in UUID versions 4 and 7), not all 16: half the
        // size at rest; a lookup compares the whole id on the row it finds (`strokeByIDQuery`).
        // Not UNIQUE: a foreign file with one id twice still opens (edits name the lower z).
        // Images and unknown elements keep no index by id: a page holds few.
        """
        CREATE INDEX strokes_by_id ON strokes (page, substr(stroke_id, 13));
        """,
    ]

    /// The version-4 schema as a new database gets it, in one step rather than through the
    /// migrations (which give an older file the same tables, columns, types and keys). Its text is
    /// what `sqlite_schema` stores, so it is written short: two pages fewer than the migrations'
    /// text in a 1 KiB-page file (§3.4, §3.5, §3.6 of docs/sqlite-engine.md). Columns carry no `NOT NULL`: STRICT still refuses a value of the wrong type, our
    /// writer binds no NULL, and the reader checks every column's type (`RowReader`), so a NULL
    /// reads as a damaged row either way, which is also what damage to a record header gives
    /// whatever the declaration says.
    static let currentSchema = """
        CREATE TABLE pages(key INTEGER PRIMARY KEY,id BLOB UNIQUE,canvas_width INT,canvas_height INT,crc INT)STRICT;\
        CREATE TABLE strokes(page INT,z INT,stroke_id BLOB,tool INT,rgba INT,width INT,channels INT,\
        sample_count INT,codec INT,crc INT,samples BLOB)STRICT;\
        CREATE TABLE images(page INT,z INT,image_id BLOB,asset_id BLOB,x INT,y INT,width INT,height INT,\
        rotation INT,crc INT,PRIMARY KEY(page,z))STRICT,WITHOUT ROWID;\
        CREATE TABLE unknown_elements(page INT,z INT,element_id BLOB,kind INT,crc INT,payload BLOB,\
        PRIMARY KEY(page,z))STRICT,WITHOUT ROWID;\
        CREATE UNIQUE INDEX strokes_by_z ON strokes(page,z);\
        CREATE INDEX strokes_fixed16 ON strokes(page)WHERE codec=0;\
        CREATE INDEX strokes_by_id ON strokes(page,substr(stroke_id,13));
        """

    /// The tables and indexes version 4 must have (an older file has them after its migrations); anything else (a trigger, a view) is refused,
    /// because a database from another device must not run code of its own when we write to it.
    static let expectedObjects: Set<String> = expectedObjectsOfVersion3.union(["index:strokes_by_id"])

    /// Version 3's objects: a reader reads a version-3 file as it is (`readsVersion3InPlace`).
    static let expectedObjectsOfVersion3: Set<String> = [
        "table:pages", "index:sqlite_autoindex_pages_1",
        "table:strokes", "index:strokes_by_z", "index:strokes_fixed16",
        "table:images", "table:unknown_elements",
    ]

    /// A stroke's rows by id: `strokes_by_id` narrows to the rows whose id ends in the same 4 bytes
    /// (?3), the whole id (?2) is compared on them. `INDEXED BY`, and no `ORDER BY z` (the caller
    /// takes the lowest z, for a foreign file with one id twice): with `ORDER BY z LIMIT 1` SQLite's
    /// planner walks the page's rows through `strokes_by_z` instead, reading every one.
    static let strokeByIDQuery = "SELECT z FROM strokes INDEXED BY strokes_by_id WHERE page = ?1 AND substr(stroke_id, 13) = ?3 AND stroke_id = ?2"

    /// The oldest version a reader reads in the file as it is: version 3 differs from 4 only by
    /// `strokes_by_id`, which only writes use. Older files are migrated in an in-memory copy.
    static let oldestReadInPlace: Int64 = 3

    /// Brings a new database to the current schema, or checks an existing one.
    func prepareSchema() throws {
        let found = try connection.userVersion()
        guard found <= Self.schemaVersion else {
            throw SQLiteEngineError.newerSchema(file: path, found: found, supported: Self.schemaVersion)
        }
        if found == 3, isReader {
            // A reader of a version-3 file: the rows read the same without the index writes use.
            try checkSchemaObjects(Self.expectedObjectsOfVersion3)
            return
        }
        if found == 0 {
            try connection.transaction {
                try connection.execute(Self.currentSchema)
                try connection.setUserVersion(Int32(Self.schemaVersion))
            }
        } else if found < Self.schemaVersion {
            for version in Int(found)..<Int(Self.schemaVersion) {
                try connection.transaction {
                    try connection.execute(Self.migrations[version])
                    if version == 1 { try fillRowChecksums() }
                    try connection.setUserVersion(Int32(version + 1))
                }
            }
        }
        try checkSchemaObjects(Self.expectedObjects)
        if found == 1 || found == 2 {
            // An older file: one VACUUM (atomic, through the WAL) packs the tables migration 2 -> 3
            // copied and gives back the pages of the old ones; a version-1 file was made without
            // auto_vacuum, which this VACUUM turns on so the pages compactSamples frees can be given
            // back. (A file keeps its page size: SQLite cannot change it in WAL mode.)
            if found == 1 { try connection.execute("PRAGMA auto_vacuum = INCREMENTAL") }
            try connection.execute("VACUUM")
        }
    }

    private func checkSchemaObjects(_ expected: Set<String>) throws {
        let list = try connection.prepare("SELECT type, name FROM sqlite_master")
        var found: Set<String> = []
        while try list.step() {
            found.insert("\(list.string(at: 0) ?? ""):\(list.string(at: 1) ?? "")")
        }
        let unexpected = found.subtracting(expected)
        let missing = expected.subtracting(found)
        guard unexpected.isEmpty, missing.isEmpty else {
            var parts: [String] = []
            if !missing.isEmpty { parts.append("missing \(missing.sorted().joined(separator: ", "))") }
            if !unexpected.isEmpty { parts.append("unexpected \(unexpected.sorted().joined(separator: ", "))") }
            throw SQLiteEngineError.unexpectedSchema(file: path, detail: parts.joined(separator: "; "))
        }
    }
}
