// The VFS over a table of file callbacks. See include/lulucat_fsvfs.h and docs/crash-model.md §7.
//
// What it does as the unix VFS does (so that a trace of it is the trace production would make):
// - a WAL, main journal or super-journal opened with SQLITE_OPEN_CREATE syncs its directory after
//   its first successful sync; xDelete with syncDir syncs the directory after the removal;
// - xAccess(EXISTS) is false for an empty file;
// - a short read zero-fills the rest of the buffer and returns SQLITE_IOERR_SHORT_READ.
// What lives only in memory, per VFS: the WAL index (shm regions, zeroed when first mapped, freed
// when the last connection unmaps them), the file locks and shm locks (one process), and
// temporary files SQLite opens without a name. xSectorSize is 4096 and xDeviceCharacteristics 0:
// no promise (atomic or safe-append writes) SQLite could use to skip a sync.

#include "lulucat_fsvfs.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

typedef struct LockNode LockNode;
typedef struct ShmNode ShmNode;
typedef struct FsFile FsFile;

struct lulucat_fsvfs {
    sqlite3_vfs base;  // must be first: SQLite sees this
    lulucat_fs_callbacks cb;
    sqlite3_vfs *root;  // randomness, sleep and time
    pthread_mutex_t mutex;  // the lock table and the shm nodes
    LockNode *locks;
    ShmNode *shms;
    int openFiles;
    int destroyed;
    char name[40];
};

/// The file locks of one path, shared by the files open on it.
struct LockNode {
    char *path;
    int refs;
    int shared;
    FsFile *reserved, *pending, *exclusive;
    LockNode *next;
};

/// The WAL index of one database: its regions and its locks.
struct ShmNode {
    char *path;
    int refs;
    int regionCount;
    int regionSize;
    char **regions;
    int shared[SQLITE_SHM_NLOCK];
    FsFile *exclusive[SQLITE_SHM_NLOCK];
    ShmNode *next;
};

struct FsFile {
    sqlite3_file base;  // must be first
    lulucat_fsvfs *vfs;
    char *path;
    int64_t handle;
    int deleteOnClose;
    int syncDirectoryPending;
    int lockLevel;
    LockNode *lock;
    ShmNode *shm;
    uint32_t shmShared, shmExclusive;
    // A temporary file without a name: its bytes, in memory.
    int inMemory;
    unsigned char *bytes;
    sqlite3_int64 size, capacity;
};

static pthread_mutex_t counterMutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned long vfsCounter = 0;

// MARK: Errors

static int isFull(int err) { return err == ENOSPC || err == EDQUOT; }

/// The result code of a failed operation: the disk full, or the operation's I/O error.
static int ioError(int err, int code) { return isFull(err) ? SQLITE_FULL : code; }

// MARK: Paths

/// The directory of `path` (a copy from sqlite3_malloc), "/" for a file at the root.
static char *directoryOf(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return sqlite3_mprintf(".");
    if (slash == path) return sqlite3_mprintf("/");
    return sqlite3_mprintf("%.*s", (int)(slash - path), path);
}

static int syncDirectoryOf(lulucat_fsvfs *vfs, const char *path) {
    char *dir = directoryOf(path);
    if (!dir) return SQLITE_NOMEM;
    int err = vfs->cb.sync_directory(vfs->cb.context, dir);
    sqlite3_free(dir);
    return err ? ioError(err, SQLITE_IOERR_DIR_FSYNC) : SQLITE_OK;
}

// MARK: Freeing the VFS

static void freeVfs(lulucat_fsvfs *vfs) {
    if (vfs->cb.release) vfs->cb.release(vfs->cb.context);
    pthread_mutex_destroy(&vfs->mutex);
    sqlite3_free(vfs);
}

/// One file fewer; frees a destroyed VFS after its last file.
static void fileClosed(lulucat_fsvfs *vfs) {
    pthread_mutex_lock(&vfs->mutex);
    int last = --vfs->openFiles == 0 && vfs->destroyed;
    pthread_mutex_unlock(&vfs->mutex);
    if (last) freeVfs(vfs);
}

