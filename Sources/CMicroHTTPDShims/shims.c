#include "CMicroHTTPDShims.h"
#include <gnutls/gnutls.h>

struct MHD_Daemon *CMicroHTTPDShims_start(unsigned int flags,
                                          const struct sockaddr *address,
                                          MHD_AccessHandlerCallback handler, void *handler_cls,
                                          MHD_RequestCompletedCallback completed, void *completed_cls,
                                          size_t connection_memory_limit,
                                          unsigned int connection_timeout_seconds,
                                          unsigned int connection_limit,
                                          const char *key_pem, const char *certificate_pem,
                                          const char *trust_pem) {
    /* MHD_OPTION_ARRAY: a pointer argument goes in ptr_value, a number in value; the completed
     * callback (two pointers) has the function in value and its argument in ptr_value. */
    struct MHD_OptionItem options[9];
    size_t count = 0;
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, (void *)address};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, completed_cls};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)connection_memory_limit, NULL};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)connection_timeout_seconds, NULL};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, (intptr_t)connection_limit, NULL};
    if (key_pem != NULL) {
        flags |= MHD_USE_TLS;
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key_pem};
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)certificate_pem};
        if (trust_pem != NULL) {
            options[count++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0, (void *)trust_pem};
        }
    }
    options[count] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

uint16_t CMicroHTTPDShims_bind_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
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
