#include "cjpeg.h"
#include <stdio.h>
#include <jpeglib.h>
int lulucat_jpeg_version(void) { return JPEG_LIB_VERSION; }
