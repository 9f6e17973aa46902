/* os.h - the only operating-system code: virtual memory, clock, process memory figures, the
 * environment, loading a shared library. Every other file asks this one (threads and their
 * locks are pthreads, used directly). A fault-injection hook lets tests make commits fail. */
#ifndef TENURE_OS_H
#define TENURE_OS_H
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* Reserve `size` bytes of address space aligned to `align` (a power of two); nothing is
 * committed. NULL on failure. */
void *tn_os_reserve(size_t size, size_t align);
/* Reserve and make readable/writable without counting it as committed memory: side tables
 * whose pages are touched lazily. NULL on failure. */
void *tn_os_reserve_lazy(size_t size);
void tn_os_release(void *p, size_t size);
/* Commit [p, p+size): true on success. Committed memory reads as zero the first time. */
bool tn_os_commit(void *p, size_t size);
/* Give [p, p+size) back to the OS; it stays reserved and reads as zero if committed again. */
void tn_os_decommit(void *p, size_t size);
/* Throw away the contents of the whole pages inside [p, p+size) of a lazily committed side
 * table (they read as zero after); bytes on partial pages at either end are kept. */
void tn_os_discard(void *p, size_t size);
size_t tn_os_page_size(void);
uint64_t tn_os_now_ns(void);           /* CLOCK_MONOTONIC */
uint64_t tn_os_l3_cache_size(void);    /* 0 if unknown */
uint64_t tn_os_rss_bytes(void);        /* resident set size of the process */
/* The one reader of the environment (every TENURE_* variable goes through it): NULL in a
 * secure-execution process (setuid, setgid or file capabilities: AT_SECURE), so that no
 * variable steers a privileged program. */
const char *tn_os_getenv(const char *name);
/* true in a secure-execution process (AT_SECURE): the profiler is never loaded there. */
bool tn_os_secure_execution(void);
/* true if the variable is present in the environment, even where tn_os_getenv hides it: only
 * to report that it was ignored; its value is never read. */
bool tn_os_env_present(const char *name);
/* Load the shared library at `path` (RTLD_NOW | RTLD_LOCAL, never unloaded) and return the
 * address of `symbol` in it; NULL on failure, with the loader's reason in err. */
void *tn_os_load_library(const char *path, const char *symbol, char *err, size_t errlen);
/* The soft address-space limit of the process (RLIMIT_AS, `ulimit -v`) in bytes; 0 if none. */
uint64_t tn_os_address_space_limit(void);
/* The text of the last OS error (errno) for a message. */
const char *tn_os_last_error(void);
#endif
