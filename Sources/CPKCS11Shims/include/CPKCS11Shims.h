#ifndef C_PKCS11_SHIMS_H
#define C_PKCS11_SHIMS_H
/* Loading a PKCS#11 module at run time: dlopen + dlsym("C_GetFunctionList"), and the constants
   Swift cannot import from p11-kit's header (cast or composite macros). */
#include <stddef.h>
#include <p11-kit/pkcs11.h>

/* dlopen(path, RTLD_NOW | RTLD_LOCAL). Returns NULL on failure and copies dlerror() into error. */
void *CPKCS11Shims_dlopen(const char *path, char *error, size_t error_size);

/* The module's C_GetFunctionList symbol, called. Returns CKR_FUNCTION_NOT_SUPPORTED and a NULL list
   when the library has no such symbol (it is not a PKCS#11 module). */
CK_RV CPKCS11Shims_get_function_list(void *library, CK_FUNCTION_LIST_PTR *list);

/* CK_UNAVAILABLE_INFORMATION ((unsigned long) -1 in the header). */
CK_ULONG CPKCS11Shims_unavailable_information(void);

#endif
