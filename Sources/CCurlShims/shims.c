#define _GNU_SOURCE
#include "CCurlShims.h"
#include <string.h>
#include <pthread.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <openssl/bio.h>
#include <openssl/err.h>

CURLcode CCurlShims_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CCurlShims_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CCurlShims_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CCurlShims_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CCurlShims_easy_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

CURLcode CCurlShims_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode CCurlShims_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode CCurlShims_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLMcode CCurlShims_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

CURLMcode CCurlShims_multi_setopt_socket_function(CURLM *handle, curl_socket_callback callback, void *user) {
    CURLMcode result = curl_multi_setopt(handle, CURLMOPT_SOCKETFUNCTION, callback);
    if (result != CURLM_OK) return result;
    return curl_multi_setopt(handle, CURLMOPT_SOCKETDATA, user);
}

int CCurlShims_poller_make(int *wake_fd) {
    int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd < 0) return -1;
    int event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (event_fd < 0) {
        int saved = errno;
        close(epoll_fd);
        errno = saved;
        return -1;
    }
    struct epoll_event event = { .events = EPOLLIN, .data.fd = event_fd };
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, event_fd, &event) != 0) {
        int saved = errno;
        close(event_fd);
        close(epoll_fd);
        errno = saved;
        return -1;
    }
    *wake_fd = event_fd;
    return epoll_fd;
}

int CCurlShims_poller_watch(int epoll_fd, curl_socket_t socket, int what, int watched) {
    if (what == CURL_POLL_REMOVE) {
        /* A socket curl already closed has left the epoll set by itself. */
        if (epoll_ctl(epoll_fd, EPOLL_CTL_DEL, socket, NULL) != 0 && errno != ENOENT && errno != EBADF) return -1;
        return 0;
    }
    struct epoll_event event = { .events = 0, .data.fd = socket };
    if (what == CURL_POLL_IN || what == CURL_POLL_INOUT) event.events |= EPOLLIN;
    if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT) event.events |= EPOLLOUT;
    /* A socket curl closed and the kernel reused is in the set or not, whatever `watched` says. */
    if (watched) {
        if (epoll_ctl(epoll_fd, EPOLL_CTL_MOD, socket, &event) == 0) return 0;
        if (errno != ENOENT) return -1;
        return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, socket, &event);
    }
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, socket, &event) == 0) return 0;
    if (errno != EEXIST) return -1;
    return epoll_ctl(epoll_fd, EPOLL_CTL_MOD, socket, &event);
}

int CCurlShims_poller_wait(int epoll_fd, int wake_fd, curl_socket_t *sockets, int *masks, int capacity, int timeout_ms, int *woken) {
    struct epoll_event events[64];
    int limit = capacity < 64 ? capacity : 64;
    *woken = 0;
    int count = epoll_wait(epoll_fd, events, limit, timeout_ms);
    if (count <= 0) return 0;
    int stored = 0;
    for (int index = 0; index < count; index++) {
        if (events[index].data.fd == wake_fd) {
            uint64_t value;
            while (read(wake_fd, &value, sizeof value) == sizeof value) {}
            *woken = 1;
            continue;
        }
        int mask = 0;
        if (events[index].events & EPOLLIN) mask |= CURL_CSELECT_IN;
        if (events[index].events & EPOLLOUT) mask |= CURL_CSELECT_OUT;
        if (events[index].events & (EPOLLERR | EPOLLHUP)) mask |= CURL_CSELECT_ERR;
        sockets[stored] = events[index].data.fd;
        masks[stored] = mask;
        stored++;
    }
    return stored;
}

void CCurlShims_poller_wake(int wake_fd) {
    uint64_t one = 1;
    ssize_t written = write(wake_fd, &one, sizeof one);
    (void)written; /* EAGAIN: the counter is full, so a wake-up is pending anyway */
}

curl_socket_t CCurlShims_open_socket(const struct curl_sockaddr *address) {
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

CURLcode CCurlShims_install_socket_hooks(CURL *handle, curl_opensocket_callback open_function,
                                         curl_closesocket_callback close_function, void *user) {
    CURLcode result = curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, open_function);
    if (result == CURLE_OK) result = curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, user);
    if (result == CURLE_OK) result = curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, close_function);
    if (result == CURLE_OK) result = curl_easy_setopt(handle, CURLOPT_CLOSESOCKETDATA, user);
    return result;
}

