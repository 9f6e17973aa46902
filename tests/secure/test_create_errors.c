/*
 * create_errors: every failing tenure_create and every refused option says which option,
 * which value and why.
 *
 *  A. out-of-range values in a config: tenure_config_check gives the reason, tenure_create_ex
 *     gives the same reason and prints nothing, tenure_create prints it on stderr;
 *  B. the same values from the environment (tenure_create(NULL)): refused too (as a config
 *     is), the reason names the variable (TENURE_GCCompactMode=3, TENURE_GCRegionSize=1000);
 *     unparsable values (TENURE_GCgen0size=8x) likewise, and tenure_config_from_env prints
 *     each refusal on stderr;
 *  C. GCHeapHardLimit: below 3 regions refused with the reason; exactly 3 regions accepted,
 *     and 64 MiB of garbage allocates without a failure or a GC per allocation;
 *  D. an address-space limit (setrlimit(RLIMIT_AS) in a forked child, `ulimit -v`): with the
 *     default GCRegionRange the instance is created with a smaller reservation and works; an
 *     explicit GCRegionRange the limit cannot hold fails, naming GCRegionRange and the limit;
 *     a limit below the smallest reservation fails saying it retried (skipped under ASan and
 *     TSan, whose shadow memory needs the address space);
 *  E. the finalizer thread cannot start (pthread_create fails: interposed here): TENURE_OS,
 *     and the reason names GCFinalizeMode and the error;
 *  F. the child of a fork cannot restart the finalizer thread: it says so on stderr, and its
 *     finalizers run on the thread that waits for them (no hang).
 */
#define _GNU_SOURCE
#include "test_util.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>

#if defined(__SANITIZE_THREAD__)
#define TT_TSAN 1 /* the library never restarts the finalizer thread in a forked child */
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TT_SANITIZED 1
#endif
#endif

/* ---- stderr capture ---- */

static int saved_stderr = -1;
static FILE *capture_file;

static void capture_begin(void) {
    fflush(stderr);
    capture_file = tmpfile();
    TT_CHECK(capture_file != NULL);
    saved_stderr = dup(2);
    TT_CHECK(saved_stderr >= 0 && dup2(fileno(capture_file), 2) == 2);
}

/* What was written on stderr since capture_begin (also echoed, for the test's log). */
static const char *capture_end(void) {
    static char text[8192];
    fflush(stderr);
    TT_CHECK(dup2(saved_stderr, 2) == 2);
    close(saved_stderr);
    rewind(capture_file);
    size_t n = fread(text, 1, sizeof text - 1, capture_file);
    text[n] = '\0';
    fclose(capture_file);
    if (n)
        printf("    stderr: %s", text);
    return text;
}

static void unset_all(void) {
    for (size_t i = 0; i < tenure_option_count(); i++) {
        char var[128];
        snprintf(var, sizeof var, "TENURE_%s", tenure_option_get(i)->name);
        unsetenv(var);
    }
}

#define CHECK_HAS(text, part) TT_CHECK(strstr((text), (part)) != NULL, "'%s' does not say '%s'", (text), (part))

/* A config must be refused by check, create_ex and create alike, with a reason naming all of
 * `parts` (NULL-terminated). */
static void expect_refused(const tenure_config *c, const char *const *parts) {
    char why[512], why_ex[512];
    TT_CHECK_RESULT(tenure_config_check(c, why, sizeof why), TENURE_INVALID_ARGUMENT);
    printf("  refused: %s\n", why);
    for (const char *const *p = parts; *p; p++)
        CHECK_HAS(why, *p);
    tenure_result r = TENURE_OK;
    capture_begin();
    tenure_runtime *rt = tenure_create_ex(c, &r, why_ex, sizeof why_ex);
    const char *err = capture_end();
    TT_CHECK(rt == NULL && r == TENURE_INVALID_ARGUMENT);
    TT_CHECK(strcmp(why, why_ex) == 0, "check said '%s', create_ex '%s'", why, why_ex);
    TT_CHECK(err[0] == '\0', "tenure_create_ex printed '%s'", err);
    capture_begin();
    rt = tenure_create(c, &r);
    err = capture_end();
    TT_CHECK(rt == NULL && r == TENURE_INVALID_ARGUMENT);
    CHECK_HAS(err, "tenure_create failed");
    CHECK_HAS(err, why);
}

