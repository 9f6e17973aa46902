/* os.c - POSIX implementation of os.h (Linux: mmap/mprotect/madvise, gettid, /proc). */
#include "os/os.h"
#include <sched.h>
#include <signal.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

void *tn_os_reserve(size_t size, size_t align) {
    size_t total = size + align;
    char *p = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    uintptr_t start = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
    size_t head = start - (uintptr_t)p, tail = total - head - size;
    if (head)
        munmap(p, head);
    if (tail)
        munmap((char *)start + size, tail);
    return (void *)start;
}

void *tn_os_reserve_lazy(size_t size) {
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void tn_os_release(void *p, size_t size) {
    if (p)
        munmap(p, size);
}

bool tn_os_commit(void *p, size_t size) { return mprotect(p, size, PROT_READ | PROT_WRITE) == 0; }

void tn_os_decommit(void *p, size_t size) {
    madvise(p, size, MADV_DONTNEED);
    mprotect(p, size, PROT_NONE);
}

void tn_os_discard(void *p, size_t size) {
    /* only the whole pages inside [p, p+size): a page may also hold a neighbour's data */
    uintptr_t page = tn_os_page_size();
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), b = ((uintptr_t)p + size) & ~(page - 1);
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
}

size_t tn_os_page_size(void) {
    long v = sysconf(_SC_PAGESIZE);
    return v > 0 ? (size_t)v : 4096;
}

uint64_t tn_os_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tn_os_realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static _Thread_local uint64_t thread_id_cache; /* the OS thread id, once asked */

uint64_t tn_os_thread_id(void) {
    if (!thread_id_cache)
        thread_id_cache = (uint64_t)syscall(SYS_gettid);
    return thread_id_cache;
}

void tn_os_thread_id_forget(void) { thread_id_cache = 0; }

long tn_os_process_id(void) { return (long)getpid(); }

void tn_os_thread_name_of(uint64_t tid, char *buf, size_t len) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%llu/comm", (unsigned long long)tid);
    if (len)
        buf[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || !len)
        goto out;
    ssize_t n = read(fd, buf, len - 1);
    buf[n > 0 ? n : 0] = 0;
    if (n > 0 && buf[n - 1] == '\n')
        buf[n - 1] = 0;
out:
    if (fd >= 0)
        close(fd);
}

void tn_os_describe_code(const void *pc, char *buf, size_t len) {
    Dl_info info;
    if (pc && dladdr(pc, &info) && info.dli_sname && info.dli_saddr)
        snprintf(buf, len, "%p (%s+0x%tx in %s)", pc, info.dli_sname, (const char *)pc - (const char *)info.dli_saddr,
                 info.dli_fname ? info.dli_fname : "?");
    else if (pc && dladdr(pc, &info) && info.dli_fname)
        snprintf(buf, len, "%p (in %s at offset 0x%tx; link with -rdynamic for the function's name)", pc,
                 info.dli_fname, (const char *)pc - (const char *)info.dli_fbase);
    else
        snprintf(buf, len, "%p", pc);
}

void tn_os_thread_name(char *buf, size_t len) {
    char name[17] = {0}; /* PR_GET_NAME writes at most 16 bytes */
    if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
        name[0] = 0;
    if (len == 0)
        return;
    memset(buf, 0, len);
    memcpy(buf, name, strnlen(name, len - 1));
}

static int hex_digit(char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

bool tn_os_boot_id(uint8_t id[16]) {
    char text[64] = {0};
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
    if (fd >= 0)
        close(fd);
    int n = 0;
    for (ssize_t i = 0; i + 1 < got && n < 16; i++) {
        if (text[i] == '-')
            continue;
        int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        id[n++] = (uint8_t)(hi << 4 | lo);
        i++;
    }
    return n == 16;
}

char *tn_os_stack_base(void) {
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return NULL;
    int err = pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    return err ? NULL : (char *)addr + size;
}

void tn_os_host_name(char *buf, size_t len) {
    if (len == 0)
        return;
    if (gethostname(buf, len - 1) != 0)
        snprintf(buf, len, "unknown");
    buf[len - 1] = 0;
}

bool tn_os_random_bytes(void *buf, size_t n) {
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, buf, n) : -1;
    if (fd >= 0)
        close(fd);
    return got >= 0 && (size_t)got == n;
}

/* The kB value of `field` in /proc/meminfo's text, 0 if absent. */
static unsigned long long meminfo_field(const char *text, const char *field) {
    const char *p = strstr(text, field);
    return p ? strtoull(p + strlen(field), NULL, 10) : 0;
}

/* Read with read() into the stack: stdio would malloc a FILE inside the GC's pause. */
uint32_t tn_os_memory_load(void) {
    char text[4096];
    int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = 0;
    unsigned long long total = meminfo_field(text, "MemTotal:"), avail = meminfo_field(text, "MemAvailable:");
    return total && avail <= total ? (uint32_t)((total - avail) * 100 / total) : 0;
}

