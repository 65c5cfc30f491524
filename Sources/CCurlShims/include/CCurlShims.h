#ifndef C_CURL_SHIMS_H
#define C_CURL_SHIMS_H
/*
 * Non-variadic wrappers for libcurl's variadic calls (curl_easy_setopt, curl_easy_getinfo,
 * curl_multi_setopt), one per argument type, and the OpenSSL SSL_CTX hook that puts a client
 * identity and extra trust anchors into each connection's TLS context. Every name is prefixed with
 * the module name. X509 and EVP_PKEY are OpenSSL's; the caller keeps them alive for the transfer.
 */
#include <stddef.h>
#include <stdint.h>
#include <curl/curl.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

CURLcode CCurlShims_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode CCurlShims_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode CCurlShims_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode CCurlShims_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode CCurlShims_easy_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback callback);

CURLcode CCurlShims_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode CCurlShims_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode CCurlShims_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value);

CURLMcode CCurlShims_multi_setopt_long(CURLM *handle, CURLMoption option, long value);

/* The multi handle's socket callback (CURLMOPT_SOCKETFUNCTION and CURLMOPT_SOCKETDATA), for
 * driving it with curl_multi_socket_action. */
CURLMcode CCurlShims_multi_setopt_socket_function(CURLM *handle, curl_socket_callback callback, void *user);

/* An epoll instance that also watches an eventfd for wake-ups; returns the epoll descriptor and
 * stores the eventfd in *wake_fd, or returns -1 (errno set). */
int CCurlShims_poller_make(int *wake_fd);
/* Makes the epoll instance watch `socket` as curl's `what` asks (CURL_POLL_IN, _OUT, _INOUT) or
 * stop watching it (CURL_POLL_REMOVE); `watched` says whether it is believed to be in the set
 * already (a wrong belief costs one more epoll_ctl). Returns 0, or -1 (errno set). */
int CCurlShims_poller_watch(int epoll_fd, curl_socket_t socket, int what, int watched);
/* Waits up to `timeout_ms` (-1: no limit) for events; stores up to `capacity` ready sockets and
 * their curl event masks (CURL_CSELECT_IN, _OUT, _ERR) and returns how many, 0 on a time-out
 * or an interruption. The eventfd is drained and not reported; *woken says whether it fired. */
int CCurlShims_poller_wait(int epoll_fd, int wake_fd, curl_socket_t *sockets, int *masks, int capacity, int timeout_ms, int *woken);
/* Makes the next (or the current) CCurlShims_poller_wait return. */
void CCurlShims_poller_wake(int wake_fd);

/* Opens a socket for curl's CURLOPT_OPENSOCKETFUNCTION as curl would, close-on-exec; returns it or
 * CURL_SOCKET_BAD (errno set). */
curl_socket_t CCurlShims_open_socket(const struct curl_sockaddr *address);
/* Sets CURLOPT_OPENSOCKETFUNCTION and CURLOPT_CLOSESOCKETFUNCTION (and their data, `user`). */
CURLcode CCurlShims_install_socket_hooks(CURL *handle, curl_opensocket_callback open_function,
                                         curl_closesocket_callback close_function, void *user);

/* Names the calling thread for the system (ps, perf, /proc; at most 15 bytes). */
void CCurlShims_name_this_thread(const char *name);

/* The result of a CURLMSG_DONE message (the `data` union of CURLMsg). */
CURLcode CCurlShims_msg_result(const CURLMsg *message);

/* The parts of a client TLS configuration that live for the whole transport. */
typedef struct {
    X509 *certificate;            /* the client certificate, or NULL for none */
    EVP_PKEY *private_key;        /* its private key, or NULL */
    X509 *const *chain;           /* intermediate certificates sent after it */
    int chain_count;
    X509 *const *extra_anchors;   /* CA certificates added to the trust store of each connection */
    int extra_anchor_count;
} CCurlShims_tls_config;

/* What the TLS layer saw during the handshake of the connection a transfer opened, filled in by
 * the verify and message callbacks. Reference-counted (made by CCurlShims_tls_transfer_create): a
 * connection's SSL_CTX keeps the report alive for its callbacks until OpenSSL frees it. */
typedef struct {
    const CCurlShims_tls_config *config;  /* may be NULL; read only while the transfer is in flight */
    long verify_error;                    /* the first X509 verify error, 0 if none */
    char subject[512];                    /* the server certificate's subject (RFC 2253), "" if not seen */
    char issuer[512];                     /* its issuer */
    int install_failed;                   /* the client identity could not be put into the SSL_CTX */
    int hello_sent;                       /* the TLS handshake started (ClientHello written) */
    int certificate_requested;            /* the server sent a CertificateRequest */
    int alert_received;                   /* the description of a fatal alert the server sent, or -1 */
} CCurlShims_tls_transfer;

/* A new report for one transfer (alert_received -1, the rest zero), holding one reference for the
 * caller; NULL when out of memory. `config` must live while the transfer is in flight. */
CCurlShims_tls_transfer *CCurlShims_tls_transfer_create(const CCurlShims_tls_config *config);

/* Drops one reference (NULL: nothing); the last one frees the report. Any thread. */
void CCurlShims_tls_transfer_release(CCurlShims_tls_transfer *transfer);

/*
 * Sets CURLOPT_SSL_CTX_FUNCTION and CURLOPT_SSL_CTX_DATA so that every new connection of this
 * handle gets the config's client identity and extra anchors, and records into `transfer` the
 * server certificate's subject and issuer and the verification error. The connection's SSL_CTX
 * takes a reference to `transfer` and drops it when it is freed, whenever the connection closes.
 */
CURLcode CCurlShims_install_tls_hook(CURL *handle, CCurlShims_tls_transfer *transfer);

/* X509_verify_cert_error_string (static text). */
const char *CCurlShims_verify_error_string(long error);

#endif