// MARK: File locks (one process: a table per VFS, as the unix VFS keeps per inode)

static LockNode *lockNodeFor(FsFile *f) {
    if (f->lock) return f->lock;
    lulucat_fsvfs *vfs = f->vfs;
    for (LockNode *n = vfs->locks; n; n = n->next) {
        if (strcmp(n->path, f->path) == 0) { n->refs++; return f->lock = n; }
    }
    LockNode *n = sqlite3_malloc(sizeof *n);
    if (!n) return NULL;
    memset(n, 0, sizeof *n);
    n->path = sqlite3_mprintf("%s", f->path);
    if (!n->path) { sqlite3_free(n); return NULL; }
    n->refs = 1;
    n->next = vfs->locks;
    vfs->locks = n;
    return f->lock = n;
}

static void releaseLockNode(FsFile *f) {
    LockNode *n = f->lock;
    if (!n) return;
    f->lock = NULL;
    if (--n->refs > 0) return;
    for (LockNode **p = &f->vfs->locks; *p; p = &(*p)->next) {
        if (*p == n) { *p = n->next; break; }
    }
    sqlite3_free(n->path);
    sqlite3_free(n);
}

static int fsLock(sqlite3_file *file, int level) {
    FsFile *f = (FsFile *)file;
    if (f->lockLevel >= level) return SQLITE_OK;
    pthread_mutex_lock(&f->vfs->mutex);
    int rc = SQLITE_OK;
    LockNode *n = lockNodeFor(f);
    if (!n) {
        rc = SQLITE_NOMEM;
    } else if (level == SQLITE_LOCK_SHARED) {
        if ((n->pending && n->pending != f) || (n->exclusive && n->exclusive != f)) rc = SQLITE_BUSY;
        else { n->shared++; f->lockLevel = SQLITE_LOCK_SHARED; }
    } else if (level == SQLITE_LOCK_RESERVED) {
        if ((n->reserved && n->reserved != f) || (n->pending && n->pending != f)) rc = SQLITE_BUSY;
        else { n->reserved = f; f->lockLevel = SQLITE_LOCK_RESERVED; }
    } else {  // PENDING on the way to EXCLUSIVE: no new readers; then wait for the others to leave
        if ((n->pending && n->pending != f) || (n->exclusive && n->exclusive != f)) {
            rc = SQLITE_BUSY;
        } else {
            n->pending = f;
            f->lockLevel = SQLITE_LOCK_PENDING;
            if (level == SQLITE_LOCK_EXCLUSIVE) {
                if (n->shared > 1) rc = SQLITE_BUSY;
                else { n->exclusive = f; f->lockLevel = SQLITE_LOCK_EXCLUSIVE; }
            }
        }
    }
    pthread_mutex_unlock(&f->vfs->mutex);
    return rc;
}

static int fsUnlock(sqlite3_file *file, int level) {
    FsFile *f = (FsFile *)file;
    if (f->lockLevel <= level) return SQLITE_OK;
    pthread_mutex_lock(&f->vfs->mutex);
    LockNode *n = f->lock;
    if (n) {
        if (n->exclusive == f) n->exclusive = NULL;
        if (n->pending == f) n->pending = NULL;
        if (level < SQLITE_LOCK_RESERVED && n->reserved == f) n->reserved = NULL;
        if (level == SQLITE_LOCK_NONE && f->lockLevel >= SQLITE_LOCK_SHARED) n->shared--;
    }
    f->lockLevel = level;
    pthread_mutex_unlock(&f->vfs->mutex);
    return SQLITE_OK;
}

static int fsCheckReservedLock(sqlite3_file *file, int *out) {
    FsFile *f = (FsFile *)file;
    pthread_mutex_lock(&f->vfs->mutex);
    LockNode *n = f->lock;
    *out = n && (n->reserved || n->pending || n->exclusive);
    pthread_mutex_unlock(&f->vfs->mutex);
    return SQLITE_OK;
}

