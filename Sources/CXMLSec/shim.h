#ifndef C_XMLSEC_SHIM_H
#define C_XMLSEC_SHIM_H
/*
 * libxmlsec1 with its OpenSSL back end (Debian libxmlsec1-dev): the libraries CXMLSecShims links.
 * No pkg-config here: xmlsec1-openssl's cflags are mostly -D defines, which SwiftPM refuses from a
 * .pc file (a "prohibited flags" warning on every build), so CXMLSecShims sets those defines itself
 * and reaches /usr/include/xmlsec1 through its xmlsec1/xmlsec link. Swift never imports libxmlsec1's
 * or libxml2's headers (see CLibXML2): CXMLSecShims gives it an opaque API.
 */
#endif
