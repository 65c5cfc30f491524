#ifndef C_JPEG_SHIM_H
#define C_JPEG_SHIM_H
/*
 * libjpeg (Debian libjpeg62-turbo-dev) through pkg-config libjpeg: its include path and library for
 * CPDFAppearanceShims (its errors are reported through longjmp, which Swift cannot take part in).
 */
#include <stdio.h>
#include <jpeglib.h>
#endif
