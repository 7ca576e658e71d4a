// See include/lulucat_open.h.
#if defined(__linux__)
#define _GNU_SOURCE
#endif
#include "lulucat_open.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__)
#include <stdint.h>
#include <sys/syscall.h>
#if defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define LULUCAT_HAVE_OPEN_HOW 1
#endif
#endif
#if !defined(LULUCAT_HAVE_OPEN_HOW)
// The kernel's ABI (include/uapi/linux/openat2.h, Linux 5.6), for headers older than it.
struct open_how { uint64_t flags; uint64_t mode; uint64_t resolve; };
#define RESOLVE_NO_SYMLINKS 0x04
#define RESOLVE_BENEATH 0x08
#endif
#endif

int lulucat_open_beneath_nofollow(int dirfd, const char *path, int flags) {
#if defined(__linux__) && defined(SYS_openat2)
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (uint64_t)(unsigned int)flags;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH;
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
#elif defined(__APPLE__) && defined(O_NOFOLLOW_ANY)
    if (path[0] == '/') { errno = EXDEV; return -1; }
    for (const char *p = path; *p; ) {
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') { errno = EXDEV; return -1; }
        if (!end) break;
        p = end + 1;
    }
    return openat(dirfd, path, flags | O_NOFOLLOW_ANY);
#else
    (void)dirfd; (void)path; (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}
