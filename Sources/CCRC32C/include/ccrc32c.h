// CRC32C with the processor's CRC instructions (SSE4.2 on x86-64, the CRC extension on ARMv8),
// used by LulucatInk when available; the portable slicing-by-8 in Swift is the reference.
#ifndef LULUCAT_CCRC32C_H
#define LULUCAT_CCRC32C_H
#include <stddef.h>
#include <stdint.h>

/// 1 when this processor has CRC32C instructions, else 0.
int lulucat_crc32c_hw_available(void);

/// CRC32C of `len` bytes continuing from `crc` (0 to start). Only call when available.
uint32_t lulucat_crc32c_hw(uint32_t crc, const void *data, size_t len);
#endif
