#ifndef C_PNG_SHIM_H
#define C_PNG_SHIM_H
/*
 * libpng and zlib (Debian libpng-dev, which brings zlib1g-dev) through pkg-config libpng: their include
 * path and libraries for CPDFAppearanceShims, which gives Swift a plain API.
 */
#include <png.h>
#include <zlib.h>
#endif
