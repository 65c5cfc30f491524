#ifndef C_HARFBUZZ_SHIM_H
#define C_HARFBUZZ_SHIM_H
/* HarfBuzz (Debian libharfbuzz-dev) through pkg-config harfbuzz-subset: shaping and subsetting. */
#include <hb.h>
#include <hb-ot.h>
#include <hb-subset.h>
#endif
