// The WAL write-coalescing VFS shim. See include/lulucat_vfs.h and docs/sqlite-engine.md §6.1.
//
// Invariants (what makes the buffer invisible to SQLite and to other processes):
// - The buffer holds one contiguous byte range [start, start + used) of one WAL file, written after
//   every byte already handed to the real file; writes are never reordered.
// - Before any call through which the WAL's contents or size can be observed (xRead, xSync,
//   xTruncate, xFileSize, xFileControl, xClose) the buffer is written out; so is it before a write
//   that does not extend the range, and at xShmBarrier of the database, which SQLite calls between
//   writing a commit's frames and publishing them in the WAL index for other connections.
// - A failed write-out discards the buffer and returns the error from the call that caused it; SQLite
//   then fails the transaction (a WAL write or sync error). A failure inside xShmBarrier (which
//   cannot return one) is kept and returned by every later call on the WAL.

#if defined(__linux__)
#define _GNU_SOURCE  // sync_file_range
#endif
#include "lulucat_vfs.h"

#include <pthread.h>
#include <sqlite3.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <fcntl.h>
#include <unistd.h>
#endif

typedef struct ShimFile ShimFile;
struct ShimFile {
    sqlite3_file base;      // must be first: SQLite sees this
    sqlite3_file *real;     // the wrapped file, in the same allocation, after this struct
    int isWal;
    // A database file: the WAL buffer size it asked for, and its WAL while that is open.
    int walBufferSetting;
    ShimFile *wal;
    lulucat_vfs_stats stats;  // of the WALs this database file has had
    // A WAL file: its database, the buffer, and a failure kept from xShmBarrier.
    ShimFile *db;
    unsigned char *buffer;
    int capacity;
    int used;
    sqlite3_int64 start;
    int stickyError;
    // Early writeback (Linux): the database's setting, and on a WAL a descriptor of its own for
    // sync_file_range and the range written since the last writeback was started.
    int walWritebackSetting;
    int writebackFd;
    sqlite3_int64 writebackFrom;
    sqlite3_int64 writebackEnd;
};

static sqlite3_vfs shimVfs;
static sqlite3_vfs *rootVfs;
static int registerResult = SQLITE_ERROR;
static pthread_once_t registerOnce = PTHREAD_ONCE_INIT;

// Counted on the database file (one connection, one thread at a time: no atomics needed).
#define COUNT(wal, field, n) do { if ((wal)->db) (wal)->db->stats.field += (uint64_t)(n); } while (0)

// SQLite's unix VFS writes at most 128 KiB - 1 bytes in one xWrite (it masks the length to 17
// bits: its own writes are one page, at most 64 KiB). The buffer stays within that.
enum { maxBufferBytes = 64 << 10 };

// MARK: The buffer

