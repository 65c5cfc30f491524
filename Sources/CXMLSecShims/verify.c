#include "CXMLSecShims.h"
#include "internal.h"
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/valid.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <xmlsec/crypto.h>
#include <xmlsec/errors.h>
#include <xmlsec/xmldsig.h>
#include <xmlsec/xmlsec.h>
#include <xmlsec/xmltree.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int initialised = -1;

/* libxmlsec1 reports a chain of errors, innermost first; the first one on this thread since the
 * last reset is the one that says what went wrong. */
static _Thread_local char first_error[512];
static _Thread_local int first_reason;

static void record_error(
    const char *file, int line, const char *function, const char *object, const char *subject, int reason,
    const char *text) {
    (void)file;
    (void)line;
    (void)function;
    (void)object;
    if (first_error[0] != 0) return;
    first_reason = reason;
    snprintf(
        first_error, sizeof first_error, "%s%s%s", subject != NULL ? subject : "", subject != NULL ? ": " : "",
        text != NULL ? text : "error");
}

static void initialise_once(void) {
    xmlInitParser();
    if (xmlSecInit() < 0 || xmlSecCheckVersion() != 1) return;
    if (xmlSecCryptoAppInit(NULL) < 0 || xmlSecCryptoInit() < 0) return;
    /* The initialisations above install libxmlsec1's default callback, which prints: replaced last. */
    xmlSecErrorsSetCallback(record_error);
    initialised = 0;
}

int CXMLSecShims_initialise(void) {
    pthread_once(&once, initialise_once);
    return initialised;
}

static void say(char *message, size_t message_size, const char *text) {
    if (message != NULL && message_size > 0) snprintf(message, message_size, "%s", text);
}

/* The one ds:Signature child of the root element; -1 when there are several. */
static int find_signature(xmlNodePtr root, xmlNodePtr *found) {
    *found = NULL;
    for (xmlNodePtr child = xmlFirstElementChild(root); child != NULL; child = xmlNextElementSibling(child)) {
        if (xmlSecCheckNodeName(child, xmlSecNodeSignature, xmlSecDSigNs)) {
            if (*found != NULL) return -1;
            *found = child;
        }
    }
    return 0;
}

/* Only what a trusted list's signature needs: same-document references, the enveloped transform,
 * (exclusive) C14N, SHA-2 digests; RSA or ECDSA over SHA-2. */
static int restrict_context(xmlSecDSigCtxPtr context) {
    context->enabledReferenceUris = xmlSecTransformUriTypeEmpty | xmlSecTransformUriTypeSameDocument;
    xmlSecTransformId references[] = {
        xmlSecTransformEnvelopedId, xmlSecTransformExclC14NId, xmlSecTransformExclC14NWithCommentsId,
        xmlSecTransformInclC14NId, xmlSecTransformInclC14NWithCommentsId, xmlSecTransformInclC14N11Id,
        xmlSecTransformSha256Id, xmlSecTransformSha384Id, xmlSecTransformSha512Id,
    };
    for (size_t index = 0; index < sizeof references / sizeof references[0]; index++) {
        if (xmlSecDSigCtxEnableReferenceTransform(context, references[index]) < 0) return -1;
    }
    xmlSecTransformId signatures[] = {
        xmlSecTransformExclC14NId, xmlSecTransformExclC14NWithCommentsId, xmlSecTransformInclC14NId,
        xmlSecTransformInclC14NWithCommentsId, xmlSecTransformInclC14N11Id, xmlSecTransformRsaSha256Id,
        xmlSecTransformRsaSha384Id, xmlSecTransformRsaSha512Id, xmlSecTransformEcdsaSha256Id,
        xmlSecTransformEcdsaSha384Id, xmlSecTransformEcdsaSha512Id,
    };
    for (size_t index = 0; index < sizeof signatures / sizeof signatures[0]; index++) {
        if (xmlSecDSigCtxEnableSignatureTransform(context, signatures[index]) < 0) return -1;
    }
    return 0;
}

/* Whether a reference of SignedInfo is the whole document: URI "" or "#" + the root's Id. */
static int covers_document(xmlSecDSigCtxPtr context, const xmlChar *root_id) {
    xmlSecSize count = xmlSecPtrListGetSize(&context->signedInfoReferences);
    for (xmlSecSize index = 0; index < count; index++) {
        xmlSecDSigReferenceCtxPtr reference = xmlSecPtrListGetItem(&context->signedInfoReferences, index);
        if (reference == NULL || reference->uri == NULL) continue;
        if (reference->uri[0] == 0) return 1;
        if (reference->uri[0] == '#' && root_id != NULL && xmlStrEqual(reference->uri + 1, root_id)) return 1;
    }
    return 0;
}

