#ifndef C_PKCS11_SHIM_H
#define C_PKCS11_SHIM_H
/* The PKCS#11 (Cryptoki) header from p11-kit (libp11-kit-dev, pkg-config p11-kit-1): types and
   constants only. Modules are loaded at run time with dlopen (see CPKCS11Shims), never linked. */
#include <p11-kit/pkcs11.h>
#endif