// MARK: The WAL index (in memory, per VFS and database path)

static int fsShmMap(sqlite3_file *file, int region, int size, int extend, void volatile **out) {
    FsFile *f = (FsFile *)file;
    lulucat_fsvfs *vfs = f->vfs;
    int rc = SQLITE_OK;
    *out = NULL;
    pthread_mutex_lock(&vfs->mutex);
    if (!f->shm) {
        ShmNode *n;
        for (n = vfs->shms; n; n = n->next) {
            if (strcmp(n->path, f->path) == 0) break;
        }
        if (!n) {
            n = sqlite3_malloc(sizeof *n);
            if (!n) { rc = SQLITE_NOMEM; goto done; }
            memset(n, 0, sizeof *n);
            n->path = sqlite3_mprintf("%s", f->path);
            if (!n->path) { sqlite3_free(n); rc = SQLITE_NOMEM; goto done; }
            n->regionSize = size;
            n->next = vfs->shms;
            vfs->shms = n;
        }
        n->refs++;
        f->shm = n;
    }
    ShmNode *n = f->shm;
    if (size != n->regionSize) { rc = SQLITE_IOERR_SHMSIZE; goto done; }
    if (region >= n->regionCount) {
        if (!extend) goto done;  // not there yet: *out stays NULL
        char **regions = sqlite3_realloc64(n->regions, (sqlite3_uint64)(region + 1) * sizeof(char *));
        if (!regions) { rc = SQLITE_IOERR_NOMEM; goto done; }
        n->regions = regions;
        while (n->regionCount <= region) {
            char *r = sqlite3_malloc(size);
            if (!r) { rc = SQLITE_IOERR_NOMEM; goto done; }
            memset(r, 0, (size_t)size);
            n->regions[n->regionCount++] = r;
        }
    }
    *out = n->regions[region];
done:
    pthread_mutex_unlock(&vfs->mutex);
    return rc;
}

static int fsShmLock(sqlite3_file *file, int offset, int count, int flags) {
    FsFile *f = (FsFile *)file;
    ShmNode *n = f->shm;
    if (!n || offset < 0 || count < 1 || offset + count > SQLITE_SHM_NLOCK) return SQLITE_IOERR_SHMLOCK;
    int rc = SQLITE_OK;
    pthread_mutex_lock(&f->vfs->mutex);
    if (flags & SQLITE_SHM_UNLOCK) {
        for (int i = offset; i < offset + count; i++) {
            uint32_t bit = 1u << i;
            if (f->shmExclusive & bit) { n->exclusive[i] = NULL; f->shmExclusive &= ~bit; }
            if (f->shmShared & bit) { n->shared[i]--; f->shmShared &= ~bit; }
        }
    } else if (flags & SQLITE_SHM_SHARED) {
        for (int i = offset; i < offset + count && rc == SQLITE_OK; i++) {
            if (n->exclusive[i] && n->exclusive[i] != f) rc = SQLITE_BUSY;
        }
        for (int i = offset; i < offset + count && rc == SQLITE_OK; i++) {
            uint32_t bit = 1u << i;
            if (!(f->shmShared & bit)) { n->shared[i]++; f->shmShared |= bit; }
        }
    } else {
        for (int i = offset; i < offset + count && rc == SQLITE_OK; i++) {
            int mine = (f->shmShared >> i) & 1;
            if ((n->exclusive[i] && n->exclusive[i] != f) || n->shared[i] - mine > 0) rc = SQLITE_BUSY;
        }
        for (int i = offset; i < offset + count && rc == SQLITE_OK; i++) {
            n->exclusive[i] = f;
            f->shmExclusive |= 1u << i;
        }
    }
    pthread_mutex_unlock(&f->vfs->mutex);
    return rc;
}

