/*
 * A view of CMS SignedData through OpenSSL's ASN.1 templates, for what libcrypto's CMS API cannot do:
 * read and add RevocationInfoChoice `other` entries (RFC 5940 id-ri-ocsp-response) and give the DER
 * of each element of SignedData.certificates and SignedData.crls (the ats-hash-index-v3 of
 * ETSI EN 319 122-1). Every field the view does not need stays an ANY, so encoding it again writes
 * the same bytes (SET OF elements in DER order, as OpenSSL's CMS writer sorts them too).
 */
#include "COpenSSLShims.h"
#include <openssl/asn1t.h>
#include <openssl/x509.h>
#include <string.h>

typedef struct {
    ASN1_OBJECT *format;
    ASN1_TYPE *info;
} COPENSSLSHIMS_OTHER_REVOCATION;

ASN1_SEQUENCE(COPENSSLSHIMS_OTHER_REVOCATION) = {
    ASN1_SIMPLE(COPENSSLSHIMS_OTHER_REVOCATION, format, ASN1_OBJECT),
    ASN1_SIMPLE(COPENSSLSHIMS_OTHER_REVOCATION, info, ASN1_ANY),
} ASN1_SEQUENCE_END(COPENSSLSHIMS_OTHER_REVOCATION)

typedef struct {
    int type;
    union {
        X509_CRL *crl;
        COPENSSLSHIMS_OTHER_REVOCATION *other;
    } d;
} COPENSSLSHIMS_REVOCATION_CHOICE;

ASN1_CHOICE(COPENSSLSHIMS_REVOCATION_CHOICE) = {
    ASN1_SIMPLE(COPENSSLSHIMS_REVOCATION_CHOICE, d.crl, X509_CRL),
    ASN1_IMP(COPENSSLSHIMS_REVOCATION_CHOICE, d.other, COPENSSLSHIMS_OTHER_REVOCATION, 1),
} ASN1_CHOICE_END(COPENSSLSHIMS_REVOCATION_CHOICE)

DEFINE_STACK_OF(COPENSSLSHIMS_REVOCATION_CHOICE)

typedef struct {
    ASN1_INTEGER *version;
    STACK_OF(ASN1_TYPE) *digestAlgorithms;
    ASN1_TYPE *encapContentInfo;
    STACK_OF(ASN1_TYPE) *certificates;
    STACK_OF(COPENSSLSHIMS_REVOCATION_CHOICE) *crls;
    STACK_OF(ASN1_TYPE) *signerInfos;
} COPENSSLSHIMS_SIGNED_DATA;

ASN1_SEQUENCE(COPENSSLSHIMS_SIGNED_DATA) = {
    ASN1_SIMPLE(COPENSSLSHIMS_SIGNED_DATA, version, ASN1_INTEGER),
    ASN1_SET_OF(COPENSSLSHIMS_SIGNED_DATA, digestAlgorithms, ASN1_ANY),
    ASN1_SIMPLE(COPENSSLSHIMS_SIGNED_DATA, encapContentInfo, ASN1_ANY),
    ASN1_IMP_SET_OF_OPT(COPENSSLSHIMS_SIGNED_DATA, certificates, ASN1_ANY, 0),
    ASN1_IMP_SET_OF_OPT(COPENSSLSHIMS_SIGNED_DATA, crls, COPENSSLSHIMS_REVOCATION_CHOICE, 1),
    ASN1_SET_OF(COPENSSLSHIMS_SIGNED_DATA, signerInfos, ASN1_ANY),
} ASN1_SEQUENCE_END(COPENSSLSHIMS_SIGNED_DATA)

struct COpenSSLShims_SignedDataView_st {
    ASN1_OBJECT *contentType;
    COPENSSLSHIMS_SIGNED_DATA *signedData;
};

ASN1_SEQUENCE(COpenSSLShims_SignedDataView) = {
    ASN1_SIMPLE(COpenSSLShims_SignedDataView, contentType, ASN1_OBJECT),
    ASN1_EXP(COpenSSLShims_SignedDataView, signedData, COPENSSLSHIMS_SIGNED_DATA, 0),
} ASN1_SEQUENCE_END(COpenSSLShims_SignedDataView)

IMPLEMENT_ASN1_FUNCTIONS(COPENSSLSHIMS_OTHER_REVOCATION)
IMPLEMENT_ASN1_FUNCTIONS(COPENSSLSHIMS_REVOCATION_CHOICE)
IMPLEMENT_ASN1_FUNCTIONS(COpenSSLShims_SignedDataView)

COpenSSLShims_SignedDataView *COpenSSLShims_SignedDataView_d2i(const unsigned char *der, long length) {
    const unsigned char *cursor = der;
    COpenSSLShims_SignedDataView *view = d2i_COpenSSLShims_SignedDataView(NULL, &cursor, length);
    if (view != NULL && (cursor != der + length || OBJ_obj2nid(view->contentType) != NID_pkcs7_signed)) {
        COpenSSLShims_SignedDataView_free(view);
        return NULL;
    }
    return view;
}

