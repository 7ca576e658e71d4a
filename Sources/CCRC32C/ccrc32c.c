// Hardware CRC32C in three independent streams: the CRC instruction takes 3 cycles to give its
// result but can start one every cycle, so one stream waits on itself two cycles in three.
// Each 3 x 2 KiB block is cut in three; the streams run interleaved, and their results are joined
// by shifting (CRC of the same state over 2 KiB of zeros, a linear map of the state, applied
// through four 256-entry tables built once with the same instruction). The result is the same
// CRC32C as one stream (tested against the portable reference in Swift, CRC32CTests).
#include "ccrc32c.h"
#include <string.h>
#include <pthread.h>

enum { streamBytes = 2048 };

/// shiftTable[k][b]: the raw CRC state after streamBytes zero bytes from state b << 8k.
static uint32_t shiftTable[4][256];
static pthread_once_t shiftOnce = PTHREAD_ONCE_INIT;

static inline uint32_t shifted(uint32_t s) {
    return shiftTable[0][s & 0xFF] ^ shiftTable[1][(s >> 8) & 0xFF] ^ shiftTable[2][(s >> 16) & 0xFF] ^ shiftTable[3][s >> 24];
}

static inline uint64_t load64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

// The three-stream loop, with the platform's 64-bit and 8-bit CRC steps as STEP64 and STEP8.
#define CRC32C_THREE_STREAMS(STEP64, STEP8)                                                      \
    const unsigned char *p = (const unsigned char *)data;                                       \
    uint64_t c = (uint32_t)~crc;                                                                \
    if (len >= 3 * streamBytes) pthread_once(&shiftOnce, buildShiftTable);                      \
    while (len >= 3 * streamBytes) {                                                            \
        uint64_t c0 = c, c1 = 0, c2 = 0;                                                        \
        for (size_t i = 0; i < streamBytes; i += 8) {                                           \
            c0 = STEP64(c0, load64(p + i));                                                     \
            c1 = STEP64(c1, load64(p + streamBytes + i));                                       \
            c2 = STEP64(c2, load64(p + 2 * streamBytes + i));                                   \
        }                                                                                       \
        c = shifted(shifted((uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;                       \
        p += 3 * streamBytes;                                                                   \
        len -= 3 * streamBytes;                                                                 \
    }                                                                                           \
    while (len >= 8) {                                                                          \
        c = STEP64(c, load64(p));                                                               \
        p += 8;                                                                                 \
        len -= 8;                                                                               \
    }                                                                                           \
    uint32_t c32 = (uint32_t)c;                                                                 \
    while (len--) c32 = STEP8(c32, *p++);                                                       \
    return ~c32;

#define CRC32C_BUILD_SHIFT_TABLE(STEP64)                                                        \
    for (int k = 0; k < 4; k++) {                                                               \
        for (uint32_t b = 0; b < 256; b++) {                                                    \
            uint64_t s = (uint64_t)(b << (8 * k));                                              \
            for (int i = 0; i < streamBytes / 8; i++) s = STEP64(s, 0);                         \
            shiftTable[k][b] = (uint32_t)s;                                                     \
        }                                                                                       \
    }

#if defined(__x86_64__)
#include <nmmintrin.h>
#include <cpuid.h>

int lulucat_crc32c_hw_available(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c & bit_SSE4_2) != 0;
}

#define X86_STEP64(c, v) _mm_crc32_u64((c), (v))
#define X86_STEP8(c, v) _mm_crc32_u8((c), (v))

__attribute__((target("sse4.2")))
static void buildShiftTable(void) { CRC32C_BUILD_SHIFT_TABLE(X86_STEP64) }

__attribute__((target("sse4.2")))
uint32_t lulucat_crc32c_hw(uint32_t crc, const void *data, size_t len) {
    CRC32C_THREE_STREAMS(X86_STEP64, X86_STEP8)
}

#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>

int lulucat_crc32c_hw_available(void) { return 1; }

#define ARM_STEP64(c, v) ((uint64_t)__crc32cd((uint32_t)(c), (v)))
#define ARM_STEP8(c, v) __crc32cb((c), (v))

static void buildShiftTable(void) { CRC32C_BUILD_SHIFT_TABLE(ARM_STEP64) }

uint32_t lulucat_crc32c_hw(uint32_t crc, const void *data, size_t len) {
    CRC32C_THREE_STREAMS(ARM_STEP64, ARM_STEP8)
}

#else
int lulucat_crc32c_hw_available(void) { return 0; }
uint32_t lulucat_crc32c_hw(uint32_t crc, const void *data, size_t len) {
    (void)data; (void)len;
    return crc;
}
#endif
