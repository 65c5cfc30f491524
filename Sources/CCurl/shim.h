#ifndef C_CURL_SHIM_H
#define C_CURL_SHIM_H
/* libcurl, the OpenSSL build (Debian libcurl4-openssl-dev), for HTTPClient's CurlTransport. */
#include <curl/curl.h>
#endif