int COpenSSLShims_SignedDataView_to_der(const COpenSSLShims_SignedDataView *view, unsigned char **out) {
    return i2d_COpenSSLShims_SignedDataView(view, out);
}

int COpenSSLShims_SignedDataView_certificate_count(const COpenSSLShims_SignedDataView *view) {
    return view->signedData->certificates == NULL ? 0 : sk_ASN1_TYPE_num(view->signedData->certificates);
}

int COpenSSLShims_SignedDataView_certificate_der(const COpenSSLShims_SignedDataView *view, int index, unsigned char **out) {
    if (index < 0 || index >= COpenSSLShims_SignedDataView_certificate_count(view)) return -1;
    return i2d_ASN1_TYPE(sk_ASN1_TYPE_value(view->signedData->certificates, index), out);
}

int COpenSSLShims_SignedDataView_revocation_count(const COpenSSLShims_SignedDataView *view) {
    return view->signedData->crls == NULL ? 0 : sk_COPENSSLSHIMS_REVOCATION_CHOICE_num(view->signedData->crls);
}

int COpenSSLShims_SignedDataView_revocation_der(const COpenSSLShims_SignedDataView *view, int index, unsigned char **out) {
    if (index < 0 || index >= COpenSSLShims_SignedDataView_revocation_count(view)) return -1;
    return i2d_COPENSSLSHIMS_REVOCATION_CHOICE(sk_COPENSSLSHIMS_REVOCATION_CHOICE_value(view->signedData->crls, index), out);
}

int COpenSSLShims_SignedDataView_other_revocation(const COpenSSLShims_SignedDataView *view, int index,
                                                  const ASN1_OBJECT **format, unsigned char **out) {
    if (index < 0 || index >= COpenSSLShims_SignedDataView_revocation_count(view)) return -1;
    const COPENSSLSHIMS_REVOCATION_CHOICE *choice = sk_COPENSSLSHIMS_REVOCATION_CHOICE_value(view->signedData->crls, index);
    if (choice->type != 1) return 0;
    *format = choice->d.other->format;
    return i2d_ASN1_TYPE(choice->d.other->info, out);
}

int COpenSSLShims_SignedDataView_add_other_revocation(COpenSSLShims_SignedDataView *view, const ASN1_OBJECT *format,
                                                      const unsigned char *der, long length) {
    const unsigned char *cursor = der;
    ASN1_TYPE *info = d2i_ASN1_TYPE(NULL, &cursor, length);
    if (info == NULL || cursor != der + length) {
        ASN1_TYPE_free(info);
        return 0;
    }
    COPENSSLSHIMS_REVOCATION_CHOICE *choice = COPENSSLSHIMS_REVOCATION_CHOICE_new();
    COPENSSLSHIMS_OTHER_REVOCATION *other = COPENSSLSHIMS_OTHER_REVOCATION_new();
    ASN1_OBJECT *copied = OBJ_dup(format);
    if (choice == NULL || other == NULL || copied == NULL) goto failed;
    ASN1_OBJECT_free(other->format);
    other->format = copied;
    copied = NULL;
    ASN1_TYPE_free(other->info);
    other->info = info;
    info = NULL;
    choice->type = 1;
    choice->d.other = other;
    other = NULL;
    if (view->signedData->crls == NULL) view->signedData->crls = sk_COPENSSLSHIMS_REVOCATION_CHOICE_new_null();
    if (view->signedData->crls == NULL || !sk_COPENSSLSHIMS_REVOCATION_CHOICE_push(view->signedData->crls, choice)) goto failed;
    return 1;
failed:
    ASN1_OBJECT_free(copied);
    ASN1_TYPE_free(info);
    COPENSSLSHIMS_OTHER_REVOCATION_free(other);
    COPENSSLSHIMS_REVOCATION_CHOICE_free(choice);
    return 0;
}

int COpenSSLShims_SignedDataView_signer_info_count(const COpenSSLShims_SignedDataView *view) {
    return sk_ASN1_TYPE_num(view->signedData->signerInfos);
}

int COpenSSLShims_SignedDataView_signer_info_der(const COpenSSLShims_SignedDataView *view, int index, unsigned char **out) {
    if (index < 0 || index >= COpenSSLShims_SignedDataView_signer_info_count(view)) return -1;
    return i2d_ASN1_TYPE(sk_ASN1_TYPE_value(view->signedData->signerInfos, index), out);
}

/* ATSHashIndexV3 ::= SEQUENCE { hashIndAlgorithm AlgorithmIdentifier DEFAULT {algorithm id-sha256},
 *   certificatesHashIndex SEQUENCE OF OCTET STRING, crlsHashIndex SEQUENCE OF OCTET STRING,
 *   unsignedAttrsHashIndex SEQUENCE OF OCTET STRING } (ETSI EN 319 122-1 5.5.2). hashIndAlgorithm is
 * always written (EU DSS rebuilds the index with it when it checks the imprint). */