static uint64_t nowNs(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/// Starts the kernel writing out what the WAL has been given since the last start, once that is at
/// least the database's writeback setting: the commit's sync then waits for less, while SQLite
/// still builds the later frames. Only a start (SYNC_FILE_RANGE_WRITE): it waits for nothing,
/// flushes no metadata and consumes no error; durability is the commit's xSync as before.
static void startWriteback(ShimFile *p, sqlite3_int64 offset, int amount) {
#if defined(__linux__)
    int setting = p->db ? p->db->walWritebackSetting : 0;
    if (setting <= 0 || p->writebackFd < 0) return;
    if (offset != p->writebackEnd) p->writebackFrom = offset;
    p->writebackEnd = offset + amount;
    if (p->writebackEnd - p->writebackFrom >= setting) {
        if (sync_file_range(p->writebackFd, p->writebackFrom, p->writebackEnd - p->writebackFrom, SYNC_FILE_RANGE_WRITE) == 0) {
            COUNT(p, wal_writebacks, 1);
        }
        p->writebackFrom = p->writebackEnd;
    }
#else
    (void)p; (void)offset; (void)amount;
#endif
}

static int realWrite(ShimFile *p, const void *data, int amount, sqlite3_int64 offset) {
    COUNT(p, wal_file_writes, 1);
    uint64_t t0 = nowNs();
    int rc = p->real->pMethods->xWrite(p->real, data, amount, offset);
    if (rc == SQLITE_OK) startWriteback(p, offset, amount);
    COUNT(p, wal_write_ns, nowNs() - t0);
    return rc;
}

/// Hands what the buffer holds to the real file; the buffer is empty afterwards either way.
static int flushBuffer(ShimFile *p) {
    if (p->used == 0) return SQLITE_OK;
    int used = p->used;
    p->used = 0;
    return realWrite(p, p->buffer, used, p->start);
}

/// The error a WAL call returns before doing anything: a kept failure, or a failed write-out.
static int settle(ShimFile *p) {
    if (p->stickyError != SQLITE_OK) return p->stickyError;
    return flushBuffer(p);
}

/// The buffer size in force for this WAL (its database's setting), 0 when off.
static int wantedCapacity(ShimFile *p) {
    return p->db ? p->db->walBufferSetting : 0;
}

static int walWrite(ShimFile *p, const void *data, int amount, sqlite3_int64 offset) {
    COUNT(p, wal_write_calls, 1);
    COUNT(p, wal_write_bytes, amount);
    if (p->stickyError != SQLITE_OK) return p->stickyError;
    int rc;
    // Not the continuation of the buffered range: write that out first (order is kept).
    if (p->used > 0 && offset != p->start + p->used) {
        if ((rc = flushBuffer(p)) != SQLITE_OK) return rc;
    }
    int wanted = wantedCapacity(p);
    if (wanted != p->capacity) {
        if ((rc = flushBuffer(p)) != SQLITE_OK) return rc;
        sqlite3_free(p->buffer);
        p->buffer = NULL;
        p->capacity = 0;
        if (wanted > 0) {
            p->buffer = sqlite3_malloc(wanted);
            if (p->buffer) p->capacity = wanted;  // no memory: pass writes through unbuffered
        }
    }
    if (p->capacity == 0 || (p->used == 0 && amount >= p->capacity)) {
        return realWrite(p, data, amount, offset);
    }
    const unsigned char *bytes = data;
    while (amount > 0) {
        if (p->used == 0) p->start = offset;
        int room = p->capacity - p->used;
        int piece = amount < room ? amount : room;
        memcpy(p->buffer + p->used, bytes, (size_t)piece);
        p->used += piece;
        bytes += piece;
        offset += piece;
        amount -= piece;
        if (p->used == p->capacity) {
            if ((rc = flushBuffer(p)) != SQLITE_OK) return rc;
        }
    }
    return SQLITE_OK;
}

// MARK: io methods

static int shimClose(sqlite3_file *f) {
    ShimFile *p = (ShimFile *)f;
    int rc = SQLITE_OK;
    if (p->isWal) {
        rc = settle(p);
        sqlite3_free(p->buffer);
        p->buffer = NULL;
        p->capacity = 0;
        if (p->db && p->db->wal == p) p->db->wal = NULL;
        p->db = NULL;
#if defined(__linux__)
        if (p->writebackFd >= 0) close(p->writebackFd);
#endif
        p->writebackFd = -1;
    } else if (p->wal) {
        p->wal->db = NULL;  // SQLite closes the WAL first; this is only a guard
        p->wal = NULL;
    }
    int closeRc = p->real->pMethods ? p->real->pMethods->xClose(p->real) : SQLITE_OK;
    return rc != SQLITE_OK ? rc : closeRc;
}

static int shimRead(sqlite3_file *f, void *data, int amount, sqlite3_int64 offset) {
    ShimFile *p = (ShimFile *)f;
    if (p->isWal) {
        int rc = settle(p);
        if (rc != SQLITE_OK) return rc;
    }
    return p->real->pMethods->xRead(p->real, data, amount, offset);
}

static int shimWrite(sqlite3_file *f, const void *data, int amount, sqlite3_int64 offset) {
    ShimFile *p = (ShimFile *)f;
    if (p->isWal) return walWrite(p, data, amount, offset);
    uint64_t t0 = nowNs();
    int rc = p->real->pMethods->xWrite(p->real, data, amount, offset);
    p->stats.db_writes += 1;
    p->stats.db_write_bytes += (uint64_t)amount;
    p->stats.db_io_ns += nowNs() - t0;
    return rc;
}

static int shimTruncate(sqlite3_file *f, sqlite3_int64 size) {
    ShimFile *p = (ShimFile *)f;
    if (p->isWal) {
        int rc = settle(p);
        if (rc != SQLITE_OK) return rc;
    }
    return p->real->pMethods->xTruncate(p->real, size);
}

static int shimSync(sqlite3_file *f, int flags) {
    ShimFile *p = (ShimFile *)f;
    if (p->isWal) {
        int rc = settle(p);
        if (rc != SQLITE_OK) return rc;
    }
    uint64_t t0 = nowNs();
    int rc = p->real->pMethods->xSync(p->real, flags);
    uint64_t ns = nowNs() - t0;
    if (p->isWal) {
        COUNT(p, wal_syncs, 1);
        COUNT(p, wal_sync_ns, ns);
    } else {
        p->stats.db_syncs += 1;
        p->stats.db_io_ns += ns;
    }
    return rc;
}

static int shimFileSize(sqlite3_file *f, sqlite3_int64 *size) {
    ShimFile *p = (ShimFile *)f;
    if (p->isWal) {
        int rc = settle(p);
        if (rc != SQLITE_OK) return rc;
    }
    return p->real->pMethods->xFileSize(p->real, size);
}

static int shimLock(sqlite3_file *f, int level) {
    ShimFile *p = (ShimFile *)f;
    return p->real->pMethods->xLock(p->real, level);
}

static int shimUnlock(sqlite3_file *f, int level) {
    ShimFile *p = (ShimFile *)f;
    return p->real->pMethods->xUnlock(p->real, level);
}

static int shimCheckReservedLock(sqlite3_file *f, int *out) {
    ShimFile *p = (ShimFile *)f;
    return p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int shimFileControl(sqlite3_file *f, int op, void *arg) {
    ShimFile *p = (ShimFile *)f;
    if (op == LULUCAT_FCNTL_WAL_BUFFER) {
        if (p->isWal) return SQLITE_NOTFOUND;
        int *bytes = arg;
        if (*bytes >= 0) {
            p->walBufferSetting = *bytes > maxBufferBytes ? maxBufferBytes : *bytes;
            // Turned off or resized: the open WAL writes out what it holds now, not at its next write.
            if (p->wal && p->wal->capacity != p->walBufferSetting) {
                int rc = settle(p->wal);
                if (rc != SQLITE_OK) return rc;
            }
        }
        *bytes = p->walBufferSetting;
        return SQLITE_OK;
    }
    if (op == LULUCAT_FCNTL_WAL_WRITEBACK) {
        if (p->isWal) return SQLITE_NOTFOUND;
        int *bytes = arg;
        if (*bytes >= 0) p->walWritebackSetting = *bytes;
#if !defined(__linux__)
        p->walWritebackSetting = 0;  // no sync_file_range here
#endif
        *bytes = p->walWritebackSetting;
        return SQLITE_OK;
    }
    if (op == LULUCAT_FCNTL_WAL_STATS) {
        if (p->isWal) return SQLITE_NOTFOUND;
        *(lulucat_vfs_stats *)arg = p->stats;
        return SQLITE_OK;
    }
    if (op == SQLITE_FCNTL_VFSNAME && arg) {
        // Name this layer, as the VFS shims in SQLite's own tree do.
        int rc = p->real->pMethods->xFileControl(p->real, op, arg);
        char **name = arg;
        if (rc == SQLITE_OK && *name) {
            char *both = sqlite3_mprintf("%s/%z", LULUCAT_VFS_NAME, *name);
            if (both) *name = both;
        } else if (rc == SQLITE_NOTFOUND || !*name) {
            *name = sqlite3_mprintf("%s", LULUCAT_VFS_NAME);
            rc = SQLITE_OK;
        }
        return rc;
    }
    if (p->isWal) {
        int rc = settle(p);
        if (rc != SQLITE_OK) return rc;
    }
    return p->real->pMethods->xFileControl(p->real, op, arg);
}

static int shimSectorSize(sqlite3_file *f) {
    ShimFile *p = (ShimFile *)f;
    return p->real->pMethods->xSectorSize(p->real);
}

static int shimDeviceCharacteristics(sqlite3_file *f) {
    ShimFile *p = (ShimFile *)f;
    return p->real->pMethods->xDeviceCharacteristics(p->real);
}

static int shimShmMap(sqlite3_file *f, int region, int size, int extend, void volatile **out) {
    ShimFile *p = (ShimFile *)f;
    return p->real->pMethods->xShmMap(p->real, region, size, extend, out);
}

static int shimShmLock(sqlite3_file *f, int offset, int n, int flags) {
    ShimFile *p = (ShimFile *)f;
    return p->real->pMethods->xShmLock(p->real, offset, n, flags);
}

static void shimShmBarrier(sqlite3_file *f) {
    ShimFile *p = (ShimFile *)f;
    // SQLite calls this between writing a commit's frames and publishing the new WAL index header.
    // With a sync at commit (synchronous FULL) the buffer is already empty here.
    if (p->wal && p->wal->used > 0) {
        p->stats.barrier_flushes += 1;
        int rc = flushBuffer(p->wal);
        if (rc != SQLITE_OK && p->wal->stickyError == SQLITE_OK) p->wal->stickyError = rc;
    }
    p->real->pMethods->xShmBarrier(p->real);
}

static int shimShmUnmap(sqlite3_file *f, int deleteFlag) {
    ShimFile *p = (ShimFile *)f;
    return p->real->pMethods->xShmUnmap(p->real, deleteFlag);
}

static int shimFetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) {
    ShimFile *p = (ShimFile *)f;
    if (p->isWal) {  // SQLite never maps a WAL; if it ever did, the bytes must be in the file
        int rc = settle(p);
        if (rc != SQLITE_OK) return rc;
    }
    return p->real->pMethods->xFetch(p->real, offset, amount, out);
}

static int shimUnfetch(sqlite3_file *f, sqlite3_int64 offset, void *page) {
    ShimFile *p = (ShimFile *)f;
    return p->real->pMethods->xUnfetch(p->real, offset, page);
}

// One table a method version: SQLite decides what to call from iVersion, so ours must not
// promise more than the wrapped file has.
static const sqlite3_io_methods shimMethods[3] = {
    {1, shimClose, shimRead, shimWrite, shimTruncate, shimSync, shimFileSize, shimLock, shimUnlock,
     shimCheckReservedLock, shimFileControl, shimSectorSize, shimDeviceCharacteristics,
     NULL, NULL, NULL, NULL, NULL, NULL},
    {2, shimClose, shimRead, shimWrite, shimTruncate, shimSync, shimFileSize, shimLock, shimUnlock,
     shimCheckReservedLock, shimFileControl, shimSectorSize, shimDeviceCharacteristics,
     shimShmMap, shimShmLock, shimShmBarrier, shimShmUnmap, NULL, NULL},
    {3, shimClose, shimRead, shimWrite, shimTruncate, shimSync, shimFileSize, shimLock, shimUnlock,
     shimCheckReservedLock, shimFileControl, shimSectorSize, shimDeviceCharacteristics,
     shimShmMap, shimShmLock, shimShmBarrier, shimShmUnmap, shimFetch, shimUnfetch},
};

static int isShimFile(sqlite3_file *f) {
    return f && f->pMethods && f->pMethods >= &shimMethods[0] && f->pMethods <= &shimMethods[2];
}

// MARK: The VFS

static int shimOpen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *outFlags) {
    (void)vfs;
    ShimFile *p = (ShimFile *)f;
    memset(p, 0, sizeof(*p));
    p->writebackFd = -1;
    p->real = (sqlite3_file *)&p[1];
    int rc = rootVfs->xOpen(rootVfs, name, p->real, flags, outFlags);
    if (p->real->pMethods == NULL) {
        // Nothing to close: SQLite will not call xClose on us either.
        p->base.pMethods = NULL;
        return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
    }
    int version = p->real->pMethods->iVersion;
    if (version < 1) version = 1;
    if (version > 3) version = 3;
    p->base.pMethods = &shimMethods[version - 1];
    if (rc == SQLITE_OK && (flags & SQLITE_OPEN_WAL) && name) {
        p->isWal = 1;
        sqlite3_file *main = sqlite3_database_file_object(name);
        if (isShimFile(main)) {
            p->db = (ShimFile *)main;
            p->db->wal = p;
        }
#if defined(__linux__)
        // A descriptor of our own for early writeback (read-only: sync_file_range needs no more).
        p->writebackFd = open(name, O_RDONLY | O_CLOEXEC);
#endif
    }
    return rc;
}

