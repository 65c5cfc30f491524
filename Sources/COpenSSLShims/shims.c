#include "COpenSSLShims.h"
#include <openssl/crypto.h>
#include <openssl/err.h>

STACK_OF(X509) *COpenSSLShims_sk_X509_new_null(void) { return sk_X509_new_null(); }
int COpenSSLShims_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate) { return sk_X509_push(stack, certificate); }
int COpenSSLShims_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
X509 *COpenSSLShims_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
void COpenSSLShims_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }
void COpenSSLShims_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }
STACK_OF(X509_CRL) *COpenSSLShims_sk_X509_CRL_new_null(void) { return sk_X509_CRL_new_null(); }
int COpenSSLShims_sk_X509_CRL_push(STACK_OF(X509_CRL) *stack, X509_CRL *crl) { return sk_X509_CRL_push(stack, crl); }
void COpenSSLShims_sk_X509_CRL_free(STACK_OF(X509_CRL) *stack) { sk_X509_CRL_free(stack); }

int COpenSSLShims_sk_ASN1_OBJECT_num(const STACK_OF(ASN1_OBJECT) *stack) { return sk_ASN1_OBJECT_num(stack); }
ASN1_OBJECT *COpenSSLShims_sk_ASN1_OBJECT_value(const STACK_OF(ASN1_OBJECT) *stack, int index) { return sk_ASN1_OBJECT_value(stack, index); }
void COpenSSLShims_sk_ASN1_OBJECT_pop_free(STACK_OF(ASN1_OBJECT) *stack) { sk_ASN1_OBJECT_pop_free(stack, ASN1_OBJECT_free); }

int COpenSSLShims_sk_ASN1_TYPE_num(const STACK_OF(ASN1_TYPE) *stack) { return sk_ASN1_TYPE_num(stack); }
ASN1_TYPE *COpenSSLShims_sk_ASN1_TYPE_value(const STACK_OF(ASN1_TYPE) *stack, int index) { return sk_ASN1_TYPE_value(stack, index); }
ASN1_TYPE *COpenSSLShims_sk_ASN1_TYPE_pop(STACK_OF(ASN1_TYPE) *stack) { return sk_ASN1_TYPE_pop(stack); }
void COpenSSLShims_sk_ASN1_TYPE_pop_free(STACK_OF(ASN1_TYPE) *stack) { sk_ASN1_TYPE_pop_free(stack, ASN1_TYPE_free); }

int COpenSSLShims_sk_CMS_SignerInfo_num(const STACK_OF(CMS_SignerInfo) *stack) { return sk_CMS_SignerInfo_num(stack); }
CMS_SignerInfo *COpenSSLShims_sk_CMS_SignerInfo_value(const STACK_OF(CMS_SignerInfo) *stack, int index) { return sk_CMS_SignerInfo_value(stack, index); }

int COpenSSLShims_sk_PKCS7_num(const STACK_OF(PKCS7) *stack) { return sk_PKCS7_num(stack); }
PKCS7 *COpenSSLShims_sk_PKCS7_value(const STACK_OF(PKCS7) *stack, int index) { return sk_PKCS7_value(stack, index); }
void COpenSSLShims_sk_PKCS7_pop_free(STACK_OF(PKCS7) *stack) { sk_PKCS7_pop_free(stack, PKCS7_free); }
int COpenSSLShims_sk_PKCS12_SAFEBAG_num(const STACK_OF(PKCS12_SAFEBAG) *stack) { return sk_PKCS12_SAFEBAG_num(stack); }
PKCS12_SAFEBAG *COpenSSLShims_sk_PKCS12_SAFEBAG_value(const STACK_OF(PKCS12_SAFEBAG) *stack, int index) { return sk_PKCS12_SAFEBAG_value(stack, index); }
void COpenSSLShims_sk_PKCS12_SAFEBAG_pop_free(STACK_OF(PKCS12_SAFEBAG) *stack) { sk_PKCS12_SAFEBAG_pop_free(stack, PKCS12_SAFEBAG_free); }

void COpenSSLShims_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }
long COpenSSLShims_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
int COpenSSLShims_BIO_reset(BIO *bio) { return (int)BIO_reset(bio); }

