// Hardware CRC32C: three independent streams would be faster still, but one stream already runs
// near 8 bytes a cycle-triple, far ahead of the disk.
#include "ccrc32c.h"
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#include <cpuid.h>

int lulucat_crc32c_hw_available(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c & bit_SSE4_2) != 0;
}

__attribute__((target("sse4.2")))
uint32_t lulucat_crc32c_hw(uint32_t crc, const void *data, size_t len) {
    const unsigned char *p = (const unsigned char *)data;
    uint64_t c = ~crc;
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
        p += 8;
        len -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (len--) c32 = _mm_crc32_u8(c32, *p++);
    return ~c32;
}

#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>

int lulucat_crc32c_hw_available(void) { return 1; }

uint32_t lulucat_crc32c_hw(uint32_t crc, const void *data, size_t len) {
    const unsigned char *p = (const unsigned char *)data;
    uint32_t c = ~crc;
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __crc32cd(c, v);
        p += 8;
        len -= 8;
    }
    while (len--) c = __crc32cb(c, *p++);
    return ~c;
}

#else
int lulucat_crc32c_hw_available(void) { return 0; }
uint32_t lulucat_crc32c_hw(uint32_t crc, const void *data, size_t len) {
    (void)data; (void)len;
    return crc;
}
#endif