static void fsShmBarrier(sqlite3_file *file) {
    FsFile *f = (FsFile *)file;
    // The mutex is a full memory barrier (the regions are shared only inside this process).
    pthread_mutex_lock(&f->vfs->mutex);
    pthread_mutex_unlock(&f->vfs->mutex);
}

/// Detaches a file from its WAL index; the last one frees it (so a reopen starts from zeros).
static void detachShm(FsFile *f) {
    ShmNode *n = f->shm;
    if (!n) return;
    for (int i = 0; i < SQLITE_SHM_NLOCK; i++) {
        uint32_t bit = 1u << i;
        if (f->shmExclusive & bit) n->exclusive[i] = NULL;
        if (f->shmShared & bit) n->shared[i]--;
    }
    f->shmShared = f->shmExclusive = 0;
    f->shm = NULL;
    if (--n->refs > 0) return;
    for (ShmNode **p = &f->vfs->shms; *p; p = &(*p)->next) {
        if (*p == n) { *p = n->next; break; }
    }
    for (int i = 0; i < n->regionCount; i++) sqlite3_free(n->regions[i]);
    sqlite3_free(n->regions);
    sqlite3_free(n->path);
    sqlite3_free(n);
}

static int fsShmUnmap(sqlite3_file *file, int deleteFlag) {
    (void)deleteFlag;  // there is no -shm file to delete
    FsFile *f = (FsFile *)file;
    pthread_mutex_lock(&f->vfs->mutex);
    detachShm(f);
    pthread_mutex_unlock(&f->vfs->mutex);
    return SQLITE_OK;
}

// MARK: Files on the file system

static int fsClose(sqlite3_file *file) {
    FsFile *f = (FsFile *)file;
    lulucat_fsvfs *vfs = f->vfs;
    fsUnlock(file, SQLITE_LOCK_NONE);
    pthread_mutex_lock(&vfs->mutex);
    detachShm(f);
    releaseLockNode(f);
    pthread_mutex_unlock(&vfs->mutex);
    int err = vfs->cb.close(vfs->cb.context, f->handle);
    int rc = err ? SQLITE_IOERR_CLOSE : SQLITE_OK;
    if (f->deleteOnClose) vfs->cb.remove(vfs->cb.context, f->path);
    sqlite3_free(f->path);
    f->path = NULL;
    fileClosed(vfs);
    return rc;
}

static int fsRead(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    FsFile *f = (FsFile *)file;
    int got = 0;
    int err = f->vfs->cb.read(f->vfs->cb.context, f->handle, buffer, amount, offset, &got);
    if (err) return SQLITE_IOERR_READ;
    if (got < 0 || got > amount) return SQLITE_IOERR_READ;
    if (got < amount) {
        // SQLite requires the unread part zeroed (it may use the buffer as if it were read).
        memset((char *)buffer + got, 0, (size_t)(amount - got));
        return SQLITE_IOERR_SHORT_READ;
    }
    return SQLITE_OK;
}

static int fsWrite(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    FsFile *f = (FsFile *)file;
    int err = f->vfs->cb.write(f->vfs->cb.context, f->handle, buffer, amount, offset);
    return err ? ioError(err, SQLITE_IOERR_WRITE) : SQLITE_OK;
}

static int fsTruncate(sqlite3_file *file, sqlite3_int64 size) {
    FsFile *f = (FsFile *)file;
    int err = f->vfs->cb.truncate(f->vfs->cb.context, f->handle, size);
    return err ? ioError(err, SQLITE_IOERR_TRUNCATE) : SQLITE_OK;
}

static int fsSync(sqlite3_file *file, int flags) {
    FsFile *f = (FsFile *)file;
    int err = f->vfs->cb.sync(f->vfs->cb.context, f->handle, (flags & SQLITE_SYNC_DATAONLY) != 0);
    if (err) return ioError(err, SQLITE_IOERR_FSYNC);
    if (f->syncDirectoryPending) {
        // As the unix VFS: a new journal or WAL's directory entry is made durable with its first sync.
        int rc = syncDirectoryOf(f->vfs, f->path);
        if (rc != SQLITE_OK) return rc;
        f->syncDirectoryPending = 0;
    }
    return SQLITE_OK;
}

