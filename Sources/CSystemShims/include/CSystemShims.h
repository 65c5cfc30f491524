#ifndef C_SYSTEM_SHIMS_H
#define C_SYSTEM_SHIMS_H
/*
 * Linux system calls Swift cannot reach from Glibc: declared only with _GNU_SOURCE, or variadic.
 * Prototypes here, bodies in shims.c, every name prefixed with the module name.
 */

/* renameat2(RENAME_EXCHANGE): swaps two paths atomically; 0, or -1 with errno (EINVAL / ENOSYS
 * where the file system or kernel lacks it) */
int CSystemShims_renameExchange(const char *from, const char *to);

/* syncfs(2): writes back every dirty page and inode of the file system that holds `descriptor`; 0,
 * or -1 with errno (write-back errors are reported since Linux 5.8) */
int CSystemShims_syncfs(int descriptor);

/* Keeps secrets out of core dumps for the rest of the process: RLIMIT_CORE 0 (soft and hard) and
 * prctl(PR_SET_DUMPABLE, 0) (prctl is variadic); 0, or -1 with errno */
int CSystemShims_disableCoreDumps(void);

/* pipe2(O_CLOEXEC): a pipe whose ends no program started later by another thread inherits (a
 * pipe() marked close-on-exec afterwards leaks into a program spawned in between); 0, or -1 with errno */
int CSystemShims_pipeCloseOnExec(int descriptors[2]);

#endif