void CCurlShims_name_this_thread(const char *name) {
    (void)pthread_setname_np(pthread_self(), name); /* at most 15 bytes; a longer name is left unset */
}

CURLcode CCurlShims_msg_result(const CURLMsg *message) {
    return message->data.result;
}

/*
 * A transfer's TLS report is reference-counted: the transfer holds one reference, and the SSL_CTX
 * of a connection the transfer opened holds another, in an ex_data slot whose free function drops
 * it when OpenSSL frees the SSL_CTX. With libcurl 7.88's OpenSSL backend (Debian 12) every
 * connection has its own SSL_CTX: ossl_connect_step1 makes it (SSL_CTX_new, then the
 * CURLOPT_SSL_CTX_FUNCTION callback below) and ossl_close frees it when the connection closes,
 * which for a kept-alive connection is long after the transfer that opened it ended: when a later
 * transfer's request finds it dead, when it is evicted from the connection cache, or in
 * curl_multi_cleanup. ossl_close calls SSL_read and SSL_shutdown first, and a connection reused by
 * later transfers reads whatever the server sends (alerts, a TLS 1.3 post-handshake
 * CertificateRequest: curl offers post-handshake authentication), so the message and verify
 * callbacks may run on such a connection at any time until its SSL_CTX is freed; the reference
 * keeps the report alive until then. (The connection cannot be unhooked when the transfer ends:
 * by the time curl reports a transfer done, it has detached the connection from the easy handle,
 * so CURLINFO_TLS_SSL_PTR no longer finds it.)
 */
typedef struct {
    CCurlShims_tls_transfer report;  /* first: a report pointer is a box pointer */
    atomic_long references;
} tls_report_box;

CCurlShims_tls_transfer *CCurlShims_tls_transfer_create(const CCurlShims_tls_config *config) {
    tls_report_box *box = calloc(1, sizeof *box);
    if (box == NULL) return NULL;
    box->report.config = config;
    box->report.alert_received = -1;
    atomic_init(&box->references, 1);
    return &box->report;
}

static void retain_report(CCurlShims_tls_transfer *transfer) {
    atomic_fetch_add_explicit(&((tls_report_box *)transfer)->references, 1, memory_order_relaxed);
}

void CCurlShims_tls_transfer_release(CCurlShims_tls_transfer *transfer) {
    if (transfer == NULL) return;
    tls_report_box *box = (tls_report_box *)transfer;
    if (atomic_fetch_sub_explicit(&box->references, 1, memory_order_acq_rel) == 1) free(box);
}

/* OpenSSL's ex_data free function: the SSL_CTX holding a report is being freed. */
static void release_from_context(void *parent, void *pointer, CRYPTO_EX_DATA *data, int index, long argl, void *argp) {
    (void)parent; (void)data; (void)index; (void)argl; (void)argp;
    CCurlShims_tls_transfer_release(pointer);
}

/* The SSL_CTX ex_data slot holding a reference to the report of the transfer that opened the
 * connection. */
static int transfer_index = -1;
static pthread_once_t transfer_index_once = PTHREAD_ONCE_INIT;

static void make_transfer_index(void) {
    transfer_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, release_from_context);
}

static void name_text(const X509_NAME *name, char *out, size_t size) {
    out[0] = 0;
    if (name == NULL) return;
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio == NULL) return;
    if (X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB) >= 0) {
        int length = BIO_read(bio, out, (int)size - 1);
        out[length > 0 ? length : 0] = 0;
    }
    BIO_free(bio);
}

static int verify_callback(int preverify_ok, X509_STORE_CTX *store) {
    SSL *ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
    if (ssl == NULL) return preverify_ok;
    CCurlShims_tls_transfer *transfer = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), transfer_index);
    if (transfer == NULL) return preverify_ok;
    X509 *leaf = X509_STORE_CTX_get0_cert(store);
    if (leaf != NULL && transfer->subject[0] == 0) {
        name_text(X509_get_subject_name(leaf), transfer->subject, sizeof transfer->subject);
        name_text(X509_get_issuer_name(leaf), transfer->issuer, sizeof transfer->issuer);
    }
    if (!preverify_ok && transfer->verify_error == 0) transfer->verify_error = X509_STORE_CTX_get_error(store);
    return preverify_ok;
}

