#ifndef C_OPENSSL_SHIMS_H
#define C_OPENSSL_SHIMS_H
/*
 * One-line wrappers for OpenSSL macros that Swift cannot import (typed stacks, OPENSSL_free,
 * BIO_get_mem_data, variadic key generation, composite flag constants). Prototypes here, bodies in
 * shims.c, every name prefixed with the module name.
 */
#include <stddef.h>
#include <stdint.h>
#include <openssl/bio.h>
#include <openssl/cms.h>
#include <openssl/ess.h>
#include <openssl/evp.h>
#include <openssl/pkcs12.h>
#include <openssl/ts.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* STACK_OF(X509) */
STACK_OF(X509) *COpenSSLShims_sk_X509_new_null(void);
int COpenSSLShims_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate);
int COpenSSLShims_sk_X509_num(const STACK_OF(X509) *stack);
X509 *COpenSSLShims_sk_X509_value(const STACK_OF(X509) *stack, int index);
void COpenSSLShims_sk_X509_free(STACK_OF(X509) *stack);
void COpenSSLShims_sk_X509_pop_free(STACK_OF(X509) *stack);
STACK_OF(X509_CRL) *COpenSSLShims_sk_X509_CRL_new_null(void);
int COpenSSLShims_sk_X509_CRL_push(STACK_OF(X509_CRL) *stack, X509_CRL *crl);
void COpenSSLShims_sk_X509_CRL_free(STACK_OF(X509_CRL) *stack);

/* STACK_OF(ASN1_OBJECT) (extended key usage) */
int COpenSSLShims_sk_ASN1_OBJECT_num(const STACK_OF(ASN1_OBJECT) *stack);
ASN1_OBJECT *COpenSSLShims_sk_ASN1_OBJECT_value(const STACK_OF(ASN1_OBJECT) *stack, int index);
void COpenSSLShims_sk_ASN1_OBJECT_pop_free(STACK_OF(ASN1_OBJECT) *stack);

/* STACK_OF(ASN1_TYPE) (generic SEQUENCE OF, e.g. the ESS signing-certificate list) */
int COpenSSLShims_sk_ASN1_TYPE_num(const STACK_OF(ASN1_TYPE) *stack);
ASN1_TYPE *COpenSSLShims_sk_ASN1_TYPE_value(const STACK_OF(ASN1_TYPE) *stack, int index);
ASN1_TYPE *COpenSSLShims_sk_ASN1_TYPE_pop(STACK_OF(ASN1_TYPE) *stack);
void COpenSSLShims_sk_ASN1_TYPE_pop_free(STACK_OF(ASN1_TYPE) *stack);

/* STACK_OF(CMS_SignerInfo) */
int COpenSSLShims_sk_CMS_SignerInfo_num(const STACK_OF(CMS_SignerInfo) *stack);
CMS_SignerInfo *COpenSSLShims_sk_CMS_SignerInfo_value(const STACK_OF(CMS_SignerInfo) *stack, int index);

/* STACK_OF(PKCS7) and STACK_OF(PKCS12_SAFEBAG) (PKCS#12 inspection) */
int COpenSSLShims_sk_PKCS7_num(const STACK_OF(PKCS7) *stack);
PKCS7 *COpenSSLShims_sk_PKCS7_value(const STACK_OF(PKCS7) *stack, int index);
void COpenSSLShims_sk_PKCS7_pop_free(STACK_OF(PKCS7) *stack);
int COpenSSLShims_sk_PKCS12_SAFEBAG_num(const STACK_OF(PKCS12_SAFEBAG) *stack);
PKCS12_SAFEBAG *COpenSSLShims_sk_PKCS12_SAFEBAG_value(const STACK_OF(PKCS12_SAFEBAG) *stack, int index);
void COpenSSLShims_sk_PKCS12_SAFEBAG_pop_free(STACK_OF(PKCS12_SAFEBAG) *stack);