uint64_t tn_os_l3_cache_size(void) {
#ifdef _SC_LEVEL3_CACHE_SIZE
    long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (v > 0)
        return (uint64_t)v;
#endif
    return 0;
}

uint64_t tn_os_rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%lu %lu", &size, &resident) != 2)
        resident = 0;
    fclose(f);
    return (uint64_t)resident * tn_os_page_size();
}

const char *tn_os_getenv(const char *name) { return secure_getenv(name); }

bool tn_os_secure_execution(void) { return getauxval(AT_SECURE) != 0; }

bool tn_os_env_present(const char *name) { return getenv(name) != NULL; /* presence only: the value is not used */ }

extern char **environ;

void tn_os_env_names(const char *prefix, void (*fn)(const char *name, size_t len, void *ctx), void *ctx) {
    size_t n = strlen(prefix);
    if (tn_os_secure_execution())
        return;
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, prefix, n) == 0)
            fn(*e, strcspn(*e, "="), ctx);
}

void *tn_os_load_library(const char *path, const char *symbol, char *err, size_t errlen) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void *sym = lib ? dlsym(lib, symbol) : NULL;
    if (!sym) {
        const char *why = dlerror();
        snprintf(err, errlen, "%s", why ? why : "symbol not found");
    }
    return sym;
}

uint64_t tn_os_address_space_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    return (uint64_t)rl.rlim_cur;
}

unsigned tn_os_cpus_allowed(uint64_t *mask) {
    cpu_set_t set;
    CPU_ZERO(&set);
    unsigned n = 0;
    uint64_t m = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        n = (unsigned)CPU_COUNT(&set);
        for (unsigned i = 0; i < 64; i++)
            m |= CPU_ISSET(i, &set) ? (uint64_t)1 << i : 0;
    }
    if (n == 0) { /* the OS did not say: what sysconf counts */
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (unsigned)c : 1;
        m = n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
    }
    if (mask)
        *mask = m;
    return n;
}

bool tn_os_bind_to_cpu(unsigned cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

_Static_assert(sizeof(cpu_set_t) == sizeof(tn_cpu_set), "tn_cpu_set has cpu_set_t's layout");

bool tn_os_cpus_beside_current(tn_cpu_set *out) {
    cpu_set_t set;
    int cpu = sched_getcpu();
    if (sched_getaffinity(0, sizeof set, &set) != 0 || cpu < 0)
        return false;
    if (cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set) && CPU_COUNT(&set) > 1)
        CPU_CLR(cpu, &set);
    memcpy(out, &set, sizeof set);
    return true;
}

bool tn_os_set_thread_cpus(pthread_t thread, const tn_cpu_set *set) {
    cpu_set_t s;
    memcpy(&s, set, sizeof s);
    return pthread_setaffinity_np(thread, sizeof s, &s) == 0;
}

const char *tn_os_last_error(void) { return strerror(errno); }

/* ---- faults (tn_os_catch_faults) ---- */

static tn_os_fault_fn fault_fn;
static struct sigaction fault_before; /* the disposition found at installation */

static void fault_registers(tn_os_fault *f, const void *context) {
    const ucontext_t *uc = context;
#if defined(__x86_64__)
    f->pc = (const void *)uc->uc_mcontext.gregs[REG_RIP];
    for (int r = REG_R8; r <= REG_RSP; r++)
        f->regs[f->nregs++] = (uintptr_t)uc->uc_mcontext.gregs[r];
#elif defined(__aarch64__)
    f->pc = (const void *)uc->uc_mcontext.pc;
    for (int r = 0; r < 31; r++)
        f->regs[f->nregs++] = (uintptr_t)uc->uc_mcontext.regs[r];
#else
    (void)uc;
#endif
}

static void on_fault(int sig, siginfo_t *info, void *context) {
    int saved = errno;
    tn_os_fault f = {.addr = info->si_addr, .addr_known = info->si_code != SI_KERNEL};
    if (context)
        fault_registers(&f, context);
    fault_fn(&f);
    errno = saved;
    if (fault_before.sa_flags & SA_SIGINFO) {
        fault_before.sa_sigaction(sig, info, context);
    } else if (fault_before.sa_handler != SIG_DFL && fault_before.sa_handler != SIG_IGN) {
        fault_before.sa_handler(sig);
    } else {
        /* the default again: the instruction faults once more and the process dies of it */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
    }
}

bool tn_os_catch_faults(tn_os_fault_fn fn) {
    static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
    bool ok = true;
    pthread_mutex_lock(&once);
    if (!fault_fn) {
        struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_ONSTACK};
        sigemptyset(&sa.sa_mask);
        fault_fn = fn;
        ok = sigaction(SIGSEGV, &sa, &fault_before) == 0;
        if (!ok)
            fault_fn = NULL;
    }
    pthread_mutex_unlock(&once);
    return ok;
}

void tn_os_write_stderr(const char *text, size_t len) {
    while (len) {
        ssize_t n = write(2, text, len);
        if (n <= 0 && errno != EINTR)
            return;
        if (n > 0)
            text += n, len -= (size_t)n;
    }
}
