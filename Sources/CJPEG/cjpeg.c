// libjpeg-turbo behind entry points that return an error code and a message, never exit().
// Apple platforms code JPEG with ImageIO and never build this shim (Package.swift, docs/platforms.md);
// the guard keeps an explicit build of the target there from needing <jpeglib.h>.
#if !defined(__APPLE__)
#include "cjpeg.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

#ifndef JCS_EXTENSIONS
#error "CJPEG needs libjpeg-turbo (JCS_EXT_RGBA); install libjpeg62-turbo-dev"
#endif

// Progressive JPEGs can hold thousands of tiny scans that take minutes to decode; real ones have
// about ten. Refusing more than this keeps a hostile file from stalling a thumbnail.
#define LULUCAT_MAX_SCANS 1000

struct lulucat_error {
    struct jpeg_error_mgr pub;  // first: libjpeg casts cinfo->err to this
    jmp_buf jump;
    char *message;
    size_t message_capacity;
};

static void copy_message(struct lulucat_error *err, const char *text) {
    if (err->message == NULL || err->message_capacity == 0) return;
    snprintf(err->message, err->message_capacity, "%s", text);
}

static void lulucat_error_exit(j_common_ptr cinfo) {
    struct lulucat_error *err = (struct lulucat_error *)cinfo->err;
    char buffer[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, buffer);
    copy_message(err, buffer);
    longjmp(err->jump, 1);
}

// Warnings (level -1) mostly mean corrupt or truncated data that libjpeg would paper over with
// grey: those are errors. A few are harmless quirks of real cameras and editors (stray bytes
// between segments, an unknown JFIF revision or Adobe transform code, a bad ICC marker we do not
// read) and are let through. Trace messages (level >= 0) are dropped instead of printed to stderr.
static void lulucat_emit_message(j_common_ptr cinfo, int msg_level) {
    if (msg_level >= 0) return;
    switch (cinfo->err->msg_code) {
    case JWRN_EXTRANEOUS_DATA:
    case JWRN_JFIF_MAJOR:
    case JWRN_ADOBE_XFORM:
    case JWRN_BOGUS_ICC:
        return;
    default:
        lulucat_error_exit(cinfo);
    }
}

static void lulucat_progress(j_common_ptr cinfo) {
    if (cinfo->is_decompressor) {
        j_decompress_ptr d = (j_decompress_ptr)cinfo;
        if (d->input_scan_number > LULUCAT_MAX_SCANS) {
            struct lulucat_error *err = (struct lulucat_error *)cinfo->err;
            copy_message(err, "too many progressive scans");
            longjmp(err->jump, 1);
        }
    }
}

static void install_errors(struct jpeg_error_mgr *pub, struct lulucat_error *err,
                           char *message, size_t message_capacity) {
    jpeg_std_error(pub);
    pub->error_exit = lulucat_error_exit;
    pub->emit_message = lulucat_emit_message;
    err->message = message;
    err->message_capacity = message_capacity;
    if (message != NULL && message_capacity > 0) message[0] = 0;
}

int lulucat_jpeg_version(void) { return JPEG_LIB_VERSION; }

int lulucat_jpeg_read_size(const unsigned char *data, size_t size, int *width, int *height,
                           char *message, size_t message_capacity) {
    if (data == NULL || size == 0 || width == NULL || height == NULL) return LULUCAT_JPEG_BAD_ARGUMENT;
    struct jpeg_decompress_struct cinfo;
    struct lulucat_error err;
    cinfo.err = &err.pub;
    install_errors(&err.pub, &err, message, message_capacity);
    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return LULUCAT_JPEG_ERROR;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    *width = (int)cinfo.image_width;
    *height = (int)cinfo.image_height;
    jpeg_destroy_decompress(&cinfo);
    return LULUCAT_JPEG_OK;
}

int lulucat_jpeg_decode_rgba(const unsigned char *data, size_t size,
                             int expected_width, int expected_height, size_t max_pixels,
                             unsigned char *out, size_t out_capacity,
                             char *message, size_t message_capacity) {
    if (data == NULL || size == 0 || out == NULL || expected_width <= 0 || expected_height <= 0)
        return LULUCAT_JPEG_BAD_ARGUMENT;
    struct jpeg_decompress_struct cinfo;
    struct lulucat_error err;
    struct jpeg_progress_mgr progress;
    cinfo.err = &err.pub;
    install_errors(&err.pub, &err, message, message_capacity);
    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return LULUCAT_JPEG_ERROR;
    }
    jpeg_create_decompress(&cinfo);
    progress.progress_monitor = lulucat_progress;
    cinfo.progress = &progress;
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    size_t w = cinfo.image_width, h = cinfo.image_height;
    if ((int)w != expected_width || (int)h != expected_height) {
        copy_message(&err, "image size differs from its header");
        jpeg_destroy_decompress(&cinfo);
        return LULUCAT_JPEG_ERROR;
    }
    if (w == 0 || h == 0 || w * h > max_pixels) {
        copy_message(&err, "image is larger than the pixel limit");
        jpeg_destroy_decompress(&cinfo);
        return LULUCAT_JPEG_TOO_LARGE;
    }
    if (out_capacity / 4 / w < h) {
        copy_message(&err, "output buffer too small");
        jpeg_destroy_decompress(&cinfo);
        return LULUCAT_JPEG_BAD_ARGUMENT;
    }
    cinfo.out_color_space = JCS_EXT_RGBA;
    jpeg_start_decompress(&cinfo);
    if (cinfo.output_width != w || cinfo.output_height != h || cinfo.output_components != 4) {
        copy_message(&err, "unexpected output geometry");
        jpeg_destroy_decompress(&cinfo);
        return LULUCAT_JPEG_ERROR;
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = out + (size_t)cinfo.output_scanline * w * 4;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return LULUCAT_JPEG_OK;
}

// Where jpeg_mem_dest keeps its (growing) buffer. It lives on the heap: a local changed between
// setjmp and longjmp would be indeterminate after the jump, and we must free the buffer then.
struct lulucat_mem_out {
    unsigned char *buffer;
    unsigned long size;
};

int lulucat_jpeg_encode(const unsigned char *pixels, int width, int height, int channels, int quality,
                        unsigned char **out, unsigned long *out_size,
                        char *message, size_t message_capacity) {
    if (pixels == NULL || out == NULL || out_size == NULL || width <= 0 || height <= 0 ||
        (channels != 3 && channels != 4) || quality < 1 || quality > 100)
        return LULUCAT_JPEG_BAD_ARGUMENT;
    struct lulucat_mem_out *mem = calloc(1, sizeof *mem);
    if (mem == NULL) return LULUCAT_JPEG_ERROR;
    struct jpeg_compress_struct cinfo;
    struct lulucat_error err;
    cinfo.err = &err.pub;
    install_errors(&err.pub, &err, message, message_capacity);
    if (setjmp(err.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(mem->buffer);
        free(mem);
        return LULUCAT_JPEG_ERROR;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &mem->buffer, &mem->size);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = channels;
    cinfo.in_color_space = channels == 4 ? JCS_EXT_RGBX : JCS_EXT_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    size_t stride = (size_t)width * (size_t)channels;
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * stride);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    *out = mem->buffer;
    *out_size = mem->size;
    free(mem);
    return LULUCAT_JPEG_OK;
}

void lulucat_jpeg_free(unsigned char *buffer) { free(buffer); }

#endif