static int shimDelete(sqlite3_vfs *vfs, const char *name, int syncDir) {
    (void)vfs;
    return rootVfs->xDelete(rootVfs, name, syncDir);
}

static int shimAccess(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return rootVfs->xAccess(rootVfs, name, flags, out);
}

static int shimFullPathname(sqlite3_vfs *vfs, const char *name, int n, char *out) {
    (void)vfs;
    return rootVfs->xFullPathname(rootVfs, name, n, out);
}

static void *shimDlOpen(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return rootVfs->xDlOpen(rootVfs, name);
}

static void shimDlError(sqlite3_vfs *vfs, int n, char *out) {
    (void)vfs;
    rootVfs->xDlError(rootVfs, n, out);
}

static void (*shimDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return rootVfs->xDlSym(rootVfs, handle, symbol);
}

static void shimDlClose(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    rootVfs->xDlClose(rootVfs, handle);
}

static int shimRandomness(sqlite3_vfs *vfs, int n, char *out) {
    (void)vfs;
    return rootVfs->xRandomness(rootVfs, n, out);
}

static int shimSleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return rootVfs->xSleep(rootVfs, microseconds);
}

static int shimCurrentTime(sqlite3_vfs *vfs, double *out) {
    (void)vfs;
    return rootVfs->xCurrentTime(rootVfs, out);
}

