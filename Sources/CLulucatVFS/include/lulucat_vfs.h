// A SQLite VFS shim that coalesces the writes of a WAL file (docs/sqlite-engine.md §6.1).
//
// SQLite writes every WAL frame as two write() calls (a 24-byte header, then the page), each at the
// end of the file; a 5 MB save is about 700 system calls, and on Linux each one that extends a file
// costs far more than the bytes it copies. This VFS wraps the default one and, for a WAL file whose
// database asked for it (LULUCAT_FCNTL_WAL_BUFFER), collects consecutive writes in a buffer and
// hands them to the real file in large pieces. The buffer is always empty when SQLite can see the
// WAL's bytes through another path: before xSync (so a commit is on disk when its sync returns),
// before xRead, xTruncate, xFileSize, xFileControl and xClose of the WAL, before a write elsewhere in
// the file, and at xShmBarrier of its database (before a commit is published in the WAL index).
// Every other file, and every WAL without the setting, is passed through untouched.
#ifndef LULUCAT_VFS_H
#define LULUCAT_VFS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The name the VFS is registered under (pass it to sqlite3_open_v2).
#define LULUCAT_VFS_NAME "lulucat"

/// sqlite3_file_control(db, "main", LULUCAT_FCNTL_WAL_BUFFER, &bytes) on a database opened through
/// this VFS: bytes > 0 sets the WAL write buffer to that many bytes (at most 65,536: the
/// unix VFS takes at most 128 KiB - 1 bytes in one write), 0 turns it off
/// (after writing out what it holds), -1 only asks. On return `bytes` holds the setting in force.
/// Returns SQLITE_NOTFOUND on a database not opened through this VFS.
#define LULUCAT_FCNTL_WAL_BUFFER 0x4C554C01

/// Registers the VFS once (later calls return the first call's result). Not the default VFS:
/// only connections that name it use it. Returns an SQLite result code.
int lulucat_vfs_register(void);

/// sqlite3_file_control(db, "main", LULUCAT_FCNTL_WAL_WRITEBACK, &bytes) with an int: bytes > 0
/// starts the kernel's writeback of the WAL (Linux sync_file_range, SYNC_FILE_RANGE_WRITE: no
/// wait, no metadata) each time that many contiguous bytes have been handed to it, so a commit's
/// sync waits for less; 0 turns it off, -1 only asks. Always 0 where sync_file_range is missing.
#define LULUCAT_FCNTL_WAL_WRITEBACK 0x4C554C03

/// sqlite3_file_control(db, "main", LULUCAT_FCNTL_WAL_STATS, &stats) fills a lulucat_vfs_stats
/// with what this connection's WAL files have done since the database was opened.
#define LULUCAT_FCNTL_WAL_STATS 0x4C554C02

/// What a connection's WAL files have done (for tests and benchmarks).
typedef struct {
    /// xWrite calls SQLite made on WAL files, and their bytes.
    uint64_t wal_write_calls;
    uint64_t wal_write_bytes;
    /// Writes handed to the real files (buffered pieces and pass-through writes).
    uint64_t wal_file_writes;
    /// Buffer flushes forced by xShmBarrier: a commit about to be published while frames were
    /// still buffered (a WAL that commits without a sync).
    uint64_t barrier_flushes;
    /// Time spent in the real file's xWrite for the WAL (the write(2) calls), and in xSync of the
    /// WAL, with the number of syncs (monotonic clock, nanoseconds).
    uint64_t wal_write_ns;
    uint64_t wal_syncs;
    uint64_t wal_sync_ns;
    /// Writes and syncs of the database file itself (a checkpoint), and their time.
    uint64_t db_writes;
    uint64_t db_write_bytes;
    uint64_t db_syncs;
    uint64_t db_io_ns;
    /// Early writebacks started on the WAL (LULUCAT_FCNTL_WAL_WRITEBACK).
    uint64_t wal_writebacks;
} lulucat_vfs_stats;

#ifdef __cplusplus
}
#endif

#endif
