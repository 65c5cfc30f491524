#include "CLibXML2Shims.h"
#include <libxml/parser.h>
#include <libxml/tree.h>

static const xmlChar *chars(const char *text) { return (const xmlChar *)text; }

CLibXML2Shims_document *CLibXML2Shims_document_create(const char *root_name, const char *uri, const char *prefix) {
    xmlInitParser();
    xmlDocPtr document = xmlNewDoc(chars("1.0"));
    if (document == NULL) return NULL;
    xmlNodePtr root = xmlNewDocNode(document, NULL, chars(root_name), NULL);
    if (root == NULL) {
        xmlFreeDoc(document);
        return NULL;
    }
    xmlDocSetRootElement(document, root);
    xmlNsPtr namespace = xmlNewNs(root, chars(uri), chars(prefix));
    if (namespace == NULL) {
        xmlFreeDoc(document);
        return NULL;
    }
    xmlSetNs(root, namespace);
    return (CLibXML2Shims_document *)document;
}

CLibXML2Shims_node *CLibXML2Shims_document_root(CLibXML2Shims_document *document) {
    return (CLibXML2Shims_node *)xmlDocGetRootElement((xmlDocPtr)document);
}

int CLibXML2Shims_declare_namespace(CLibXML2Shims_document *document, const char *uri, const char *prefix) {
    xmlNodePtr root = xmlDocGetRootElement((xmlDocPtr)document);
    return root != NULL && xmlNewNs(root, chars(uri), chars(prefix)) != NULL ? 0 : -1;
}

CLibXML2Shims_node *CLibXML2Shims_add_element(
    CLibXML2Shims_document *document, CLibXML2Shims_node *parent, const char *uri, const char *name,
    const char *text) {
    xmlNsPtr namespace = xmlSearchNsByHref((xmlDocPtr)document, (xmlNodePtr)parent, chars(uri));
    if (namespace == NULL) return NULL;
    /* xmlNewTextChild escapes the content (xmlNewChild would read entity references in it). */
    return (CLibXML2Shims_node *)xmlNewTextChild(
        (xmlNodePtr)parent, namespace, chars(name), text == NULL ? NULL : chars(text));
}

int CLibXML2Shims_set_attribute(CLibXML2Shims_node *node, const char *name, const char *value) {
    return xmlNewProp((xmlNodePtr)node, chars(name), chars(value)) != NULL ? 0 : -1;
}

int CLibXML2Shims_serialise(CLibXML2Shims_document *document, unsigned char **output, size_t *length) {
    xmlChar *buffer = NULL;
    int size = 0;
    xmlDocDumpFormatMemoryEnc((xmlDocPtr)document, &buffer, &size, "UTF-8", 1);
    if (buffer == NULL || size < 0) {
        if (buffer != NULL) xmlFree(buffer);
        return -1;
    }
    *output = buffer;
    *length = (size_t)size;
    return 0;
}

void CLibXML2Shims_free_output(unsigned char *output) { xmlFree(output); }

void CLibXML2Shims_document_free(CLibXML2Shims_document *document) { xmlFreeDoc((xmlDocPtr)document); }
