#ifndef C_FREETYPE_SHIM_H
#define C_FREETYPE_SHIM_H
/* FreeType (Debian libfreetype-dev) through pkg-config freetype2: font files and their metrics. */
#include <ft2build.h>
#include FT_FREETYPE_H
#include FT_TRUETYPE_TABLES_H
#endif
