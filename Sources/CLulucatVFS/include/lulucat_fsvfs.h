// A SQLite VFS whose every file operation is a call into a table of callbacks (the store's
// `FileSystem` seam, docs/crash-model.md §7), so that SQLite's I/O can run on a simulated disk.
//
// The callbacks speak errno (0 is success); this layer turns them into SQLite result codes
// (ENOSPC and EDQUOT: SQLITE_FULL; anything else: the SQLITE_IOERR_* code of the operation).
// What SQLite needs that is not a file (the WAL index, locks, temporary files without a name) is
// kept in this process's memory, per VFS: nothing of it survives the VFS, as nothing of the -shm
// file survives a crash of the real system that SQLite relies on.
#ifndef LULUCAT_FSVFS_H
#define LULUCAT_FSVFS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What a path is, as `lulucat_fs_callbacks.info` reports it.
enum { LULUCAT_FS_ABSENT = 0, LULUCAT_FS_FILE = 1, LULUCAT_FS_OTHER = 2 };

/// The file operations of one file system. Every function returns 0 or an errno; `context` is
/// passed back to each, and `release` is called once when the VFS is freed.
typedef struct lulucat_fs_callbacks {
    void *context;
    /// Opens `path` for reading and writing (reading only with `read_only`). With `create`, a
    /// missing file is created (and `*created` set to 1); with `exclusive`, an existing one is EEXIST.
    int (*open)(void *context, const char *path, int create, int exclusive, int read_only,
                int64_t *handle, int *created);
    int (*close)(void *context, int64_t handle);
    /// Reads up to `amount` bytes at `offset`; `*got` is how many there were (fewer at the end).
    int (*read)(void *context, int64_t handle, void *buffer, int amount, int64_t offset, int *got);
    int (*write)(void *context, int64_t handle, const void *buffer, int amount, int64_t offset);
    int (*truncate)(void *context, int64_t handle, int64_t size);
    /// fsync, or fdatasync with `data_only`.
    int (*sync)(void *context, int64_t handle, int data_only);
    int (*size)(void *context, int64_t handle, int64_t *size);
    int (*sync_directory)(void *context, const char *path);
    int (*remove)(void *context, const char *path);
    /// `*kind` is one of LULUCAT_FS_ABSENT, _FILE, _OTHER; `*size` the size of a file.
    int (*info)(void *context, const char *path, int *kind, int64_t *size);
    void (*release)(void *context);
} lulucat_fs_callbacks;

typedef struct lulucat_fsvfs lulucat_fsvfs;

/// Creates and registers a VFS over `callbacks` under a name of its own ("lulucat-fs-<n>").
/// Returns NULL (and `*rc` an SQLite code) when it cannot; `release` is then not called.
lulucat_fsvfs *lulucat_fsvfs_create(const lulucat_fs_callbacks *callbacks, int *rc);

/// The name to pass to sqlite3_open_v2.
const char *lulucat_fsvfs_name(const lulucat_fsvfs *vfs);

/// Unregisters the VFS. It is freed (and `release` called) now, or when the last file SQLite
/// still holds open through it is closed.
void lulucat_fsvfs_destroy(lulucat_fsvfs *vfs);

#ifdef __cplusplus
}
#endif

#endif
