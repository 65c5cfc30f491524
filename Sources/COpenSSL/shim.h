#ifndef C_OPENSSL_SHIM_H
#define C_OPENSSL_SHIM_H
/* OpenSSL 3 headers used by swift-certificate-providers. Deprecated APIs stay hidden. */
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED 1
#include <openssl/opensslv.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/cms.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/ocsp.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/rand.h>
#include <openssl/ts.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#if OPENSSL_VERSION_MAJOR < 3
#error "swift-certificate-providers needs OpenSSL 3 (libssl-dev from Debian 12 or later)"
#endif
#endif
