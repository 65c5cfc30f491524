#include "CPKCS11Shims.h"
#include <dlfcn.h>
#include <string.h>

void *CPKCS11Shims_dlopen(const char *path, char *error, size_t error_size) {
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL && error != NULL && error_size > 0) {
        const char *message = dlerror();
        strncpy(error, message != NULL ? message : "unknown dlopen error", error_size - 1);
        error[error_size - 1] = '\0';
    }
    return library;
}

CK_RV CPKCS11Shims_get_function_list(void *library, CK_FUNCTION_LIST_PTR *list) {
    *list = NULL;
    CK_C_GetFunctionList get = (CK_C_GetFunctionList)dlsym(library, "C_GetFunctionList");
    if (get == NULL) return CKR_FUNCTION_NOT_SUPPORTED;
    return get(list);
}

CK_ULONG CPKCS11Shims_unavailable_information(void) { return CK_UNAVAILABLE_INFORMATION; }