static int fsFileSize(sqlite3_file *file, sqlite3_int64 *size) {
    FsFile *f = (FsFile *)file;
    int64_t s = 0;
    int err = f->vfs->cb.size(f->vfs->cb.context, f->handle, &s);
    if (err) return SQLITE_IOERR_FSTAT;
    *size = s;
    return SQLITE_OK;
}

static int fsFileControl(sqlite3_file *file, int op, void *arg) {
    (void)file;
    if (op == SQLITE_FCNTL_VFSNAME && arg) {
        *(char **)arg = sqlite3_mprintf("lulucat-fs");
        return SQLITE_OK;
    }
    return SQLITE_NOTFOUND;
}

static int fsSectorSize(sqlite3_file *file) { (void)file; return 4096; }
static int fsDeviceCharacteristics(sqlite3_file *file) { (void)file; return 0; }

static const sqlite3_io_methods fsMethods = {
    2, fsClose, fsRead, fsWrite, fsTruncate, fsSync, fsFileSize, fsLock, fsUnlock, fsCheckReservedLock,
    fsFileControl, fsSectorSize, fsDeviceCharacteristics, fsShmMap, fsShmLock, fsShmBarrier, fsShmUnmap,
    NULL, NULL,
};

// MARK: Temporary files without a name (in memory)

static int memClose(sqlite3_file *file) {
    FsFile *f = (FsFile *)file;
    sqlite3_free(f->bytes);
    f->bytes = NULL;
    fileClosed(f->vfs);
    return SQLITE_OK;
}

static int memRead(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    FsFile *f = (FsFile *)file;
    sqlite3_int64 have = offset < f->size ? f->size - offset : 0;
    int got = have < amount ? (int)have : amount;
    if (got > 0) memcpy(buffer, f->bytes + offset, (size_t)got);
    if (got < amount) {
        memset((char *)buffer + got, 0, (size_t)(amount - got));
        return SQLITE_IOERR_SHORT_READ;
    }
    return SQLITE_OK;
}

static int memResize(FsFile *f, sqlite3_int64 size) {
    if (size > f->capacity) {
        sqlite3_int64 capacity = f->capacity ? f->capacity : 4096;
        while (capacity < size) capacity *= 2;
        unsigned char *bytes = sqlite3_realloc64(f->bytes, (sqlite3_uint64)capacity);
        if (!bytes) return SQLITE_IOERR_NOMEM;
        f->bytes = bytes;
        f->capacity = capacity;
    }
    if (size > f->size) memset(f->bytes + f->size, 0, (size_t)(size - f->size));
    f->size = size;
    return SQLITE_OK;
}

static int memWrite(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    FsFile *f = (FsFile *)file;
    if (offset + amount > f->size) {
        int rc = memResize(f, offset + amount);
        if (rc != SQLITE_OK) return rc;
    }
    memcpy(f->bytes + offset, buffer, (size_t)amount);
    return SQLITE_OK;
}

static int memTruncate(sqlite3_file *file, sqlite3_int64 size) {
    FsFile *f = (FsFile *)file;
    if (size < f->size) { f->size = size; return SQLITE_OK; }
    return memResize(f, size);
}

static int memSync(sqlite3_file *file, int flags) { (void)file; (void)flags; return SQLITE_OK; }

static int memFileSize(sqlite3_file *file, sqlite3_int64 *size) {
    *size = ((FsFile *)file)->size;
    return SQLITE_OK;
}

static int memLock(sqlite3_file *file, int level) { (void)file; (void)level; return SQLITE_OK; }
static int memCheckReservedLock(sqlite3_file *file, int *out) { (void)file; *out = 0; return SQLITE_OK; }