static int shimGetLastError(sqlite3_vfs *vfs, int n, char *out) {
    (void)vfs;
    return rootVfs->xGetLastError ? rootVfs->xGetLastError(rootVfs, n, out) : 0;
}

static int shimCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return rootVfs->xCurrentTimeInt64(rootVfs, out);
}

static int shimSetSystemCall(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr call) {
    (void)vfs;
    return rootVfs->xSetSystemCall(rootVfs, name, call);
}

static sqlite3_syscall_ptr shimGetSystemCall(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return rootVfs->xGetSystemCall(rootVfs, name);
}

static const char *shimNextSystemCall(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return rootVfs->xNextSystemCall(rootVfs, name);
}

static void registerVfs(void) {
    if (sqlite3_initialize() != SQLITE_OK) return;
    rootVfs = sqlite3_vfs_find(NULL);
    if (!rootVfs) return;
    memset(&shimVfs, 0, sizeof shimVfs);
    shimVfs.iVersion = rootVfs->iVersion < 3 ? rootVfs->iVersion : 3;
    shimVfs.szOsFile = (int)sizeof(ShimFile) + rootVfs->szOsFile;
    shimVfs.mxPathname = rootVfs->mxPathname;
    shimVfs.zName = LULUCAT_VFS_NAME;
    shimVfs.xOpen = shimOpen;
    shimVfs.xDelete = shimDelete;
    shimVfs.xAccess = shimAccess;
    shimVfs.xFullPathname = shimFullPathname;
    shimVfs.xDlOpen = rootVfs->xDlOpen ? shimDlOpen : NULL;
    shimVfs.xDlError = rootVfs->xDlError ? shimDlError : NULL;
    shimVfs.xDlSym = rootVfs->xDlSym ? shimDlSym : NULL;
    shimVfs.xDlClose = rootVfs->xDlClose ? shimDlClose : NULL;
    shimVfs.xRandomness = shimRandomness;
    shimVfs.xSleep = shimSleep;
    shimVfs.xCurrentTime = shimCurrentTime;
    shimVfs.xGetLastError = shimGetLastError;
    if (shimVfs.iVersion >= 2) shimVfs.xCurrentTimeInt64 = shimCurrentTimeInt64;
    if (shimVfs.iVersion >= 3) {
        shimVfs.xSetSystemCall = rootVfs->xSetSystemCall ? shimSetSystemCall : NULL;
        shimVfs.xGetSystemCall = rootVfs->xGetSystemCall ? shimGetSystemCall : NULL;
        shimVfs.xNextSystemCall = rootVfs->xNextSystemCall ? shimNextSystemCall : NULL;
    }
    registerResult = sqlite3_vfs_register(&shimVfs, 0);
}

int lulucat_vfs_register(void) {
    pthread_once(&registerOnce, registerVfs);
    return registerResult;
}