int COpenSSLShims_ERR_GET_LIB(unsigned long error) { return ERR_GET_LIB(error); }
int COpenSSLShims_ERR_GET_REASON(unsigned long error) { return ERR_GET_REASON(error); }

EVP_PKEY *COpenSSLShims_EVP_RSA_gen(unsigned int bits) { return EVP_RSA_gen(bits); }
EVP_PKEY *COpenSSLShims_EVP_EC_gen(const char *curve) { return EVP_EC_gen(curve); }

unsigned long COpenSSLShims_XN_FLAG_RFC2253_UTF8(void) { return XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB; }

STACK_OF(X509_ATTRIBUTE) *COpenSSLShims_sk_X509_ATTRIBUTE_new_null(void) { return sk_X509_ATTRIBUTE_new_null(); }
int COpenSSLShims_sk_X509_ATTRIBUTE_push(STACK_OF(X509_ATTRIBUTE) *stack, X509_ATTRIBUTE *attribute) { return sk_X509_ATTRIBUTE_push(stack, attribute); }
void COpenSSLShims_sk_X509_ATTRIBUTE_free(STACK_OF(X509_ATTRIBUTE) *stack) { sk_X509_ATTRIBUTE_free(stack); }


int COpenSSLShims_sk_OPENSSL_STRING_num(const STACK_OF(OPENSSL_STRING) *stack) { return sk_OPENSSL_STRING_num(stack); }
const char *COpenSSLShims_sk_OPENSSL_STRING_value(const STACK_OF(OPENSSL_STRING) *stack, int index) { return sk_OPENSSL_STRING_value(stack, index); }
int COpenSSLShims_sk_DIST_POINT_num(const STACK_OF(DIST_POINT) *stack) { return sk_DIST_POINT_num(stack); }
DIST_POINT *COpenSSLShims_sk_DIST_POINT_value(const STACK_OF(DIST_POINT) *stack, int index) { return sk_DIST_POINT_value(stack, index); }
int COpenSSLShims_sk_GENERAL_NAME_num(const STACK_OF(GENERAL_NAME) *stack) { return sk_GENERAL_NAME_num(stack); }
GENERAL_NAME *COpenSSLShims_sk_GENERAL_NAME_value(const STACK_OF(GENERAL_NAME) *stack, int index) { return sk_GENERAL_NAME_value(stack, index); }
const ASN1_IA5STRING *COpenSSLShims_GENERAL_NAME_get0_uri(const GENERAL_NAME *name) { return name != NULL && name->type == GEN_URI ? name->d.uniformResourceIdentifier : NULL; }
GENERAL_NAMES *COpenSSLShims_DIST_POINT_get0_fullname(const DIST_POINT *point) { return point != NULL && point->distpoint != NULL && point->distpoint->type == 0 ? point->distpoint->name.fullname : NULL; }

int COpenSSLShims_X509_REQ_add_extensions(X509_REQ *req, X509_EXTENSION *const *extensions, int count) {
    STACK_OF(X509_EXTENSION) *stack = sk_X509_EXTENSION_new_null();
    if (stack == NULL) return 0;
    for (int index = 0; index < count; index++) {
        if (!sk_X509_EXTENSION_push(stack, extensions[index])) {
            sk_X509_EXTENSION_free(stack);
            return 0;
        }
    }
    int ok = X509_REQ_add_extensions(req, stack);
    sk_X509_EXTENSION_free(stack); /* the stack only: the extensions stay the caller's */
    return ok;
}

int COpenSSLShims_X509_REQ_set_signature(X509_REQ *req, const unsigned char *signature, int length) {
    ASN1_BIT_STRING *value = ASN1_BIT_STRING_new();
    if (value == NULL) return 0;
    if (!ASN1_BIT_STRING_set(value, (unsigned char *)signature, length)) {
        ASN1_BIT_STRING_free(value);
        return 0;
    }
    value->flags &= ~(ASN1_STRING_FLAG_BITS_LEFT | 0x07);
    value->flags |= ASN1_STRING_FLAG_BITS_LEFT;
    X509_REQ_set0_signature(req, value);
    return 1;
}