static void test_config(void) {
    tenure_config c;
    tenure_config_init(&c);
    char why[256] = "x";
    TT_CHECK_RESULT(tenure_config_check(&c, why, sizeof why), TENURE_OK);
    TT_CHECK(why[0] == '\0');
    TT_CHECK_RESULT(tenure_config_check(NULL, NULL, 0), TENURE_INVALID_ARGUMENT);
    c.GCCompactMode = 3;
    expect_refused(&c, (const char *const[]){"GCCompactMode=3", "0, 1 or 2", NULL});
    tenure_config_init(&c);
    c.GCRegionSize = 1000;
    expect_refused(&c, (const char *const[]){"GCRegionSize=1000", "power of two", NULL});
    tenure_config_init(&c);
    c.GCStressGeneration = -5;
    expect_refused(&c, (const char *const[]){"GCStressGeneration=-5", NULL});
    tenure_config_init(&c);
    c.GCFinalizeMode = 9;
    expect_refused(&c, (const char *const[]){"GCFinalizeMode=9", NULL});
    tenure_config_init(&c);
    c.GCHeapCount = 65; /* server GC: at most 64 GC threads */
    expect_refused(&c, (const char *const[]){"GCHeapCount=65", "at most 64", NULL});
    tenure_config_init(&c);
    c.gcServer = 2;
    expect_refused(&c, (const char *const[]){"gcServer=2", "0 or 1", NULL});
    tenure_config_init(&c);
    c.GCHeapCount = 64;
    TT_CHECK_RESULT(tenure_config_check(&c, why, sizeof why), TENURE_OK);
    tenure_config_init(&c);
    c.GCRegionRange = 1u << 20;
    expect_refused(&c, (const char *const[]){"GCRegionRange=1048576", "4 regions", NULL});
    tenure_config_init(&c);
    c.GCLOHThreshold = 10;
    expect_refused(&c, (const char *const[]){"GCLOHThreshold=10", NULL});
    /* larger than a region: a small object that fits in no region (allocation used to take
     * every region of the range, committing them, until the OOM killer came) */
    c.GCLOHThreshold = (uint64_t)1 << 30;
    expect_refused(&c, (const char *const[]){"GCLOHThreshold=1073741824", "GCRegionSize", NULL});
    /* a mark stack whose size in bytes overflows (memory corruption at the first GC) */
    tenure_config_init(&c);
    c.GCMarkStackSize = (uint64_t)1 << 62;
    expect_refused(&c, (const char *const[]){"GCMarkStackSize=4611686018427387904", NULL});
    /* a switch set to anything but 0 or 1 is a typo, not "on" */
    tenure_config_init(&c);
    c.HeapVerify = 2;
    expect_refused(&c, (const char *const[]){"HeapVerify=2", "0 or 1", NULL});
    tenure_config_init(&c);
    c.GCPoisonFreed = 7;
    expect_refused(&c, (const char *const[]){"GCPoisonFreed=7", "0 or 1", NULL});
    /* a short buffer is truncated, never overrun */
    tenure_config_init(&c);
    c.GCCompactMode = 3;
    char tiny[8];
    memset(tiny, 'z', sizeof tiny);
    TT_CHECK_RESULT(tenure_config_check(&c, tiny, 6), TENURE_INVALID_ARGUMENT);
    TT_CHECK(tiny[5] == '\0' && tiny[6] == 'z' && tiny[7] == 'z');
}

/* tenure_create(NULL) with one variable set must fail naming it. */
static void expect_env_refused(const char *var, const char *value, const char *part) {
    unset_all();
    TT_CHECK(setenv(var, value, 1) == 0);
    tenure_result r = TENURE_OK;
    capture_begin();
    tenure_runtime *rt = tenure_create(NULL, &r);
    const char *err = capture_end();
    TT_CHECK(rt == NULL, "tenure_create(NULL) accepted %s=%s", var, value);
    TT_CHECK(r == TENURE_INVALID_ARGUMENT);
    char both[256];
    snprintf(both, sizeof both, "%s=%s", var, value);
    CHECK_HAS(err, both);
    CHECK_HAS(err, part);
    char why[512];
    rt = tenure_create_ex(NULL, &r, why, sizeof why);
    TT_CHECK(rt == NULL);
    CHECK_HAS(why, both);
    unset_all();
}

