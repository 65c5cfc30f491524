#ifndef C_MICROHTTPD_SHIMS_H
#define C_MICROHTTPD_SHIMS_H
/*
 * Non-variadic wrappers for the variadic libmicrohttpd calls Swift cannot import
 * (MHD_start_daemon with its option list, MHD_get_daemon_info). Every name is prefixed with the
 * module name.
 */
#include <stddef.h>
#include <stdint.h>
#include <microhttpd.h>

/*
 * Starts a daemon with a fixed option list: bound to `address` (an IPv4 or IPv6 sockaddr of
 * `address_length` bytes, port inside it, 0 = ephemeral), the access handler and a
 * request-completed callback, a per-connection memory limit and an idle connection timeout.
 * Returns NULL when the daemon cannot start (port in use, bad address).
 */
struct MHD_Daemon *CMicroHTTPDShims_start(unsigned int flags,
                                          const struct sockaddr *address,
                                          MHD_AccessHandlerCallback handler, void *handler_cls,
                                          MHD_RequestCompletedCallback completed, void *completed_cls,
                                          size_t connection_memory_limit,
                                          unsigned int connection_timeout_seconds,
                                          unsigned int connection_limit);

/* The port the daemon listens on (MHD_get_daemon_info(MHD_DAEMON_INFO_BIND_PORT)); 0 if unknown. */
uint16_t CMicroHTTPDShims_bind_port(struct MHD_Daemon *daemon);

#endif
