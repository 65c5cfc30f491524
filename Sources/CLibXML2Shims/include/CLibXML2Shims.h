#ifndef C_LIBXML2_SHIMS_H
#define C_LIBXML2_SHIMS_H
/*
 * The few libxml2 tree and save calls ValidationReporting writes its XML with, behind opaque
 * types (libxml2's own headers cannot be imported into Swift beside Foundation: see CLibXML2).
 * Every name is prefixed with the module name. Strings are NUL-terminated UTF-8; libxml2 escapes
 * element text and attribute values. A document owns its nodes: CLibXML2Shims_document_free frees all.
 */
#include <stddef.h>

typedef struct CLibXML2Shims_document CLibXML2Shims_document;
typedef struct CLibXML2Shims_node CLibXML2Shims_node;

/* A document with a root element `root_name` in namespace `uri` (declared with `prefix`); NULL when
 * memory runs out. */
CLibXML2Shims_document *CLibXML2Shims_document_create(const char *root_name, const char *uri, const char *prefix);
/* The document's root element. */
CLibXML2Shims_node *CLibXML2Shims_document_root(CLibXML2Shims_document *document);
/* Declares namespace `uri` with `prefix` on the root element; 0 on success, -1 when memory runs out. */
int CLibXML2Shims_declare_namespace(CLibXML2Shims_document *document, const char *uri, const char *prefix);
/* Adds element `name` in the declared namespace `uri` under `parent`, with `text` (NULL for none) as
 * its escaped content; NULL when `uri` was not declared or memory runs out. */
CLibXML2Shims_node *CLibXML2Shims_add_element(
    CLibXML2Shims_document *document, CLibXML2Shims_node *parent, const char *uri, const char *name,
    const char *text);
/* Sets attribute `name` (no namespace) of `node` to `value`, escaped; 0 on success, -1 on failure. */
int CLibXML2Shims_set_attribute(CLibXML2Shims_node *node, const char *name, const char *value);
/* Serialises the document as indented UTF-8 with an XML declaration into a new buffer the caller
 * frees with CLibXML2Shims_free_output; 0 on success, -1 on failure. */
int CLibXML2Shims_serialise(CLibXML2Shims_document *document, unsigned char **output, size_t *length);
/* Frees a buffer CLibXML2Shims_serialise made. */
void CLibXML2Shims_free_output(unsigned char *output);
/* Frees the document and every node of it. */
void CLibXML2Shims_document_free(CLibXML2Shims_document *document);

#endif
