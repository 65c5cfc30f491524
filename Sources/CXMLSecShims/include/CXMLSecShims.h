#ifndef C_XMLSEC_SHIMS_H
#define C_XMLSEC_SHIMS_H
/*
 * What TrustedLists needs of libxml2 and libxmlsec1, behind opaque types (their headers cannot be
 * imported into Swift beside Foundation: see CLibXML2): a bounded, DTD-free parse into a read-only
 * tree, and an XML-DSig check of a document's enveloped signature against one given certificate.
 * Every name is prefixed with the module name. Strings are NUL-terminated UTF-8. Nothing here prints:
 * libxml2's and libxmlsec1's messages come back in the caller's message buffer.
 */
#include <stddef.h>

typedef struct CXMLSecShims_document CXMLSecShims_document;
typedef struct CXMLSecShims_node CXMLSecShims_node;

/* What one parse may hold; 0 in a field means no limit of that kind. */
typedef struct {
    size_t max_elements;       /* elements in the whole document */
    size_t max_depth;          /* nesting of elements */
    const char *counted_name;  /* a local element name counted on its own (NULL: none) */
    size_t max_counted;        /* how many `counted_name` elements are allowed */
} CXMLSecShims_limits;

/* Why a parse stopped. */
enum {
    CXMLSecShims_parse_ok = 0,
    CXMLSecShims_parse_malformed = 1,          /* not well-formed XML (libxml2's message) */
    CXMLSecShims_parse_dtd = 2,                /* a DOCTYPE: DTDs and entities are refused outright */
    CXMLSecShims_parse_too_many_elements = 3,  /* more than max_elements */
    CXMLSecShims_parse_too_deep = 4,           /* deeper than max_depth */
    CXMLSecShims_parse_too_many_counted = 5,   /* more than max_counted `counted_name` elements */
    CXMLSecShims_parse_no_memory = 6,
};

/* Parses `length` bytes with the network, entity substitution, DTD loading and XInclude off and any
 * DOCTYPE refused, stopping as soon as a limit is passed. Returns the document, or NULL with `status`
 * set and a message (libxml2's, when it has one) in `message`. */
CXMLSecShims_document *CXMLSecShims_parse(
    const unsigned char *bytes, size_t length, const CXMLSecShims_limits *limits, int *status, char *message,
    size_t message_size);
/* Frees the document and every node of it. */
void CXMLSecShims_document_free(CXMLSecShims_document *document);
/* The document's root element. */
CXMLSecShims_node *CXMLSecShims_root(CXMLSecShims_document *document);
/* The first element child of `node`, or NULL. */
CXMLSecShims_node *CXMLSecShims_first_element(CXMLSecShims_node *node);
/* The next element sibling of `node`, or NULL. */
CXMLSecShims_node *CXMLSecShims_next_element(CXMLSecShims_node *node);
/* The element's local name (owned by the document). */
const char *CXMLSecShims_local_name(CXMLSecShims_node *node);
/* The element's namespace URI (owned by the document), or NULL when it has none. */
const char *CXMLSecShims_namespace(CXMLSecShims_node *node);
/* The element's text content (all its descendant text), which the caller frees with
 * CXMLSecShims_free; NULL when memory runs out. */
char *CXMLSecShims_text(CXMLSecShims_node *node);
/* The value of attribute `name` (no namespace; "xml:lang" for the language), which the caller frees
 * with CXMLSecShims_free; NULL when the element has no such attribute. */
char *CXMLSecShims_attribute(CXMLSecShims_node *node, const char *name);
/* Frees a string this module returned. */
void CXMLSecShims_free(char *text);

/* What an XML-DSig check found. */
enum {
    CXMLSecShims_verify_valid = 0,           /* the signature verifies with the given key */
    CXMLSecShims_verify_wrong_key = 1,       /* the references hold, the signature value does not (another key) */
    CXMLSecShims_verify_content_changed = 2, /* a reference's digest does not match: the content changed */
    CXMLSecShims_verify_no_signature = 3,    /* no ds:Signature child of the root element */
    CXMLSecShims_verify_refused = 4,         /* a signature that does not cover the whole document, or several */
    CXMLSecShims_verify_bad_certificate = 5, /* the given certificate cannot be read as a key */
    CXMLSecShims_verify_error = 6,           /* libxmlsec1 could not process the signature (its message) */
};

/* Checks the document's one enveloped signature (a ds:Signature child of the root element whose
 * SignedInfo references the whole document: URI "" or "#" + the root's Id) with the public key of
 * the DER certificate given, ignoring the key the signature names. Only same-document references
 * and the enveloped, C14N and exclusive-C14N transforms with SHA-2 digests are processed. Returns
 * one of the CXMLSecShims_verify_ codes, with a message in `message` when it is not valid. */
int CXMLSecShims_verify(
    CXMLSecShims_document *document, const unsigned char *certificate, size_t certificate_length, char *message,
    size_t message_size);

#endif
