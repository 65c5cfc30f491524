#define _GNU_SOURCE
#include "CSystemShims.h"
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int CSystemShims_renameExchange(const char *from, const char *to) {
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 1u << 1 /* RENAME_EXCHANGE */);
}

int CSystemShims_syncfs(int descriptor) { return (int)syscall(SYS_syncfs, descriptor); }

int CSystemShims_disableCoreDumps(void) {
    struct rlimit none = { 0, 0 };
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int CSystemShims_pipeCloseOnExec(int descriptors[2]) { return pipe2(descriptors, O_CLOEXEC); }
