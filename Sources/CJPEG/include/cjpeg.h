// A small shim over libjpeg-turbo whose errors return a code instead of ending the process.
#ifndef LULUCAT_CJPEG_H
#define LULUCAT_CJPEG_H
#include <stddef.h>
int lulucat_jpeg_version(void);
#endif
