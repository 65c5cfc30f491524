#include "CMicroHTTPDShims.h"

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