static void test_env(void) {
    expect_env_refused("TENURE_GCCompactMode", "3", "0, 1 or 2");
    expect_env_refused("TENURE_GCRegionSize", "1000", "power of two");
    expect_env_refused("TENURE_GCConservativeStack", "2", "0 or 1");
    expect_env_refused("TENURE_GCgen0size", "8x", "not a valid uint64_t");
    expect_env_refused("TENURE_GCStressGeneration", "abc", "not a valid int32_t");
    expect_env_refused("TENURE_GCFinalizeMode", "4294967296", "not a valid uint32_t");
    expect_env_refused("TENURE_GCHeapHardLimit", "1m", "at least 3 regions");
    /* tenure_config_from_env: refused values are printed, valid neighbours applied */
    unset_all();
    TT_CHECK(setenv("TENURE_GCgen0size", "12q", 1) == 0);
    TT_CHECK(setenv("TENURE_GCStress", "-", 1) == 0);
    TT_CHECK(setenv("TENURE_GCLOHThreshold", "4k", 1) == 0);
    tenure_config c;
    tenure_config_init(&c);
    capture_begin();
    tenure_result r = tenure_config_from_env(&c);
    const char *err = capture_end();
    TT_CHECK_RESULT(r, TENURE_INVALID_ARGUMENT);
    CHECK_HAS(err, "TENURE_GCgen0size=12q");
    CHECK_HAS(err, "TENURE_GCStress=-");
    TT_CHECK(c.GCLOHThreshold == 4096 && c.GCgen0size == 0 && c.GCStress == 0);
    /* a valid environment still works, and says nothing */
    unset_all();
    TT_CHECK(setenv("TENURE_GCCompactMode", "1", 1) == 0);
    capture_begin();
    tenure_runtime *rt = tenure_create(NULL, &r);
    err = capture_end();
    TT_CHECK(rt != NULL && r == TENURE_OK && err[0] == '\0');
    tenure_destroy(rt);
    unset_all();
}

/* ---- C ---- */

static void test_hard_limit(void) {
    tenure_config c;
    tenure_config_init(&c);
    c.GCConservativeStack = 0;
    c.GCRegionSize = 256u << 10;
    c.GCHeapHardLimit = 2 * c.GCRegionSize;
    expect_refused(&c, (const char *const[]){"GCHeapHardLimit=524288", "at least 3 regions", NULL});
    c.GCHeapHardLimit = 3 * c.GCRegionSize - 1;
    expect_refused(&c, (const char *const[]){"GCHeapHardLimit=786431", NULL});
    c.GCHeapHardLimit = 3 * c.GCRegionSize; /* the smallest accepted */
    char why[256];
    TT_CHECK_RESULT(tenure_config_check(&c, why, sizeof why), TENURE_OK);
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(&c, &log);
    const tenure_type *node = tt_register_node(rt);
    tt_node *head = NULL;
    TENURE_FRAME(rt, f, head);
    size_t n = (64u << 20) / sizeof(tt_node);
    for (size_t i = 1; i <= n; i++) {
        tt_node *x = tt_node_new(rt, node, i); /* fatal hook: a NOMEM fails the test */
        tenure_write_ref(rt, x, &x->a, i % 500 ? head : NULL);
        tt_node_seal(x);
        head = x;
    }
    tenure_stats s = tt_stats(rt);
    printf("  GCHeapHardLimit = 3 regions of 256 KiB: %zu allocations, %" PRIu64 " GCs, %" PRIu64 " KiB committed\n", n,
           s.gc_count, s.committed_bytes >> 10);
    TT_CHECK(s.gc_count < n / 100, "%" PRIu64 " GCs for %zu allocations", s.gc_count, n);
    TT_CHECK(s.committed_bytes <= c.GCHeapHardLimit);
    TENURE_FRAME_POP(rt, f);
    tenure_destroy(rt);
}

/* ---- D ---- */

#ifndef TT_SANITIZED
static uint64_t vm_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    TT_CHECK(f != NULL && fscanf(f, "%lu", &pages) == 1);
    fclose(f);
    return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* In a child limited to `limit` bytes of address space: create with `range` (0: default);
 * exit 0 if the outcome and the reason are as expected. */
static void limited_child(uint64_t limit, uint64_t range, int expect_ok, const char *const *parts) {
    alarm(60);
    struct rlimit rl = {limit, limit};
    TT_CHECK(setrlimit(RLIMIT_AS, &rl) == 0);
    tenure_config c;
    tenure_config_init(&c);
    if (range)
        c.GCRegionRange = range;
    char why[512] = "";
    tenure_result r = TENURE_OK;
    tenure_runtime *rt = tenure_create_ex(&c, &r, why, sizeof why);
    if (expect_ok) {
        TT_CHECK(rt != NULL, "limit %" PRIu64 " MiB: %s", limit >> 20, why);
        const tenure_type *bytes = tt_register_bytes(rt);
        for (int i = 0; i < 2000; i++)
            TT_CHECK(tenure_alloc_array(rt, bytes, 10000) != NULL);
        printf("    limit %" PRIu64 " MiB, default GCRegionRange: created and allocated 20 MB\n", limit >> 20);
        tenure_destroy(rt);
    } else {
        TT_CHECK(rt == NULL && r == TENURE_NOMEM, "limit %" PRIu64 " MiB: result %d", limit >> 20, (int)r);
        printf("    limit %" PRIu64 " MiB: %s\n", limit >> 20, why);
        for (const char *const *p = parts; *p; p++)
            CHECK_HAS(why, *p);
    }
    fflush(stdout);
    _exit(0);
}

