/* os.h - the only operating-system code: virtual memory, clocks, process and thread
 * identity, the thread's stack, process and machine memory figures, the environment, loading
 * a shared library. Every other file asks this one (threads and their locks are pthreads,
 * used directly; the trace directory's files are opened in trace/ctf.c, which says why). A
 * fault-injection hook lets tests make commits fail. */
#ifndef TENURE_OS_H
#define TENURE_OS_H
#include <pthread.h>
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
uint64_t tn_os_now_ns(void);      /* CLOCK_MONOTONIC: every timestamp of the library */
uint64_t tn_os_realtime_ns(void); /* CLOCK_REALTIME: wall-clock deadlines, the trace's clock offset */
/* The calling thread's OS id (gettid), cached per thread; after fork() the child's thread
 * must forget the cached one (tn_os_thread_id_forget) before asking again. */
uint64_t tn_os_thread_id(void);
void tn_os_thread_id_forget(void);
long tn_os_process_id(void); /* getpid */
/* The calling thread's name (prctl PR_GET_NAME: at most 15 bytes and a NUL) into buf, NUL-padded
 * to len; "" if the OS does not say. */
void tn_os_thread_name(char *buf, size_t len);
/* The name of the process's thread whose OS id is tid (/proc/self/task/<tid>/comm) into buf;
 * "" if the OS does not say. */
void tn_os_thread_name_of(uint64_t tid, char *buf, size_t len);
/* Where code address pc lies, for a message: "0x... (symbol+0x1c in object)" as far as the
 * dynamic linker knows (dladdr), else "0x..." alone. */
void tn_os_describe_code(const void *pc, char *buf, size_t len);
/* The boot's id (/proc/sys/kernel/random/boot_id, 16 bytes): the CLOCK_MONOTONIC clock's
 * identity, as LTTng gives it; false if the OS does not say. */
bool tn_os_boot_id(uint8_t id[16]);
/* The high end (base) of the calling thread's stack, or NULL if the OS does not say. */
char *tn_os_stack_base(void);
/* The host's name into buf (NUL-terminated; "unknown" if the OS does not say). */
void tn_os_host_name(char *buf, size_t len);
/* n random bytes from the OS (/dev/urandom); false if it gave fewer. */
bool tn_os_random_bytes(void *buf, size_t n);
/* The machine's memory load in percent (MemAvailable against MemTotal of /proc/meminfo, as
 * .NET's memory load); 0 if unknown. No malloc: safe inside a GC's pause. */
uint32_t tn_os_memory_load(void);
uint64_t tn_os_l3_cache_size(void); /* 0 if unknown */
uint64_t tn_os_rss_bytes(void);     /* resident set size of the process */
/* The one reader of the environment (every TENURE_* variable goes through it): NULL in a
 * secure-execution process (setuid, setgid or file capabilities: AT_SECURE), so that no
 * variable steers a privileged program. */
const char *tn_os_getenv(const char *name);
/* true in a secure-execution process (AT_SECURE): the profiler is never loaded there. */
bool tn_os_secure_execution(void);
/* true if the variable is present in the environment, even where tn_os_getenv hides it: only
 * to report that it was ignored; its value is never read. */
bool tn_os_env_present(const char *name);
/* Call fn with the name (not NUL-terminated: len bytes) of every variable of the environment
 * whose name starts with prefix; nothing in a secure-execution process. */
void tn_os_env_names(const char *prefix, void (*fn)(const char *name, size_t len, void *ctx), void *ctx);
/* Load the shared library at `path` (RTLD_NOW | RTLD_LOCAL, never unloaded) and return the
 * address of `symbol` in it; NULL on failure, with the loader's reason in err. */
void *tn_os_load_library(const char *path, const char *symbol, char *err, size_t errlen);
/* The soft address-space limit of the process (RLIMIT_AS, `ulimit -v`) in bytes; 0 if none. */
uint64_t tn_os_address_space_limit(void);
/* The CPUs the calling process may run on (sched_getaffinity): their count, and the first 64
 * of them as a mask (bit i: CPU i) in *mask when mask is not NULL. At least 1. */
unsigned tn_os_cpus_allowed(uint64_t *mask);
/* Bind the calling thread to CPU `cpu` (server GC's threads, GCHeapAffinitizeMask): false if
 * the OS refused. */
bool tn_os_bind_to_cpu(unsigned cpu);
/* A set of CPUs, bit i of bits[i / 64] for CPU i (the layout of glibc's cpu_set_t). */
#define TN_OS_MAX_CPUS 1024
typedef struct tn_cpu_set {
    uint64_t bits[TN_OS_MAX_CPUS / 64];
} tn_cpu_set;
/* The CPUs the calling thread may run on, less the one it runs on now if that leaves any:
 * where a thread it is about to wake should run so as not to queue behind it (server GC's
 * helpers, gc/team.c). false if the OS did not say. */
bool tn_os_cpus_beside_current(tn_cpu_set *out);
/* Let `thread` run on the CPUs of *set only: false if the OS refused. */
bool tn_os_set_thread_cpus(pthread_t thread, const tn_cpu_set *set);
/* The text of the last OS error (errno) for a message. */
const char *tn_os_last_error(void);

/* A segmentation fault the program took: the address it reports (0 when the CPU does not
 * say, as for an address x86-64 cannot represent), the instruction, and the general
 * registers' values where the OS gives them (x86-64, AArch64; else nregs is 0). */
typedef struct tn_os_fault {
    const void *addr;
    const void *pc;
    bool addr_known; /* false: the CPU did not report the address (x86-64's SI_KERNEL) */
    size_t nregs;
    uintptr_t regs[32];
} tn_os_fault;
typedef void (*tn_os_fault_fn)(const tn_os_fault *fault);
/* Make fn the first to see every SIGSEGV of the process (once: later calls change nothing;
 * false if the OS refused). After fn the fault goes on as if fn were not there: to the handler
 * installed before (called as the signal would have called it), or, under the default
 * disposition, the default is restored and the faulting instruction runs again, so the process
 * dies of the SIGSEGV as it would have (core dump included). fn runs in the signal handler:
 * it writes with tn_os_write_stderr and calls nothing that takes a lock. */
bool tn_os_catch_faults(tn_os_fault_fn fn);
/* Write len bytes of text to stderr with write(2) (safe in a signal handler). */
void tn_os_write_stderr(const char *text, size_t len);
#endif
