// One open of a file below an open folder, refusing a symbolic link in any component of the
// relative path (not only the last, as O_NOFOLLOW does): what `PosixFileSystem.readEach` needs
// to read `<package>/manifest.json` relative to the library's folder in one system call instead
// of opening the package folder first.
#ifndef LULUCAT_OPEN_H
#define LULUCAT_OPEN_H

#ifdef __cplusplus
extern "C" {
#endif

/// Opens `path` relative to the open folder `dirfd` with `flags` (no O_CREAT: no mode), refusing
/// a symbolic link in any component (ELOOP) and any way out of `dirfd` (`..`, an absolute path:
/// EXDEV). Linux: openat2(2) with RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH. Apple platforms: openat
/// with O_NOFOLLOW_ANY, `..` and absolute paths refused here. Returns the descriptor, or -1 with
/// errno set; errno is ENOSYS where this cannot be done (no openat2 in the headers or the kernel;
/// a seccomp filter may give ENOSYS or EPERM): the caller then opens component by component.
int lulucat_open_beneath_nofollow(int dirfd, const char *path, int flags);

#ifdef __cplusplus
}
#endif

#endif
