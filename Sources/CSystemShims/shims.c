#define _GNU_SOURCE
#include "CSystemShims.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
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

static volatile sig_atomic_t CSystemShims_noted[NSIG];

static void CSystemShims_note(int signal) {
    if (signal > 0 && signal < NSIG) CSystemShims_noted[signal] = 1;
}

int CSystemShims_noteSignal(int signal) {
    if (signal <= 0 || signal >= NSIG) { errno = EINVAL; return -1; }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = CSystemShims_note;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(signal, &action, NULL);
}

int CSystemShims_takeNotedSignal(int signal) {
    if (signal <= 0 || signal >= NSIG || !CSystemShims_noted[signal]) return 0;
    CSystemShims_noted[signal] = 0;
    return 1;
}