/* Memory and BIO macros */
void COpenSSLShims_OPENSSL_free(void *pointer);
long COpenSSLShims_BIO_get_mem_data(BIO *bio, char **data);
int COpenSSLShims_BIO_reset(BIO *bio);

/* Error codes (static inline in OpenSSL 3 headers) */
int COpenSSLShims_ERR_GET_LIB(unsigned long error);
int COpenSSLShims_ERR_GET_REASON(unsigned long error);

/* Key generation (EVP_RSA_gen / EVP_EC_gen are variadic macros) */
EVP_PKEY *COpenSSLShims_EVP_RSA_gen(unsigned int bits);
EVP_PKEY *COpenSSLShims_EVP_EC_gen(const char *curve);

/* XN_FLAG_RFC2253 without ASN1_STRFLGS_ESC_MSB, so UTF-8 (Cyrillic) stays readable */
unsigned long COpenSSLShims_XN_FLAG_RFC2253_UTF8(void);

/* STACK_OF(X509_ATTRIBUTE) (Signing: DER of CMS signed attributes for keys OpenSSL cannot hold) */
STACK_OF(X509_ATTRIBUTE) *COpenSSLShims_sk_X509_ATTRIBUTE_new_null(void);
int COpenSSLShims_sk_X509_ATTRIBUTE_push(STACK_OF(X509_ATTRIBUTE) *stack, X509_ATTRIBUTE *attribute);
void COpenSSLShims_sk_X509_ATTRIBUTE_free(STACK_OF(X509_ATTRIBUTE) *stack);

/* Revocation and timestamps (Signing): OCSP URLs from AIA, CRL distribution points, GENERAL_NAMEs */
int COpenSSLShims_sk_OPENSSL_STRING_num(const STACK_OF(OPENSSL_STRING) *stack);
const char *COpenSSLShims_sk_OPENSSL_STRING_value(const STACK_OF(OPENSSL_STRING) *stack, int index);
int COpenSSLShims_sk_DIST_POINT_num(const STACK_OF(DIST_POINT) *stack);
DIST_POINT *COpenSSLShims_sk_DIST_POINT_value(const STACK_OF(DIST_POINT) *stack, int index);
int COpenSSLShims_sk_GENERAL_NAME_num(const STACK_OF(GENERAL_NAME) *stack);
GENERAL_NAME *COpenSSLShims_sk_GENERAL_NAME_value(const STACK_OF(GENERAL_NAME) *stack, int index);
/* The URI of a GENERAL_NAME of type uniformResourceIdentifier, else NULL (borrowed). */
const ASN1_IA5STRING *COpenSSLShims_GENERAL_NAME_get0_uri(const GENERAL_NAME *name);
/* The fullName GENERAL_NAMES of a distribution point, else NULL (borrowed). */
GENERAL_NAMES *COpenSSLShims_DIST_POINT_get0_fullname(const DIST_POINT *point);

/* Certificate requests (CertificateIssuing: PKCS#10 signed by a key held elsewhere) */
/* Adds `count` extensions as the request's one extensionRequest attribute (sk_X509_EXTENSION_* are
 * macros); the extensions stay the caller's. 1 on success, 0 on failure. */
int COpenSSLShims_X509_REQ_add_extensions(X509_REQ *req, X509_EXTENSION *const *extensions, int count);
/* Sets the request's signature value to `length` bytes (a BIT STRING with no unused bits); 1 or 0. */
int COpenSSLShims_X509_REQ_set_signature(X509_REQ *req, const unsigned char *signature, int length);

/* The GOST engine (gost_engine.c, the only user of the deprecated ENGINE API). Loads engine "gost"
 * (ENGINE_by_id, ENGINE_init, ENGINE_set_default with ENGINE_METHOD_ALL): 1 when loaded, 0 when
 * the engine is not installed (or OPENSSL_ENGINES points elsewhere); the error queue says why. */