typedef struct {
    X509_ALGOR *hashIndAlgorithm;
    STACK_OF(ASN1_OCTET_STRING) *certificates;
    STACK_OF(ASN1_OCTET_STRING) *crls;
    STACK_OF(ASN1_OCTET_STRING) *unsignedAttrs;
} COPENSSLSHIMS_ATS_HASH_INDEX_V3;

ASN1_SEQUENCE(COPENSSLSHIMS_ATS_HASH_INDEX_V3) = {
    ASN1_SIMPLE(COPENSSLSHIMS_ATS_HASH_INDEX_V3, hashIndAlgorithm, X509_ALGOR),
    ASN1_SEQUENCE_OF(COPENSSLSHIMS_ATS_HASH_INDEX_V3, certificates, ASN1_OCTET_STRING),
    ASN1_SEQUENCE_OF(COPENSSLSHIMS_ATS_HASH_INDEX_V3, crls, ASN1_OCTET_STRING),
    ASN1_SEQUENCE_OF(COPENSSLSHIMS_ATS_HASH_INDEX_V3, unsignedAttrs, ASN1_OCTET_STRING),
} ASN1_SEQUENCE_END(COPENSSLSHIMS_ATS_HASH_INDEX_V3)

DEFINE_STACK_OF(ASN1_OCTET_STRING)

IMPLEMENT_ASN1_FUNCTIONS(COPENSSLSHIMS_ATS_HASH_INDEX_V3)

static int COpenSSLShims_push_hashes(STACK_OF(ASN1_OCTET_STRING) *stack, const unsigned char *hashes, int count,
                                     int length) {
    for (int index = 0; index < count; index++) {
        ASN1_OCTET_STRING *hash = ASN1_OCTET_STRING_new();
        if (hash == NULL || !ASN1_OCTET_STRING_set(hash, hashes + (size_t)index * (size_t)length, length)
            || !sk_ASN1_OCTET_STRING_push(stack, hash)) {
            ASN1_OCTET_STRING_free(hash);
            return 0;
        }
    }
    return 1;
}

int COpenSSLShims_ATSHashIndexV3_encode(int digestNID, int hashLength, const unsigned char *certificates,
                                        int certificateCount, const unsigned char *crls, int crlCount,
                                        const unsigned char *unsignedAttrs, int unsignedAttrCount,
                                        unsigned char **out) {
    COPENSSLSHIMS_ATS_HASH_INDEX_V3 *index = COPENSSLSHIMS_ATS_HASH_INDEX_V3_new();
    int length = -1;
    if (index == NULL) return -1;
    if (X509_ALGOR_set0(index->hashIndAlgorithm, OBJ_nid2obj(digestNID), V_ASN1_UNDEF, NULL)
        && COpenSSLShims_push_hashes(index->certificates, certificates, certificateCount, hashLength)
        && COpenSSLShims_push_hashes(index->crls, crls, crlCount, hashLength)
        && COpenSSLShims_push_hashes(index->unsignedAttrs, unsignedAttrs, unsignedAttrCount, hashLength)) {
        length = i2d_COPENSSLSHIMS_ATS_HASH_INDEX_V3(index, out);
    }
    COPENSSLSHIMS_ATS_HASH_INDEX_V3_free(index);
    return length;
}

int COpenSSLShims_ATSHashIndexV3_decode(const unsigned char *der, long length, int which, int *digestNID,
                                        unsigned char **out) {
    const unsigned char *cursor = der;
    COPENSSLSHIMS_ATS_HASH_INDEX_V3 *index = d2i_COPENSSLSHIMS_ATS_HASH_INDEX_V3(NULL, &cursor, length);
    if (index == NULL || cursor != der + length) {
        COPENSSLSHIMS_ATS_HASH_INDEX_V3_free(index);
        return -1;
    }
    STACK_OF(ASN1_OCTET_STRING) *hashes = which == 0 ? index->certificates : which == 1 ? index->crls : index->unsignedAttrs;
    int total = 0;
    for (int i = 0; i < sk_ASN1_OCTET_STRING_num(hashes); i++) total += ASN1_STRING_length(sk_ASN1_OCTET_STRING_value(hashes, i));
    *digestNID = OBJ_obj2nid(index->hashIndAlgorithm->algorithm);
    *out = total > 0 ? OPENSSL_malloc((size_t)total) : NULL;
    if (total > 0 && *out == NULL) {
        COPENSSLSHIMS_ATS_HASH_INDEX_V3_free(index);
        return -1;
    }
    int offset = 0;
    for (int i = 0; i < sk_ASN1_OCTET_STRING_num(hashes); i++) {
        const ASN1_OCTET_STRING *hash = sk_ASN1_OCTET_STRING_value(hashes, i);
        memcpy(*out + offset, ASN1_STRING_get0_data(hash), (size_t)ASN1_STRING_length(hash));
        offset += ASN1_STRING_length(hash);
    }
    COPENSSLSHIMS_ATS_HASH_INDEX_V3_free(index);
    return total;
}
