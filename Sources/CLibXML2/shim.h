#ifndef C_LIBXML2_SHIM_H
#define C_LIBXML2_SHIM_H
/*
 * libxml2 (Debian libxml2-dev) through pkg-config: its include path and library for CLibXML2Shims.
 * Swift never imports libxml2's headers: with Debian's ICU-enabled build they pull in the system
 * ICU headers, which clash with the ICU Foundation brings. CLibXML2Shims gives Swift an opaque API.
 */
#endif
