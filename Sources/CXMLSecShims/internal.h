#ifndef C_XMLSEC_SHIMS_INTERNAL_H
#define C_XMLSEC_SHIMS_INTERNAL_H
/* Initialises libxml2 and libxmlsec1 once per process (thread-safe); 0 when ready, -1 when
 * libxmlsec1 or its OpenSSL back end could not start. */
int CXMLSecShims_initialise(void);
#endif
