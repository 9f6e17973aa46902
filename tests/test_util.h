/*
 * test_util.h - helpers shared by the tenure tests (header only).
 *
 *   TT_CHECK(cond, fmt, ...)   assertion: prints file:line, the condition and a message, exits 1
 *   tt_rng_*                   seeded PRNG; the seed comes from TENURE_TEST_SEED or the clock and
 *                              is always printed so that a failure can be replayed
 *   tt_errlog / tt_hook        an error hook that records the last error (optionally fatal)
 *   tt_scale / tt_scaled       workload size: TENURE_TEST_SCALE, or 0.1 when TENURE_GCStress is set
 *   tt_config                  defaults + TENURE_* environment (so that the _stress variants apply)
 *   tt_node                    a two-reference node carrying an id and a checksum
 *   tt_run_child / tt_run_case a function in a timed child: its stderr kept / a whole test case
 *                              with its output, passed or failed (hung, crashed, exit status)
 */
#ifndef TENURE_TEST_UTIL_H
#define TENURE_TEST_UTIL_H

/* clock_gettime, setenv, getpid under -std=c11 (include this header first) */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "tenure.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------
 * Assertions
 * ---------------------------------------------------------------------------------------- */
/* fmt always begins with one space (see TT_CHECK), so that it is never empty. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5), noreturn))
#endif
static inline void
tt_fail(const char *file, int line, const char *cond, const char *fmt, ...) {
    fflush(stdout);
    fprintf(stderr, "%s:%d: CHECK FAILED: %s", file, line, cond);
    if (fmt != NULL && fmt[0] != '\0' && fmt[1] != '\0') {
        va_list ap;
        va_start(ap, fmt);
        fputc(':', stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    fflush(stderr);
    exit(1);
}

/* Soft failures: reported, counted, and the test goes on; tt_finish() makes the exit code. */
static int tt_failures;
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static inline void
tt_soft_fail(const char *file, int line, const char *cond, const char *fmt, ...) {
    fflush(stdout);
    fprintf(stderr, "%s:%d: CHECK FAILED (continuing): %s", file, line, cond);
    if (fmt != NULL && fmt[0] != '\0' && fmt[1] != '\0') {
        va_list ap;
        va_start(ap, fmt);
        fputc(':', stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    fflush(stderr);
    tt_failures++;
}

/* TT_CHECK(cond) or TT_CHECK(cond, "format", args...): fatal.
 * TT_EXPECT(cond, ...): the same, but the test goes on (for checks after which it is safe). */
#define TT_CHECK(cond, ...)                                      \
    do {                                                         \
        if (!(cond))                                             \
            tt_fail(__FILE__, __LINE__, #cond, " " __VA_ARGS__); \
    } while (0)
#define TT_EXPECT(cond, ...)                                          \
    do {                                                              \
        if (!(cond))                                                  \
            tt_soft_fail(__FILE__, __LINE__, #cond, " " __VA_ARGS__); \
    } while (0)

/* The exit code of main: 1 if any TT_EXPECT failed. */
static inline int tt_finish(const char *test_name, double t0) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double secs = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 - t0;
    if (tt_failures != 0) {
        printf("%s: FAILED (%d failed checks, %.2f s)\n", test_name, tt_failures, secs);
        return 1;
    }
    printf("%s: OK (%.2f s)\n", test_name, secs);
    return 0;
}

#define TT_CHECK_EQ_U64(a, b)                                                                    \
    do {                                                                                         \
        uint64_t tt_a_ = (uint64_t)(a), tt_b_ = (uint64_t)(b);                                   \
        if (tt_a_ != tt_b_)                                                                      \
            tt_fail(__FILE__, __LINE__, #a " == " #b, " %" PRIu64 " != %" PRIu64, tt_a_, tt_b_); \
    } while (0)
#define TT_CHECK_RESULT(expr, expected)                                                                       \
    do {                                                                                                      \
        tenure_result tt_r_ = (expr), tt_e_ = (expected);                                                     \
        if (tt_r_ != tt_e_)                                                                                   \
            tt_fail(__FILE__, __LINE__, #expr " == " #expected, " got %d (%s), expected %d (%s)", (int)tt_r_, \
                    tenure_strerror(tt_r_), (int)tt_e_, tenure_strerror(tt_e_));                              \
    } while (0)

/* ------------------------------------------------------------------------------------------
 * Time and workload scale
 * ---------------------------------------------------------------------------------------- */
static inline double tt_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int tt_stress_mode(void) {
    const char *s = getenv("TENURE_GCStress");
    return s != NULL && strtoul(s, NULL, 0) != 0;
}

/* Workload scale factor: TENURE_TEST_SCALE if set, 0.1 under GCStress, else 1. */
static inline double tt_scale(void) {
    const char *s = getenv("TENURE_TEST_SCALE");
    if (s != NULL && s[0] != '\0') {
        double d = strtod(s, NULL);
        if (d > 0)
            return d;
    }
    return tt_stress_mode() ? 0.1 : 1.0;
}

/* n scaled, at least `min`. */
static inline size_t tt_scaled(size_t n, size_t min) {
    double d = (double)n * tt_scale();
    size_t r = (size_t)d;
    return r < min ? min : r;
}

/* ------------------------------------------------------------------------------------------
 * PRNG (splitmix64), seeded from TENURE_TEST_SEED or the clock; the seed is printed.
 * ---------------------------------------------------------------------------------------- */
static uint64_t tt_rng_state;
static uint64_t tt_rng_seed_value;

static inline uint64_t tt_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t tt_rng_init(const char *test_name) {
    const char *s = getenv("TENURE_TEST_SEED");
    uint64_t seed;
    if (s != NULL && s[0] != '\0') {
        seed = strtoull(s, NULL, 0);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = tt_mix64((uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32));
        seed &= 0xffffffffffffull; /* short enough to type */
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* output up to a crash is kept */
    tt_rng_seed_value = seed;
    tt_rng_state = seed;
    printf("%s: seed %" PRIu64 " (replay with TENURE_TEST_SEED=%" PRIu64 ")\n", test_name, seed, seed);
    fflush(stdout);
    return seed;
}

static inline uint64_t tt_rand(void) {
    tt_rng_state += 0x9e3779b97f4a7c15ull;
    return tt_mix64(tt_rng_state);
}
/* Uniform in [0, n) (n > 0). */
static inline uint64_t tt_rand_below(uint64_t n) { return tt_rand() % n; }
/* Uniform in [lo, hi]. */
static inline uint64_t tt_rand_range(uint64_t lo, uint64_t hi) { return lo + tt_rand_below(hi - lo + 1); }

/* ------------------------------------------------------------------------------------------
 * Error hook that records errors. With `fatal` set, any error ends the test.
 * ---------------------------------------------------------------------------------------- */
typedef struct tt_errlog {
    int fatal;
    int count;
    tenure_result last;
    tenure_runtime *last_rt;
    char function[128];
    char message[512];
} tt_errlog;

static inline void tt_hook(tenure_runtime *rt, tenure_result result, const char *function, const char *message,
                           void *context) {
    tt_errlog *log = (tt_errlog *)context;
    log->count++;
    log->last = result;
    log->last_rt = rt;
    snprintf(log->function, sizeof log->function, "%s", function ? function : "(null)");
    snprintf(log->message, sizeof log->message, "%s", message ? message : "(null)");
    if (getenv("TENURE_TEST_VERBOSE") != NULL || log->fatal) {
        fprintf(stderr, "  [hook] %s: %s (%d %s): %s\n", log->function, log->fatal ? "UNEXPECTED ERROR" : "error",
                (int)result, tenure_strerror(result), log->message);
    }
    if (log->fatal) {
        fflush(stdout);
        fprintf(stderr, "unexpected error reported through the error hook\n");
        exit(1);
    }
}

static inline void tt_errlog_reset(tt_errlog *log) {
    int fatal = log->fatal;
    memset(log, 0, sizeof *log);
    log->fatal = fatal;
}

/* ------------------------------------------------------------------------------------------
 * Instances
 * ---------------------------------------------------------------------------------------- */

/* Defaults plus the TENURE_* environment (the _stress variants set HeapVerify and GCStress). */
static inline void tt_config(tenure_config *cfg) {
    tenure_config_init(cfg);
    /* The tests check exact reclamation, which stale words on the C stack would spoil: they
     * run precise unless the environment says otherwise (test_conservative turns it on). */
    cfg->GCConservativeStack = 0;
    tenure_result r = tenure_config_from_env(cfg);
    TT_CHECK(r == TENURE_OK, "tenure_config_from_env: %s", tenure_strerror(r));
}

/* The allocation heaps of an instance created from cfg (heap/alloc.c "allocation heaps"): 1
 * under workstation GC, else GCHeapCount, or about one per CPU (the CPUs online: the process
 * may be allowed fewer). gen0 budgets (GCgen0size) are per heap: a test that means a total
 * divides by this. */
static inline unsigned tt_heaps(const tenure_config *cfg) {
    if (!cfg->gcServer)
        return 1;
    if (cfg->GCHeapCount)
        return (unsigned)cfg->GCHeapCount;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > 64 ? 64 : (unsigned)cpus;
}

/* Create an instance from cfg (NULL: tt_config) and install `log` as its hook. */
static inline tenure_runtime *tt_create(const tenure_config *cfg, tt_errlog *log) {
    tenure_config local;
    if (cfg == NULL) {
        tt_config(&local);
        cfg = &local;
    }
    tenure_result r = TENURE_NOMEM;
    tenure_runtime *rt = tenure_create(cfg, &r);
    TT_CHECK(rt != NULL, "tenure_create failed: %d %s", (int)r, tenure_strerror(r));
    TT_CHECK(r == TENURE_OK, "tenure_create returned an instance but result %d", (int)r);
    if (log != NULL)
        tenure_set_error_hook(rt, tt_hook, log);
    return rt;
}

static inline tenure_stats tt_stats(tenure_runtime *rt) {
    tenure_stats s;
    memset(&s, 0xab, sizeof s);
    tenure_get_stats(rt, &s);
    return s;
}

static inline void tt_collect(tenure_runtime *rt, int gen, unsigned flags) {
    tenure_result r = tenure_collect(rt, gen, flags);
    TT_CHECK(r == TENURE_OK, "tenure_collect(%d, %u): %d %s", gen, flags, (int)r, tenure_strerror(r));
}

/* ------------------------------------------------------------------------------------------
 * A node with two references, an id and a checksum of its id and the ids it references.
 * ---------------------------------------------------------------------------------------- */
typedef struct tt_node {
    tenure_header header;
    struct tt_node *a, *b;
    uint64_t id;
    uint64_t check;
} tt_node;

static inline uint64_t tt_node_sum(const tt_node *n) {
    uint64_t ida = n->a ? n->a->id : 0x5151515151ull;
    uint64_t idb = n->b ? n->b->id : 0x7373737373ull;
    return tt_mix64(n->id ^ tt_mix64(ida + 0x1234567ull) ^ (tt_mix64(idb) << 1));
}
static inline void tt_node_seal(tt_node *n) { n->check = tt_node_sum(n); }

static inline const tenure_type *tt_register_node(tenure_runtime *rt) {
    static const size_t offs[] = {offsetof(tt_node, a), offsetof(tt_node, b)};
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = "tt_node";
    d.size = sizeof(tt_node);
    d.ref_offsets = offs;
    d.ref_count = 2;
    const tenure_type *t = tenure_type_register(rt, &d);
    TT_CHECK(t != NULL, "registering tt_node failed");
    return t;
}

/* A type of `size` bytes without references whose objects are finalized by `finalize`. */
static inline const tenure_type *tt_register_finalizable(tenure_runtime *rt, const char *name, size_t size,
                                                         void (*finalize)(tenure_runtime *, void *)) {
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    d.flags = TENURE_TYPE_FINALIZABLE | TENURE_TYPE_NO_REFS;
    d.finalize = finalize;
    const tenure_type *t = tenure_type_register(rt, &d);
    TT_CHECK(t != NULL, "registering %s failed", name);
    return t;
}

/* An array type of `elem_size`-byte elements without references. */
static inline const tenure_type *tt_register_plain_array(tenure_runtime *rt, const char *name, size_t elem_size) {
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.elem_size = elem_size;
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS;
    const tenure_type *t = tenure_type_register(rt, &d);
    TT_CHECK(t != NULL, "registering %s failed", name);
    return t;
}

/* An array type whose elements are structs of elem_size bytes with references at offs. */
static inline const tenure_type *tt_register_struct_array(tenure_runtime *rt, const char *name, size_t elem_size,
                                                          const size_t *offs, size_t count) {
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = sizeof(tenure_array_header);
    d.elem_size = elem_size;
    d.elem_ref_offsets = offs;
    d.elem_ref_count = count;
    d.flags = TENURE_TYPE_ARRAY;
    const tenure_type *t = tenure_type_register(rt, &d);
    TT_CHECK(t != NULL, "registering %s failed", name);
    return t;
}

/* Allocate a node with `id`, sealed, no references. The result is NOT rooted. */
static inline tt_node *tt_node_new(tenure_runtime *rt, const tenure_type *t, uint64_t id) {
    tt_node *n = (tt_node *)tenure_alloc(rt, t);
    TT_CHECK(n != NULL, "tenure_alloc(tt_node) failed: %s", tenure_strerror(tenure_last_error(rt)));
    TT_CHECK(n->a == NULL && n->b == NULL && n->id == 0 && n->check == 0, "object not zeroed");
    n->id = id;
    tt_node_seal(n);
    return n;
}

/* Check that p is a live tt_node of rt with the expected id and a valid checksum. */
#define TT_CHECK_NODE(rt, t, p, expected_id)                                                                        \
    do {                                                                                                            \
        const tt_node *tt_n_ = (const tt_node *)(p);                                                                \
        TT_CHECK(tt_n_ != NULL, "node %" PRIu64 " is missing", (uint64_t)(expected_id));                            \
        TT_CHECK(tenure_is_object((rt), tt_n_), "node %" PRIu64 " at %p is not an object", (uint64_t)(expected_id), \
                 (const void *)tt_n_);                                                                              \
        TT_CHECK(tenure_object_type((rt), tt_n_) == (t), "node %" PRIu64 ": wrong type", (uint64_t)(expected_id));  \
        TT_CHECK(tt_n_->id == (uint64_t)(expected_id), "node id %" PRIu64 ", expected %" PRIu64, tt_n_->id,         \
                 (uint64_t)(expected_id));                                                                          \
        TT_CHECK(tt_n_->check == tt_node_sum(tt_n_), "node %" PRIu64 ": bad checksum", tt_n_->id);                  \
    } while (0)

/* Common array types. */
static inline const tenure_type *tt_register_ref_array(tenure_runtime *rt) {
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = "tt_ref_array";
    d.size = sizeof(tenure_array_header);
    d.elem_size = sizeof(void *);
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_REF_ARRAY;
    const tenure_type *t = tenure_type_register(rt, &d);
    TT_CHECK(t != NULL, "registering tt_ref_array failed");
    return t;
}

static inline const tenure_type *tt_register_bytes(tenure_runtime *rt) {
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = "tt_bytes";
    d.size = sizeof(tenure_array_header);
    d.elem_size = 1;
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS;
    const tenure_type *t = tenure_type_register(rt, &d);
    TT_CHECK(t != NULL, "registering tt_bytes failed");
    return t;
}

static inline void **tt_refs(void *array) { return (void **)tenure_array_data(array); }

/* Run fn in a child (killed by SIGALRM after secs seconds; 0: no limit). Its stderr goes into
 * err (cap bytes, NUL-terminated), or to this process's stderr when err is NULL. Returns its
 * wait status. For the cases that must print a message, or must not hang, or crash on purpose. */
static inline int tt_run_child(void (*fn)(void), unsigned secs, char *err, size_t cap) {
    int fds[2];
    TT_CHECK(pipe(fds) == 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    TT_CHECK(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        if (secs)
            alarm(secs);
        fn();
        fflush(stdout);
        fflush(stderr);
        _exit(0);
    }
    close(fds[1]);
    size_t n = 0;
    char buf[1024];
    for (ssize_t k; (k = read(fds[0], buf, sizeof buf)) > 0;) {
        for (ssize_t i = 0; i < k && err && n + 1 < cap; i++)
            err[n++] = buf[i];
        if (!err) /* pass it on */
            TT_CHECK(write(2, buf, (size_t)k) == k);
    }
    if (err)
        err[n] = '\0';
    close(fds[0]);
    int status = 0;
    TT_CHECK(waitpid(pid, &status, 0) == pid);
    return status;
}

/* Run fn(arg) as the test case `name` in a child whose stdout and stderr are kept (killed by
 * SIGALRM after secs seconds: a hang or deadlock ends there); true if it exited 0 (a child
 * ends with _exit(tt_failures != 0)). A failure says why (hung, crashed, exit status) and
 * prints the child's output; show_output prints it always. */
static inline bool tt_run_case(const char *name, void (*fn)(void *), void *arg, unsigned secs, bool show_output) {
    fflush(stdout);
    fflush(stderr);
    FILE *out = tmpfile();
    TT_CHECK(out != NULL);
    pid_t pid = fork();
    TT_CHECK(pid >= 0);
    if (pid == 0) {
        dup2(fileno(out), 1);
        dup2(fileno(out), 2);
        alarm(secs);
        fn(arg);
        fflush(stdout);
        fflush(stderr);
        _exit(tt_failures ? 1 : 0);
    }
    int status = 0;
    TT_CHECK(waitpid(pid, &status, 0) == pid);
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok && WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        printf("%s: FAILED: hung (no end after %u s)\n", name, secs);
    else if (!ok && WIFSIGNALED(status))
        printf("%s: FAILED: crashed (signal %d)\n", name, WTERMSIG(status));
    else if (!ok)
        printf("%s: FAILED (exit %d)\n", name, WEXITSTATUS(status));
    if (!ok || show_output) {
        char buf[4096];
        size_t n;
        rewind(out);
        while ((n = fread(buf, 1, sizeof buf, out)) > 0)
            fwrite(buf, 1, n, stdout);
    }
    fclose(out);
    return ok;
}

/* How many times `what` occurs in text (not overlapping). */
static inline size_t tt_count_of(const char *text, const char *what) {
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

#endif /* TENURE_TEST_UTIL_H */
