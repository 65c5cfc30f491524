#ifndef C_MICROHTTPD_SHIM_H
#define C_MICROHTTPD_SHIM_H
/* libmicrohttpd (Debian libmicrohttpd-dev) for the DSSEmulator. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>
#endif