int COpenSSLShims_GOST_engine_load(void);
/* The NID of a GOST R 34.10 key's parameter set, NID_undef for any other key. */
int COpenSSLShims_GOST_key_paramset_nid(const EVP_PKEY *key);

/* CMS SignedData through OpenSSL's ASN.1 templates (signed_data_view.c): RevocationInfoChoice `other`
 * entries (RFC 5940), which libcrypto's CMS API can neither read nor add, and the DER of each element of
 * SignedData.certificates and .crls (ats-hash-index-v3). The view owns what it parses. */
typedef struct COpenSSLShims_SignedDataView_st COpenSSLShims_SignedDataView;
/* Parses a DER ContentInfo holding SignedData (all bytes used), else NULL. */
COpenSSLShims_SignedDataView *COpenSSLShims_SignedDataView_d2i(const unsigned char *der, long length);
void COpenSSLShims_SignedDataView_free(COpenSSLShims_SignedDataView *view);
/* i2d of the whole ContentInfo (OPENSSL_free *out). */
int COpenSSLShims_SignedDataView_to_der(const COpenSSLShims_SignedDataView *view, unsigned char **out);
int COpenSSLShims_SignedDataView_certificate_count(const COpenSSLShims_SignedDataView *view);
/* The DER of certificates[index] (a CertificateChoices); the length, or -1. */
int COpenSSLShims_SignedDataView_certificate_der(const COpenSSLShims_SignedDataView *view, int index, unsigned char **out);
int COpenSSLShims_SignedDataView_revocation_count(const COpenSSLShims_SignedDataView *view);
/* The DER of crls[index] (a RevocationInfoChoice: a CRL, or [1] OtherRevocationInfoFormat); the length, or -1. */
int COpenSSLShims_SignedDataView_revocation_der(const COpenSSLShims_SignedDataView *view, int index, unsigned char **out);
/* For an `other` entry crls[index]: its format (borrowed) and the DER of its value; 0 for a CRL entry, -1 on error. */
int COpenSSLShims_SignedDataView_other_revocation(const COpenSSLShims_SignedDataView *view, int index,
                                                  const ASN1_OBJECT **format, unsigned char **out);
/* Adds an `other` entry (format, value DER); 1 on success, 0 when the value is not one DER element. */
int COpenSSLShims_SignedDataView_add_other_revocation(COpenSSLShims_SignedDataView *view, const ASN1_OBJECT *format,
                                                      const unsigned char *der, long length);
int COpenSSLShims_SignedDataView_signer_info_count(const COpenSSLShims_SignedDataView *view);
/* The DER of signerInfos[index] (in the order they were read); the length, or -1. */
int COpenSSLShims_SignedDataView_signer_info_der(const COpenSSLShims_SignedDataView *view, int index, unsigned char **out);
/* Encodes an ATSHashIndexV3 (ETSI EN 319 122-1) with hashIndAlgorithm `digestNID` (parameters absent) and
 * the given hashes, each `hashLength` bytes, back to back; the DER length (OPENSSL_free *out), or -1. */
int COpenSSLShims_ATSHashIndexV3_encode(int digestNID, int hashLength, const unsigned char *certificates,
                                        int certificateCount, const unsigned char *crls, int crlCount,
                                        const unsigned char *unsignedAttrs, int unsignedAttrCount,
                                        unsigned char **out);
/* The hashes of list `which` (0 certificatesHashIndex, 1 crlsHashIndex, 2 unsignedAttrsHashIndex) of a DER
 * ATSHashIndexV3 with hashIndAlgorithm written, back to back (OPENSSL_free *out, NULL when none), and the
 * algorithm's NID; the byte count, or -1 when the bytes are not an ATSHashIndexV3 (all consumed). */
int COpenSSLShims_ATSHashIndexV3_decode(const unsigned char *der, long length, int which, int *digestNID,
                                        unsigned char **out);

#endif
