// The write pattern behind the WAL write buffer (docs/sqlite-engine.md §6.1), without SQLite:
// the bytes of a 5.44 MB save as SQLite's WAL writes them (a 32-byte header, then for each 16 KiB
// page a 24-byte frame header and the page, two pwrite calls a frame) against the same bytes
// gathered into buffers of several sizes, each into a new file then fdatasync; and the plain floor
// (100 writes of 54,400 bytes, fsync) and the same in one writev. Medians of N runs, alternated.
//
//     cc -O2 Benchmarks/wal_write_pattern.c -o /tmp/wal_write_pattern && /tmp/wal_write_pattern [DIR] [RUNS]

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { pageSize = 16384, frameHeader = 24, blobs = 100, blobSize = 54400, maxRuns = 101 };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void check(int ok, const char *what) {
    if (!ok) { perror(what); exit(1); }
}

// A write-combining buffer in front of pwrite, as the VFS shim does.
static unsigned char *buffer;
static size_t capacity, used;
static off_t start;

static void flush(int fd) {
    if (used) check(pwrite(fd, buffer, used, start) == (ssize_t)used, "pwrite");
    start += used;
    used = 0;
}

static void put(int fd, const unsigned char *p, size_t n, off_t offset) {
    if (capacity == 0) { check(pwrite(fd, p, n, offset) == (ssize_t)n, "pwrite"); return; }
    if (used && offset != start + (off_t)used) flush(fd);
    if (!used) start = offset;
    while (n) {
        size_t k = capacity - used < n ? capacity - used : n;
        memcpy(buffer + used, p, k);
        used += k; p += k; n -= k;
        if (used == capacity) flush(fd);
    }
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    int runs = argc > 2 ? atoi(argv[2]) : 21;
    if (runs < 1 || runs > maxRuns) runs = 21;
    size_t total = (size_t)blobs * blobSize;
    int pages = (int)(total / pageSize) + 1;
    unsigned char *data = malloc(total + pageSize);
    check(data != NULL, "malloc");
    for (size_t i = 0; i < total + pageSize; i++) data[i] = (unsigned char)(i * 2654435761u >> 13);
    static const size_t capacities[] = {0, 65536, 1 << 20};
    const char *names[] = {"floor: 100 writes + fsync", "floor: one writev + fsync",
                           "WAL frames, 2 pwrites a frame", "WAL frames, 64 KiB buffer", "WAL frames, 1 MiB buffer"};
    static double times[5][maxRuns];
    char path[4096];
    snprintf(path, sizeof path, "%s/wal-write-pattern.tmp", dir);
    for (int run = 0; run < runs; run++) {
        for (int k = 0; k < 5; k++) {
            int v = (k + run) % 5;  // alternate the order
            unlink(path);
            double t = now();
            int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
            check(fd >= 0, path);
            if (v == 0) {
                for (int i = 0; i < blobs; i++) check(write(fd, data + (size_t)i * blobSize, blobSize) == blobSize, "write");
                check(fsync(fd) == 0, "fsync");
            } else if (v == 1) {
                struct iovec iov[blobs];
                for (int i = 0; i < blobs; i++) { iov[i].iov_base = data + (size_t)i * blobSize; iov[i].iov_len = blobSize; }
                check(writev(fd, iov, blobs) == (ssize_t)total, "writev");
                check(fsync(fd) == 0, "fsync");
            } else {
                capacity = capacities[v - 2];
                used = 0;
                buffer = capacity ? malloc(capacity) : NULL;
                unsigned char header[32] = {0x37, 0x7f, 0x06, 0x82};
                put(fd, header, sizeof header, 0);
                off_t offset = sizeof header;
                for (int i = 0; i < pages; i++) {
                    put(fd, header, frameHeader, offset); offset += frameHeader;
                    put(fd, data + (size_t)i * pageSize % total, pageSize, offset); offset += pageSize;
                }
                if (capacity) flush(fd);
                check(fdatasync(fd) == 0, "fdatasync");
                free(buffer);
            }
            close(fd);
            times[v][run] = now() - t;
        }
    }
    unlink(path);
    double floor = 0;
    for (int v = 0; v < 5; v++) {
        qsort(times[v], runs, sizeof(double), compare);
        double m = times[v][runs / 2];
        if (v == 0) floor = m;
        printf("%-32s %7.3f ms  %5.2f x floor\n", names[v], m, m / floor);
    }
    return 0;
}
