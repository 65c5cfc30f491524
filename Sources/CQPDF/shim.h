#ifndef C_QPDF_SHIM_H
#define C_QPDF_SHIM_H
/* qpdf's plain C API (libqpdf-dev) for reading PDFs; PDFSigning writes its own incremental updates. */
#include <qpdf/qpdf-c.h>
#endif
