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
 * Starts a daemon with a fixed option list: bound to `address` (an IPv4 or IPv6 sockaddr, port
 * inside it, 0 = ephemeral), the access handler and a request-completed callback, a per-connection
 * memory limit, an idle connection timeout and a connection limit. With `key_pem` not NULL it
 * serves TLS (MHD_USE_TLS is added to `flags`) with that PEM key and the PEM `certificate_pem`
 * chain and, when `trust_pem` is not NULL, asks every client for a certificate chaining to the PEM
 * CA certificates in it (CMicroHTTPDShims_check_client_certificate decides). Returns NULL when the
 * daemon cannot start (port in use, bad address, unusable PEM).
 */
struct MHD_Daemon *CMicroHTTPDShims_start(unsigned int flags,
                                          const struct sockaddr *address,
                                          MHD_AccessHandlerCallback handler, void *handler_cls,
                                          MHD_RequestCompletedCallback completed, void *completed_cls,
                                          size_t connection_memory_limit,
                                          unsigned int connection_timeout_seconds,
                                          unsigned int connection_limit,
                                          const char *key_pem, const char *certificate_pem,
                                          const char *trust_pem);

/* Whether this libmicrohttpd was built with TLS (MHD_is_feature_supported(MHD_FEATURE_TLS)). */
int CMicroHTTPDShims_tls_supported(void);

/*
 * Checks the TLS client certificate of a connection against the daemon's trust (GnuTLS
 * gnutls_certificate_verify_peers2). Returns 1 when it is present and valid. Otherwise sends the
 * client a fatal TLS alert (certificate_required when none was sent, unknown_ca / bad_certificate
 * when it does not verify) and returns 0: the caller then drops the connection.
 */
int CMicroHTTPDShims_check_client_certificate(struct MHD_Connection *connection);

/* The port the daemon listens on (MHD_get_daemon_info(MHD_DAEMON_INFO_BIND_PORT)); 0 if unknown. */
uint16_t CMicroHTTPDShims_bind_port(struct MHD_Daemon *daemon);

#endif
