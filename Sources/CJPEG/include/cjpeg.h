// A small shim over libjpeg-turbo whose errors return a code instead of ending the process.
//
// libjpeg's default error handler calls exit(). Every entry point here installs its own handler
// that jumps back (setjmp/longjmp) and returns LULUCAT_JPEG_ERROR with the library's message, and it
// treats libjpeg's warnings about corrupt or truncated data as errors too (a few harmless ones, such
// as stray bytes between segments, are tolerated).
#ifndef LULUCAT_CJPEG_H
#define LULUCAT_CJPEG_H
#include <stddef.h>

#define LULUCAT_JPEG_OK 0
#define LULUCAT_JPEG_ERROR 1
#define LULUCAT_JPEG_TOO_LARGE 2
#define LULUCAT_JPEG_BAD_ARGUMENT 3

/// The libjpeg API version the shim was built against (62 for libjpeg62-turbo).
int lulucat_jpeg_version(void);

/// Reads the header of the JPEG in `data` and stores its size in pixels.
/// On failure returns LULUCAT_JPEG_ERROR and writes a message into `message` (NUL-terminated).
int lulucat_jpeg_read_size(const unsigned char *data, size_t size,
                           int *width, int *height,
                           char *message, size_t message_capacity);

/// Decodes the JPEG in `data` into `out` as RGBA8 (alpha 255), rows top to bottom.
/// `expected_width` and `expected_height` are what lulucat_jpeg_read_size returned; `out_capacity`
/// must be at least width * height * 4. Images larger than `max_pixels` are refused before anything
/// is allocated (LULUCAT_JPEG_TOO_LARGE).
int lulucat_jpeg_decode_rgba(const unsigned char *data, size_t size,
                             int expected_width, int expected_height, size_t max_pixels,
                             unsigned char *out, size_t out_capacity,
                             char *message, size_t message_capacity);

/// Encodes `pixels` (RGBA8 when `channels` is 4, alpha ignored; RGB8 when 3) as a baseline JPEG of
/// `quality` (1...100). On success `*out` is a malloc'd buffer of `*out_size` bytes that the caller
/// releases with lulucat_jpeg_free.
int lulucat_jpeg_encode(const unsigned char *pixels, int width, int height, int channels, int quality,
                        unsigned char **out, unsigned long *out_size,
                        char *message, size_t message_capacity);

/// Releases a buffer returned by lulucat_jpeg_encode.
void lulucat_jpeg_free(unsigned char *buffer);

#endif
