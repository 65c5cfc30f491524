#include "CMicroHTTPDShims.h"
#include <gnutls/gnutls.h>

struct MHD_Daemon *CMicroHTTPDShims_start(unsigned int flags,
                                          const struct sockaddr *address,
                                          MHD_AccessHandlerCallback handler, void *handler_cls,
                                          MHD_RequestCompletedCallback completed, void *completed_cls,
                                          size_t connection_memory_limit,
                                          unsigned int connection_timeout_seconds,
                                          unsigned int connection_limit) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_END);
}

uint16_t CMicroHTTPDShims_bind_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

struct MHD_Daemon *CMicroHTTPDShims_start_tls(unsigned int flags,
                                              const struct sockaddr *address,
                                              MHD_AccessHandlerCallback handler, void *handler_cls,
                                              MHD_RequestCompletedCallback completed, void *completed_cls,
                                              size_t connection_memory_limit,
                                              unsigned int connection_timeout_seconds,
                                              unsigned int connection_limit,
                                              const char *key_pem, const char *certificate_pem,
                                              const char *trust_pem) {
    flags |= MHD_USE_TLS;
    if (trust_pem == NULL) {
        return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
                                MHD_OPTION_SOCK_ADDR, address,
                                MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                                MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                                MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                                MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                MHD_OPTION_HTTPS_MEM_KEY, key_pem,
                                MHD_OPTION_HTTPS_MEM_CERT, certificate_pem,
                                MHD_OPTION_END);
    }
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_HTTPS_MEM_KEY, key_pem,
                            MHD_OPTION_HTTPS_MEM_CERT, certificate_pem,
                            MHD_OPTION_HTTPS_MEM_TRUST, trust_pem,
                            MHD_OPTION_END);
}

int CMicroHTTPDShims_tls_supported(void) {
    return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES;
}

int CMicroHTTPDShims_check_client_certificate(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (info == NULL || info->tls_session == NULL) return 0;
    gnutls_session_t session = (gnutls_session_t)info->tls_session;
    unsigned int list_size = 0;
    if (gnutls_certificate_get_peers(session, &list_size) == NULL || list_size == 0) {
        gnutls_alert_send(session, GNUTLS_AL_FATAL, GNUTLS_A_CERTIFICATE_REQUIRED);
        return 0;
    }
    unsigned int status = 0;
    if (gnutls_certificate_verify_peers2(session, &status) != GNUTLS_E_SUCCESS || status != 0) {
        gnutls_alert_send(session, GNUTLS_AL_FATAL,
                          (status & GNUTLS_CERT_SIGNER_NOT_FOUND) ? GNUTLS_A_UNKNOWN_CA : GNUTLS_A_BAD_CERTIFICATE);
        return 0;
    }
    return 1;
}
