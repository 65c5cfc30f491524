#ifndef C_SYSTEM_SHIMS_H
#define C_SYSTEM_SHIMS_H
/*
 * Linux system calls Swift cannot reach from Glibc: declared only with _GNU_SOURCE, or variadic; and a
 * signal handler, which must be C to be async-signal-safe.
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

/* Takes `signal` (SIGINT or SIGTERM) with a handler that only notes its arrival, for the time until
 * a dispatch source reads the signal: unlike SIG_IGN, setting it keeps a signal that is already
 * pending (blocked by every thread of a Swift program that waits in dispatch_main), and one that a
 * thread without the signal blocked receives is noted instead of lost; 0, or -1 with errno */
int CSystemShims_noteSignal(int signal);

/* 1 when `signal` reached the handler CSystemShims_noteSignal set since the last call (the note is
 * cleared), else 0 */
int CSystemShims_takeNotedSignal(int signal);

#endif