/* Notes what the server's handshake asked for and which alert it sent (TLS 1.3 messages are seen
 * decrypted). */
static void message_callback(int write_p, int version, int content_type, const void *buffer, size_t length, SSL *ssl, void *arg) {
    (void)version; (void)arg;
    if (ssl == NULL || buffer == NULL || length == 0) return;
    CCurlShims_tls_transfer *transfer = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), transfer_index);
    if (transfer == NULL) return;
    const unsigned char *bytes = buffer;
    if (write_p) {
        if (content_type == SSL3_RT_HANDSHAKE && bytes[0] == SSL3_MT_CLIENT_HELLO) transfer->hello_sent = 1;
        return;
    }
    if (content_type == SSL3_RT_HANDSHAKE && bytes[0] == SSL3_MT_CERTIFICATE_REQUEST) transfer->certificate_requested = 1;
    if (content_type == SSL3_RT_ALERT && length >= 2 && bytes[0] == SSL3_AL_FATAL && transfer->alert_received < 0) {
        transfer->alert_received = bytes[1];
    }
}

static CURLcode ssl_ctx_callback(CURL *handle, void *ssl_ctx, void *user) {
    (void)handle;
    SSL_CTX *context = ssl_ctx;
    CCurlShims_tls_transfer *transfer = user;
    if (transfer == NULL) return CURLE_OK;
    pthread_once(&transfer_index_once, make_transfer_index);
    const CCurlShims_tls_config *config = transfer->config;
    if (config != NULL) {
        X509_STORE *store = SSL_CTX_get_cert_store(context);
        for (int index = 0; index < config->extra_anchor_count; index++) {
            /* An anchor already in the store (a reused, cached store) is not an error. */
            X509_STORE_add_cert(store, config->extra_anchors[index]);
        }
        if (config->certificate != NULL && config->private_key != NULL) {
            if (SSL_CTX_use_certificate(context, config->certificate) != 1
                || SSL_CTX_use_PrivateKey(context, config->private_key) != 1
                || SSL_CTX_check_private_key(context) != 1) {
                transfer->install_failed = 1;
                ERR_clear_error();
                return CURLE_SSL_CERTPROBLEM;
            }
            for (int index = 0; index < config->chain_count; index++) {
                SSL_CTX_add1_chain_cert(context, config->chain[index]);
            }
        }
        ERR_clear_error();
    }
    /* No TLS 1.2 renegotiation: the report describes the handshake of the transfer that opened the
     * connection. */
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION);
    /* The SSL_CTX's own reference (see tls_report_box). Without the slot the callbacks find no report
     * and only the diagnostics are lost. */
    if (transfer_index >= 0) {
        CCurlShims_tls_transfer *previous = SSL_CTX_get_ex_data(context, transfer_index);
        if (previous != transfer) {
            retain_report(transfer);
            if (SSL_CTX_set_ex_data(context, transfer_index, transfer) == 1) {
                CCurlShims_tls_transfer_release(previous);
            } else {
                CCurlShims_tls_transfer_release(transfer);
            }
        }
    }
    SSL_CTX_set_verify(context, SSL_CTX_get_verify_mode(context), verify_callback);
    SSL_CTX_set_msg_callback(context, message_callback);
    return CURLE_OK;
}

CURLcode CCurlShims_install_tls_hook(CURL *handle, CCurlShims_tls_transfer *transfer) {
    CURLcode result = curl_easy_setopt(handle, CURLOPT_SSL_CTX_FUNCTION, ssl_ctx_callback);
    if (result != CURLE_OK) return result;
    return curl_easy_setopt(handle, CURLOPT_SSL_CTX_DATA, transfer);
}

const char *CCurlShims_verify_error_string(long error) {
    return X509_verify_cert_error_string(error);
}