static const sqlite3_io_methods memMethods = {
    1, memClose, memRead, memWrite, memTruncate, memSync, memFileSize, memLock, memLock, memCheckReservedLock,
    fsFileControl, fsSectorSize, fsDeviceCharacteristics, NULL, NULL, NULL, NULL, NULL, NULL,
};

// MARK: The VFS

static int fsOpen(sqlite3_vfs *base, sqlite3_filename name, sqlite3_file *file, int flags, int *outFlags) {
    lulucat_fsvfs *vfs = (lulucat_fsvfs *)base;
    FsFile *f = (FsFile *)file;
    memset(f, 0, sizeof *f);
    f->vfs = vfs;
    if (!name) {
        f->inMemory = 1;
    } else {
        f->path = sqlite3_mprintf("%s", name);
        if (!f->path) return SQLITE_NOMEM;
        int create = (flags & SQLITE_OPEN_CREATE) != 0;
        int created = 0;
        int err = vfs->cb.open(vfs->cb.context, name, create, (flags & SQLITE_OPEN_EXCLUSIVE) != 0,
                               (flags & SQLITE_OPEN_READONLY) != 0, &f->handle, &created);
        if (err) {
            sqlite3_free(f->path);
            f->path = NULL;
            return SQLITE_CANTOPEN;
        }
        f->deleteOnClose = (flags & SQLITE_OPEN_DELETEONCLOSE) != 0;
        int type = flags & 0x0FFF00;
        f->syncDirectoryPending = create && (type == SQLITE_OPEN_WAL || type == SQLITE_OPEN_MAIN_JOURNAL
                                             || type == SQLITE_OPEN_SUPER_JOURNAL);
    }
    pthread_mutex_lock(&vfs->mutex);
    vfs->openFiles++;
    pthread_mutex_unlock(&vfs->mutex);
    f->base.pMethods = f->inMemory ? &memMethods : &fsMethods;
    if (outFlags) *outFlags = flags;
    return SQLITE_OK;
}

static int fsDelete(sqlite3_vfs *base, const char *name, int syncDir) {
    lulucat_fsvfs *vfs = (lulucat_fsvfs *)base;
    int err = vfs->cb.remove(vfs->cb.context, name);
    if (err == ENOENT) return SQLITE_IOERR_DELETE_NOENT;
    if (err) return SQLITE_IOERR_DELETE;
    return syncDir ? syncDirectoryOf(vfs, name) : SQLITE_OK;
}

static int fsAccess(sqlite3_vfs *base, const char *name, int flags, int *out) {
    lulucat_fsvfs *vfs = (lulucat_fsvfs *)base;
    int kind = LULUCAT_FS_ABSENT;
    int64_t size = 0;
    int err = vfs->cb.info(vfs->cb.context, name, &kind, &size);
    if (err) return SQLITE_IOERR_ACCESS;
    // As the unix VFS: an empty file does not "exist" (a zero-length WAL or journal is nothing).
    if (flags == SQLITE_ACCESS_EXISTS) *out = kind == LULUCAT_FS_OTHER || (kind == LULUCAT_FS_FILE && size > 0);
    else *out = kind != LULUCAT_FS_ABSENT;
    return SQLITE_OK;
}

static int fsFullPathname(sqlite3_vfs *base, const char *name, int n, char *out) {
    (void)base;
    // Simulated paths are not real: the path as given (the store passes absolute paths).
    if ((int)strlen(name) >= n) return SQLITE_CANTOPEN;
    sqlite3_snprintf(n, out, "%s", name);
    return SQLITE_OK;
}

static void *fsDlOpen(sqlite3_vfs *base, const char *name) { (void)base; (void)name; return NULL; }
static void fsDlError(sqlite3_vfs *base, int n, char *out) {
    (void)base;
    sqlite3_snprintf(n, out, "extensions cannot be loaded through this VFS");
}
static void (*fsDlSym(sqlite3_vfs *base, void *handle, const char *symbol))(void) {
    (void)base; (void)handle; (void)symbol;
    return NULL;
}
static void fsDlClose(sqlite3_vfs *base, void *handle) { (void)base; (void)handle; }

