#include "CXMLSecShims.h"
#include "internal.h"
#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <string.h>

/* The limits and counters of the parse running on this thread: libxml2's SAX callbacks receive the
 * parser context only, and a parse runs start to end on one thread. */
typedef struct {
    CXMLSecShims_limits limits;
    size_t elements;
    size_t counted;
    int status;
} parse_state;

static _Thread_local parse_state *current;

static void stop(void *context, int status) {
    if (current->status == CXMLSecShims_parse_ok) current->status = status;
    xmlStopParser((xmlParserCtxtPtr)context);
}

/* Counts every element before libxml2 builds its node, so a limit stops the parse before the tree
 * grows past it. */
static void start_element(
    void *context, const xmlChar *local_name, const xmlChar *prefix, const xmlChar *uri, int namespace_count,
    const xmlChar **namespaces, int attribute_count, int defaulted_count, const xmlChar **attributes) {
    parse_state *state = current;
    if (state->status != CXMLSecShims_parse_ok) return;
    xmlParserCtxtPtr parser = (xmlParserCtxtPtr)context;
    state->elements += 1;
    if (state->limits.max_elements != 0 && state->elements > state->limits.max_elements) {
        stop(context, CXMLSecShims_parse_too_many_elements);
        return;
    }
    if (state->limits.max_depth != 0 && (size_t)parser->nameNr + 1 > state->limits.max_depth) {
        stop(context, CXMLSecShims_parse_too_deep);
        return;
    }
    if (state->limits.counted_name != NULL && strcmp((const char *)local_name, state->limits.counted_name) == 0) {
        state->counted += 1;
        if (state->counted > state->limits.max_counted) {
            stop(context, CXMLSecShims_parse_too_many_counted);
            return;
        }
    }
    xmlSAX2StartElementNs(
        context, local_name, prefix, uri, namespace_count, namespaces, attribute_count, defaulted_count, attributes);
}

/* A DOCTYPE stops the parse before any of its declarations is read: no entity (internal or
 * external) can be declared, so none can be expanded or fetched. */
static void refuse_subset(void *context, const xmlChar *name, const xmlChar *external_id, const xmlChar *system_id) {
    (void)name;
    (void)external_id;
    (void)system_id;
    stop(context, CXMLSecShims_parse_dtd);
}

/* libxml2 keeps the error in the parser context; this keeps it from printing it. */
static void quiet(void *user_data, xmlErrorPtr error) {
    (void)user_data;
    (void)error;
}

static void describe(xmlParserCtxtPtr parser, int status, char *message, size_t message_size) {
    if (message == NULL || message_size == 0) return;
    const xmlError *error = &parser->lastError;
    switch (status) {
    case CXMLSecShims_parse_malformed:
        if (error->message != NULL) {
            snprintf(message, message_size, "line %d: %s", error->line, error->message);
            size_t length = strlen(message);
            while (length > 0 && (message[length - 1] == '\n' || message[length - 1] == ' ')) message[--length] = 0;
        } else {
            snprintf(message, message_size, "not well-formed XML");
        }
        break;
    default:
        snprintf(message, message_size, "line %d", xmlSAX2GetLineNumber(parser));
        break;
    }
}

CXMLSecShims_document *CXMLSecShims_parse(
    const unsigned char *bytes, size_t length, const CXMLSecShims_limits *limits, int *status, char *message,
    size_t message_size) {
    if (message != NULL && message_size > 0) message[0] = 0;
    *status = CXMLSecShims_parse_no_memory;
    if (CXMLSecShims_initialise() != 0) return NULL;
    if (length > (size_t)0x7fffffff) {
        /* libxml2 takes an int length: a larger document is refused as too large, never truncated. */
        *status = CXMLSecShims_parse_too_many_elements;
        if (message != NULL && message_size > 0) snprintf(message, message_size, "larger than 2 GiB");
        return NULL;
    }
    xmlParserCtxtPtr parser = xmlNewParserCtxt();
    if (parser == NULL) return NULL;
    parser->sax->startElementNs = start_element;
    parser->sax->internalSubset = refuse_subset;
    parser->sax->externalSubset = refuse_subset;
    parser->sax->serror = quiet;
    parse_state state = {.limits = *limits, .elements = 0, .counted = 0, .status = CXMLSecShims_parse_ok};
    current = &state;
    int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOCDATA;
    xmlDocPtr document = xmlCtxtReadMemory(parser, (const char *)bytes, (int)length, NULL, NULL, options);
    current = NULL;
    if (state.status == CXMLSecShims_parse_ok && (document == NULL || !parser->wellFormed)) {
        state.status = CXMLSecShims_parse_malformed;
    }
    if (state.status != CXMLSecShims_parse_ok) {
        describe(parser, state.status, message, message_size);
        if (document != NULL) xmlFreeDoc(document);
        document = NULL;
    }
    *status = state.status;
    xmlFreeParserCtxt(parser);
    return (CXMLSecShims_document *)document;
}

void CXMLSecShims_document_free(CXMLSecShims_document *document) { xmlFreeDoc((xmlDocPtr)document); }

CXMLSecShims_node *CXMLSecShims_root(CXMLSecShims_document *document) {
    return (CXMLSecShims_node *)xmlDocGetRootElement((xmlDocPtr)document);
}

CXMLSecShims_node *CXMLSecShims_first_element(CXMLSecShims_node *node) {
    return (CXMLSecShims_node *)xmlFirstElementChild((xmlNodePtr)node);
}

CXMLSecShims_node *CXMLSecShims_next_element(CXMLSecShims_node *node) {
    return (CXMLSecShims_node *)xmlNextElementSibling((xmlNodePtr)node);
}

const char *CXMLSecShims_local_name(CXMLSecShims_node *node) { return (const char *)((xmlNodePtr)node)->name; }

const char *CXMLSecShims_namespace(CXMLSecShims_node *node) {
    xmlNsPtr namespace = ((xmlNodePtr)node)->ns;
    return namespace == NULL ? NULL : (const char *)namespace->href;
}

char *CXMLSecShims_text(CXMLSecShims_node *node) { return (char *)xmlNodeGetContent((xmlNodePtr)node); }

char *CXMLSecShims_attribute(CXMLSecShims_node *node, const char *name) {
    if (strcmp(name, "xml:lang") == 0) {
        return (char *)xmlGetNsProp((xmlNodePtr)node, (const xmlChar *)"lang", XML_XML_NAMESPACE);
    }
    return (char *)xmlGetNoNsProp((xmlNodePtr)node, (const xmlChar *)name);
}

void CXMLSecShims_free(char *text) { xmlFree(text); }