static int references_hold(xmlSecDSigCtxPtr context) {
    xmlSecSize count = xmlSecPtrListGetSize(&context->signedInfoReferences);
    for (xmlSecSize index = 0; index < count; index++) {
        xmlSecDSigReferenceCtxPtr reference = xmlSecPtrListGetItem(&context->signedInfoReferences, index);
        if (reference != NULL && reference->status != xmlSecDSigStatusSucceeded) return 0;
    }
    return 1;
}

/* Registers the root's Id attribute, so that a reference "#Id" finds the root element. */
static xmlChar *register_root_id(xmlDocPtr document, xmlNodePtr root) {
    xmlAttrPtr attribute = xmlHasProp(root, (const xmlChar *)"Id");
    if (attribute == NULL) return NULL;
    xmlChar *identifier = xmlNodeListGetString(document, attribute->children, 1);
    if (identifier != NULL && xmlGetID(document, identifier) == NULL) xmlAddID(NULL, document, identifier, attribute);
    return identifier;
}

static int judge(xmlSecDSigCtxPtr context, int processed, const xmlChar *root_id, char *message, size_t message_size) {
    if (processed < 0) {
        if (first_reason == XMLSEC_ERRORS_R_KEY_NOT_FOUND) {
            say(message, message_size, "the signature is not of the given certificate's key type");
            return CXMLSecShims_verify_wrong_key;
        }
        say(message, message_size, first_error[0] != 0 ? first_error : "libxmlsec1 could not process the signature");
        return CXMLSecShims_verify_error;
    }
    if (context->status == xmlSecDSigStatusSucceeded) {
        if (covers_document(context, root_id)) return CXMLSecShims_verify_valid;
        say(message, message_size, "the signature does not reference the whole list (URI \"\" or the root's Id)");
        return CXMLSecShims_verify_refused;
    }
    if (!references_hold(context)) {
        say(message, message_size, "a signed reference's digest does not match: the list was changed after signing");
        return CXMLSecShims_verify_content_changed;
    }
    say(message, message_size, "the signature value does not verify with the given certificate's key");
    return CXMLSecShims_verify_wrong_key;
}

int CXMLSecShims_verify(
    CXMLSecShims_document *handle, const unsigned char *certificate, size_t certificate_length, char *message,
    size_t message_size) {
    say(message, message_size, "");
    if (CXMLSecShims_initialise() != 0) {
        say(message, message_size, "libxmlsec1 (OpenSSL back end) could not be initialised");
        return CXMLSecShims_verify_error;
    }
    xmlDocPtr document = (xmlDocPtr)handle;
    xmlNodePtr root = xmlDocGetRootElement(document), signature = NULL;
    if (root == NULL || find_signature(root, &signature) < 0) {
        say(message, message_size, "the list carries more than one ds:Signature");
        return CXMLSecShims_verify_refused;
    }
    if (signature == NULL) {
        say(message, message_size, "the list carries no ds:Signature (an enveloped XML signature)");
        return CXMLSecShims_verify_no_signature;
    }
    first_error[0] = 0;
    first_reason = 0;
    xmlSecKeyPtr key = xmlSecCryptoAppKeyLoadMemory(
        certificate, (xmlSecSize)certificate_length, xmlSecKeyDataFormatCertDer, NULL, NULL, NULL);
    if (key == NULL) {
        say(message, message_size, "the signer certificate's public key cannot be read");
        return CXMLSecShims_verify_bad_certificate;
    }
    xmlSecDSigCtxPtr context = xmlSecDSigCtxCreate(NULL);
    if (context == NULL || restrict_context(context) < 0) {
        if (context != NULL) xmlSecDSigCtxDestroy(context);
        xmlSecKeyDestroy(key);
        say(message, message_size, "libxmlsec1 could not make a signature context");
        return CXMLSecShims_verify_error;
    }
    context->signKey = key; /* the context owns it from here and destroys it */
    xmlChar *root_id = register_root_id(document, root);
    int processed = xmlSecDSigCtxVerify(context, signature);
    int result = judge(context, processed, root_id, message, message_size);
    if (root_id != NULL) xmlFree(root_id);
    xmlSecDSigCtxDestroy(context);
    return result;
}