static int fsRandomness(sqlite3_vfs *base, int n, char *out) {
    sqlite3_vfs *root = ((lulucat_fsvfs *)base)->root;
    return root->xRandomness(root, n, out);
}
static int fsSleep(sqlite3_vfs *base, int microseconds) {
    sqlite3_vfs *root = ((lulucat_fsvfs *)base)->root;
    return root->xSleep(root, microseconds);
}
static int fsCurrentTime(sqlite3_vfs *base, double *out) {
    sqlite3_vfs *root = ((lulucat_fsvfs *)base)->root;
    return root->xCurrentTime(root, out);
}
static int fsGetLastError(sqlite3_vfs *base, int n, char *out) { (void)base; (void)n; (void)out; return 0; }
static int fsCurrentTimeInt64(sqlite3_vfs *base, sqlite3_int64 *out) {
    sqlite3_vfs *root = ((lulucat_fsvfs *)base)->root;
    if (root->iVersion >= 2 && root->xCurrentTimeInt64) return root->xCurrentTimeInt64(root, out);
    double now = 0;
    int rc = root->xCurrentTime(root, &now);
    *out = (sqlite3_int64)(now * 86400000.0);
    return rc;
}

lulucat_fsvfs *lulucat_fsvfs_create(const lulucat_fs_callbacks *callbacks, int *rc) {
    int result = sqlite3_initialize();
    sqlite3_vfs *root = result == SQLITE_OK ? sqlite3_vfs_find(NULL) : NULL;
    lulucat_fsvfs *vfs = root ? sqlite3_malloc(sizeof *vfs) : NULL;
    if (!vfs) {
        if (rc) *rc = result != SQLITE_OK ? result : (root ? SQLITE_NOMEM : SQLITE_ERROR);
        return NULL;
    }
    memset(vfs, 0, sizeof *vfs);
    vfs->cb = *callbacks;
    vfs->root = root;
    pthread_mutex_init(&vfs->mutex, NULL);
    pthread_mutex_lock(&counterMutex);
    unsigned long n = ++vfsCounter;
    pthread_mutex_unlock(&counterMutex);
    snprintf(vfs->name, sizeof vfs->name, "lulucat-fs-%lu", n);
    sqlite3_vfs *b = &vfs->base;
    b->iVersion = 2;
    b->szOsFile = (int)sizeof(FsFile);
    b->mxPathname = 1024;
    b->zName = vfs->name;
    b->xOpen = fsOpen;
    b->xDelete = fsDelete;
    b->xAccess = fsAccess;
    b->xFullPathname = fsFullPathname;
    b->xDlOpen = fsDlOpen;
    b->xDlError = fsDlError;
    b->xDlSym = fsDlSym;
    b->xDlClose = fsDlClose;
    b->xRandomness = fsRandomness;
    b->xSleep = fsSleep;
    b->xCurrentTime = fsCurrentTime;
    b->xGetLastError = fsGetLastError;
    b->xCurrentTimeInt64 = fsCurrentTimeInt64;
    result = sqlite3_vfs_register(b, 0);
    if (result != SQLITE_OK) {
        pthread_mutex_destroy(&vfs->mutex);
        sqlite3_free(vfs);
        if (rc) *rc = result;
        return NULL;
    }
    if (rc) *rc = SQLITE_OK;
    return vfs;
}

const char *lulucat_fsvfs_name(const lulucat_fsvfs *vfs) { return vfs->name; }

void lulucat_fsvfs_destroy(lulucat_fsvfs *vfs) {
    sqlite3_vfs_unregister(&vfs->base);
    pthread_mutex_lock(&vfs->mutex);
    vfs->destroyed = 1;
    int now = vfs->openFiles == 0;
    pthread_mutex_unlock(&vfs->mutex);
    if (now) freeVfs(vfs);
}