static void run_limited(uint64_t limit, uint64_t range, int expect_ok, const char *const *parts) {
    fflush(stdout);
    pid_t pid = fork();
    TT_CHECK(pid >= 0);
    if (pid == 0)
        limited_child(limit, range, expect_ok, parts);
    int status = 0;
    TT_CHECK(waitpid(pid, &status, 0) == pid);
    TT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the limited child failed (status 0x%x)", status);
}

#endif

static void test_address_space_limit(void) {
#ifdef TT_SANITIZED
    printf("  D: skipped (the sanitizer's shadow memory needs an unlimited address space)\n");
#else
    uint64_t eight = (uint64_t)8 << 30;
    run_limited(eight, 0, 1, NULL);
    run_limited(eight, (uint64_t)16 << 30, 0,
                (const char *const[]){"GCRegionRange=16 GiB", "RLIMIT_AS", "8 GiB", NULL});
    uint64_t small = vm_bytes() + (64u << 20);
    run_limited(small, 0, 0,
                (const char *const[]){"GCRegionRange=32 GiB", "retried down to 256 MiB", "RLIMIT_AS", NULL});
#endif
}

/* ---- E: pthread_create fails when told to ---- */

static int fail_thread_creation;

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg) {
    typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    static create_fn real;
    if (__atomic_load_n(&fail_thread_creation, __ATOMIC_RELAXED))
        return EAGAIN;
    if (!real)
        real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    return real(thread, attr, start, arg);
}

static void test_thread_start(void) {
    tenure_config c;
    tenure_config_init(&c);
    c.GCFinalizeMode = 0;
    char why[512];
    tenure_result r = TENURE_OK;
    fail_thread_creation = 1;
    tenure_runtime *rt = tenure_create_ex(&c, &r, why, sizeof why);
    capture_begin();
    tenure_runtime *rt2 = tenure_create(&c, &r);
    const char *err = capture_end();
    fail_thread_creation = 0;
    TT_CHECK(rt == NULL && rt2 == NULL && r == TENURE_OS, "result %d", (int)r);
    printf("  refused: %s\n", why);
    CHECK_HAS(why, "GCFinalizeMode=0");
    CHECK_HAS(why, strerror(EAGAIN));
    CHECK_HAS(err, "GCFinalizeMode=0");
    /* and it works again once threads can start; mode 1 never needed one */
    rt = tenure_create(&c, &r);
    TT_CHECK(rt != NULL);
    tenure_destroy(rt);
}

/* ---- F: after fork(), the finalizer thread cannot be restarted in the child ---- */

typedef struct fin_obj {
    tenure_header header;
    long id;
} fin_obj;

static int finalized;

static void count_finalize(tenure_runtime *rt, void *obj) {
    (void)rt, (void)obj;
    finalized++;
}

static void test_fork_without_threads(void) {
    tenure_config c;
    tenure_config_init(&c);
    c.GCFinalizeMode = 0;
    c.GCConservativeStack = 0;
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(&c, &log);
    const tenure_type *t = tt_register_finalizable(rt, "fin_obj", sizeof(fin_obj), count_finalize);
    fflush(stdout);
    fail_thread_creation = 1;
    capture_begin();
    pid_t pid = fork();
    TT_CHECK(pid >= 0);
    if (pid == 0) {
        const char *err = capture_end();
        alarm(30);
#ifndef TT_TSAN
        CHECK_HAS(err, "finalizer thread could not be restarted");
#else
        (void)err;
#endif
        for (int i = 0; i < 20; i++)
            TT_CHECK(tenure_alloc(rt, t) != NULL);
        TT_CHECK_RESULT(tenure_wait_for_pending_finalizers(rt), TENURE_OK);
        TT_CHECK(finalized == 20, "%d of 20 finalizers ran in the child", finalized);
        tenure_destroy(rt);
        fflush(stdout);
        _exit(0);
    }
    capture_end();
    fail_thread_creation = 0;
    int status = 0;
    TT_CHECK(waitpid(pid, &status, 0) == pid);
    TT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (status 0x%x)", status);
    tenure_destroy(rt);
}

int main(void) {
    tt_rng_init("create_errors");
    double t0 = tt_now();
    unset_all(); /* the _stress settings of the suite's environment would change nothing here */
    test_config();
    printf("  A: invalid configs refused with the option, the value and the rule\n");
    test_env();
    printf("  B: invalid environment values refused, naming the variable\n");
    test_hard_limit();
    printf("  C: GCHeapHardLimit below 3 regions refused, 3 regions work\n");
    test_address_space_limit();
    printf("  D: address-space limits\n");
    test_thread_start();
    printf("  E: a finalizer thread that cannot start\n");
    test_fork_without_threads();
    printf("  F: a fork whose child cannot restart the finalizer thread: finalizers run on the waiting thread\n");
    return tt_finish("create_errors", t0);
}
