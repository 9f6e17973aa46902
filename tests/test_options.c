/*
 * options: the options table.
 *
 *  - tenure_option_count / tenure_option_get list every row of TENURE_OPTIONS in order (name,
 *    C type, description as in the header; a default text), NULL past the end;
 *  - tenure_config_init gives the table's defaults;
 *  - tenure_config_from_env parses TENURE_<name> (sizes with k/m/g suffixes, signed values),
 *    leaves options whose variable is unset alone, and rejects garbage with
 *    TENURE_INVALID_ARGUMENT leaving that option unchanged while applying the valid ones;
 *  - TENURE_DEBUG=1 sets GCConservativeStack=0 GCStress=1 GCCompactMode=1 HeapVerify=1
 *    GCPoisonFreed=1, under the TENURE_<option> variables; anything but 0 or 1 is refused;
 *  - tenure_create(NULL) applies the environment;
 *  - the rule for a given config: the options' variables (TENURE_DEBUG too) are not applied to
 *    it, and are named; the observers (TENURE_TRACE) apply to every instance;
 *  - the first tenure_create of a process names on stderr each TENURE_ variable nothing reads,
 *    with the nearest known name, and the option variables a given config does not apply, and
 *    says what TENURE_DEBUG=1 set;
 *  - options take effect: GCStress (a GC every N allocations), GCStressGeneration,
 *    GCgen0size / GCgen0MaxBudget (allocation-triggered GCs), HeapVerify.
 */
#include "test_util.h"
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct row {
    const char *name, *type, *desc;
} rows[] = {
#define ROW(name, ctype, def, desc) {#name, #ctype, desc},
    TENURE_OPTIONS(ROW)
#undef ROW
};
#define NROWS (sizeof rows / sizeof rows[0])

/* The name of the first option that differs, or NULL. */
static const char *config_diff(const tenure_config *a, const tenure_config *b) {
#define CMP(name, ctype, def, desc) \
    if (a->name != b->name)         \
        return #name;
    TENURE_OPTIONS(CMP)
#undef CMP
    return NULL;
}

static void unset_all(void) {
    char var[128];
    for (size_t i = 0; i < NROWS; i++) {
        snprintf(var, sizeof var, "TENURE_%s", rows[i].name);
        unsetenv(var);
    }
    unsetenv("TENURE_DEBUG");
}

static void test_table(void) {
    TT_CHECK(tenure_option_count() == NROWS, "tenure_option_count %zu, the table has %zu", tenure_option_count(),
             (size_t)NROWS);
    for (size_t i = 0; i < NROWS; i++) {
        const tenure_option_info *o = tenure_option_get(i);
        TT_CHECK(o != NULL, "option %zu", i);
        TT_CHECK(o->name && strcmp(o->name, rows[i].name) == 0, "option %zu is '%s', expected '%s'", i,
                 o->name ? o->name : "(null)", rows[i].name);
        TT_CHECK(o->type && strcmp(o->type, rows[i].type) == 0, "%s: type '%s', expected '%s'", rows[i].name,
                 o->type ? o->type : "(null)", rows[i].type);
        TT_CHECK(o->description && strcmp(o->description, rows[i].desc) == 0, "%s: description differs", rows[i].name);
        TT_CHECK(o->default_text && o->default_text[0] != '\0', "%s: no default text", rows[i].name);
    }
    TT_CHECK(tenure_option_get(NROWS) == NULL);
    TT_CHECK(tenure_option_get(NROWS + 100) == NULL);
    TT_CHECK(tenure_option_get(SIZE_MAX) == NULL);
}

static void test_defaults(void) {
    tenure_config c;
    memset(&c, 0x5a, sizeof c);
    tenure_config_init(&c);
#define CHECK_DEFAULT(name, ctype, def, desc)                                                          \
    TT_CHECK(c.name == (ctype)(def), #name " default %" PRId64 ", expected %" PRId64, (int64_t)c.name, \
             (int64_t)(ctype)(def));
    TENURE_OPTIONS(CHECK_DEFAULT)
#undef CHECK_DEFAULT
    /* spot checks against the documented values */
    TT_CHECK(c.GCRegionSize == 4u << 20 && c.GCLOHThreshold == 85000 && c.GCMarkStackSize == 65536);
    TT_CHECK(c.GCStressGeneration == -1 && c.GCStress == 0 && c.HeapVerify == 0 && c.GCCompactMode == 0);
    TT_CHECK(c.GCRegionRange == (uint64_t)32 << 30);
}

static void test_from_env(void) {
    unset_all();
    tenure_config c, d;
    tenure_config_init(&c);
    tenure_config_init(&d);
    TT_CHECK_RESULT(tenure_config_from_env(&c), TENURE_OK);
    TT_CHECK(config_diff(&c, &d) == NULL, "tenure_config_from_env changed %s with no variable set",
             config_diff(&c, &d));

    struct {
        const char *var, *value;
    } good[] = {
        {"TENURE_GCgen0size", "8m"},        {"TENURE_GCgen1size", "512k"},    {"TENURE_GCRegionRange", "1g"},
        {"TENURE_GCLOHThreshold", "12345"}, {"TENURE_GCCompactMode", "2"},    {"TENURE_GCStressGeneration", "1"},
        {"TENURE_HeapVerify", "1"},         {"TENURE_GCMarkStackSize", "64"}, {"TENURE_GCHeapHardLimit", "3g"},
        {"TENURE_GCStress", "17"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        TT_CHECK(setenv(good[i].var, good[i].value, 1) == 0);
    tenure_config_init(&c);
    TT_CHECK_RESULT(tenure_config_from_env(&c), TENURE_OK);
    TT_CHECK_EQ_U64(c.GCgen0size, 8u << 20);
    TT_CHECK_EQ_U64(c.GCgen1size, 512u << 10);
    TT_CHECK_EQ_U64(c.GCRegionRange, 1u << 30);
    TT_CHECK_EQ_U64(c.GCLOHThreshold, 12345);
    TT_CHECK_EQ_U64(c.GCCompactMode, 2);
    TT_CHECK(c.GCStressGeneration == 1);
    TT_CHECK_EQ_U64(c.HeapVerify, 1);
    TT_CHECK_EQ_U64(c.GCMarkStackSize, 64);
    TT_CHECK_EQ_U64(c.GCHeapHardLimit, (uint64_t)3 << 30);
    TT_CHECK_EQ_U64(c.GCStress, 17);
    /* untouched ones keep their defaults */
    TT_CHECK_EQ_U64(c.GCRegionSize, d.GCRegionSize);
    TT_CHECK_EQ_U64(c.GCRetainRegions, d.GCRetainRegions);
    TT_CHECK_EQ_U64(c.GCgen0MaxBudget, d.GCgen0MaxBudget);
    TT_CHECK(setenv("TENURE_GCStressGeneration", "-1", 1) == 0);
    TT_CHECK(setenv("TENURE_GCgen0size", "65536", 1) == 0);
    TT_CHECK_RESULT(tenure_config_from_env(&c), TENURE_OK);
    TT_CHECK(c.GCStressGeneration == -1, "GCStressGeneration=-1 parsed as %d", (int)c.GCStressGeneration);
    TT_CHECK_EQ_U64(c.GCgen0size, 65536);
    unset_all();

    /* garbage: INVALID_ARGUMENT, that option unchanged, a valid neighbour still applied */
    struct {
        const char *var, *value;
    } bad[] = {
        {"TENURE_GCgen0size", "abc"},
        {"TENURE_GCgen0size", "8x"},
        {"TENURE_GCgen0size", "12m3"},
        {"TENURE_GCgen0size", "-5"},
        {"TENURE_GCgen0size", "99999999999999999999999"},
        {"TENURE_GCgen0size", "20000000000g"},
        {"TENURE_GCgen0size", "8 mm"},
        {"TENURE_GCgen0size", "8mib2"},
        {"TENURE_GCgen0size", "8 x"},
        {"TENURE_GCgen0size", "+8m"},
        {"TENURE_GCgen0size", " "},
        {"TENURE_GCgen0size", "8pb"},
        {"TENURE_GCCompactMode", "4294967296"},
        {"TENURE_GCCompactMode", "two"},
        {"TENURE_GCStressGeneration", "abc"},
        {"TENURE_GCStressGeneration", "99999999999"},
        {"TENURE_HeapVerify", "1.5"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unset_all();
        TT_CHECK(setenv(bad[i].var, bad[i].value, 1) == 0);
        TT_CHECK(setenv("TENURE_GCLOHThreshold", "4k", 1) == 0);
        tenure_config_init(&c);
        tenure_result r = tenure_config_from_env(&c);
        TT_CHECK(r == TENURE_INVALID_ARGUMENT, "%s=%s: result %d (%s)", bad[i].var, bad[i].value, (int)r,
                 tenure_strerror(r));
        TT_CHECK(c.GCLOHThreshold == 4096, "%s=%s: the valid TENURE_GCLOHThreshold=4k was not applied", bad[i].var,
                 bad[i].value);
        c.GCLOHThreshold = d.GCLOHThreshold;
        const char *changed = config_diff(&c, &d);
        TT_CHECK(changed == NULL, "%s=%s changed option %s", bad[i].var, bad[i].value, changed);
    }
    unset_all();
}

/* TENURE_DEBUG (issue 38): its settings, under the option variables; 0, empty or unset: none. */
static void test_debug_env(void) {
    tenure_config c, d;
    tenure_config_init(&d);
    unset_all();
    TT_CHECK(setenv("TENURE_DEBUG", "1", 1) == 0);
    tenure_config_init(&c);
    TT_CHECK_RESULT(tenure_config_from_env(&c), TENURE_OK);
    TT_CHECK(c.GCConservativeStack == 0 && c.GCStress == 1 && c.GCCompactMode == 1 && c.HeapVerify == 1 &&
                 c.GCPoisonFreed == 1,
             "TENURE_DEBUG=1: GCConservativeStack=%u GCStress=%u GCCompactMode=%u HeapVerify=%u GCPoisonFreed=%u",
             (unsigned)c.GCConservativeStack, (unsigned)c.GCStress, (unsigned)c.GCCompactMode, (unsigned)c.HeapVerify,
             (unsigned)c.GCPoisonFreed);
    TT_CHECK(setenv("TENURE_GCStress", "100", 1) == 0); /* an option variable beside it wins */
    tenure_config_init(&c);
    TT_CHECK_RESULT(tenure_config_from_env(&c), TENURE_OK);
    TT_CHECK(c.GCStress == 100 && c.HeapVerify == 1 && c.GCPoisonFreed == 1, "TENURE_GCStress=100 beside it");
    static const char *const off[] = {"0", "", " 0 "}, *const bad[] = {"2", "yes", "on", "-1"};
    for (size_t i = 0; i < sizeof off / sizeof *off; i++) {
        unset_all();
        TT_CHECK(setenv("TENURE_DEBUG", off[i], 1) == 0);
        tenure_config_init(&c);
        TT_CHECK_RESULT(tenure_config_from_env(&c), TENURE_OK);
        TT_CHECK(config_diff(&c, &d) == NULL, "TENURE_DEBUG='%s' changed %s", off[i], config_diff(&c, &d));
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        unset_all();
        TT_CHECK(setenv("TENURE_DEBUG", bad[i], 1) == 0);
        tenure_config_init(&c);
        TT_CHECK_RESULT(tenure_config_from_env(&c), TENURE_INVALID_ARGUMENT);
        TT_CHECK(config_diff(&c, &d) == NULL, "TENURE_DEBUG=%s changed %s", bad[i], config_diff(&c, &d));
        tenure_result r = TENURE_OK;
        char why[256] = "";
        TT_CHECK(tenure_create_ex(NULL, &r, why, sizeof why) == NULL && r == TENURE_INVALID_ARGUMENT);
        TT_CHECK(strstr(why, "TENURE_DEBUG=") && strstr(why, "must be 0 or 1"), "TENURE_DEBUG=%s: \"%s\"", bad[i], why);
    }
    unset_all();
}

/* The rule for a config given to tenure_create: the options' variables do not change it (here
 * TENURE_GCStress=3 makes no GC), the observers apply all the same (TENURE_TRACE writes its
 * trace). */
static void test_config_rule(void) {
    unset_all();
    char dir[] = "/tmp/tenure-options-XXXXXX";
    TT_CHECK(mkdtemp(dir) != NULL);
    TT_CHECK(setenv("TENURE_GCStress", "3", 1) == 0 && setenv("TENURE_TRACE", dir, 1) == 0);
    tenure_config c;
    tenure_config_init(&c);
    tenure_runtime *rt = tenure_create(&c, NULL);
    unsetenv("TENURE_TRACE");
    TT_CHECK(rt != NULL);
    const tenure_type *bytes = tt_register_bytes(rt);
    for (int i = 0; i < 30; i++)
        TT_CHECK(tenure_alloc_array(rt, bytes, 16) != NULL);
    TT_CHECK(tt_stats(rt).gc_count == 0, "TENURE_GCStress=3 applied to a given config: %llu GCs",
             (unsigned long long)tt_stats(rt).gc_count);
    tenure_destroy(rt);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -d %s/tenure-%ld-* >/dev/null 2>&1", dir, (long)getpid());
    TT_CHECK(system(cmd) == 0, "TENURE_TRACE did not trace an instance created from a given config (%s)", dir);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    TT_CHECK(system(cmd) == 0);
    unset_all();
}

/* Issue 33: one rule for the text of a size, whatever the spaces and the suffix's spelling
 * (surrounding spaces trimmed, spaces before the suffix allowed, suffixes of any case: k, kb,
 * kib, m..., g..., t...); the same value from every spelling. */
static void test_size_spellings(void) {
    static const char *const spellings[] = {"8m",      "8M",     "8mb",     "8MB",       "8MiB",
                                            "8mib",    " 8m",    "8m ",     "8 m",       "8 MiB",
                                            "\t8MB\t", " 8 mb ", "8388608", " 8388608 ", "0x800000"};
    for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++) {
        unset_all();
        TT_CHECK(setenv("TENURE_GCgen0size", spellings[i], 1) == 0);
        tenure_config c;
        tenure_config_init(&c);
        tenure_result r = tenure_config_from_env(&c);
        TT_CHECK(r == TENURE_OK && c.GCgen0size == (8u << 20), "TENURE_GCgen0size=\"%s\": %s, %" PRIu64, spellings[i],
                 tenure_strerror(r), c.GCgen0size);
    }
    static const struct {
        const char *text;
        uint64_t value;
    } units[] = {{"3k", 3u << 10},
                 {"3KiB", 3u << 10},
                 {"3 g", (uint64_t)3 << 30},
                 {"3Gb", (uint64_t)3 << 30},
                 {"4 TiB", (uint64_t)4 << 40},
                 {"12b", 12},
                 {"12 B", 12}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        unset_all();
        TT_CHECK(setenv("TENURE_GCRegionRange", units[i].text, 1) == 0);
        tenure_config c;
        tenure_config_init(&c);
        TT_CHECK(tenure_config_from_env(&c) == TENURE_OK && c.GCRegionRange == units[i].value,
                 "TENURE_GCRegionRange=\"%s\": %" PRIu64, units[i].text, c.GCRegionRange);
    }
    unset_all();
    TT_CHECK(setenv("TENURE_GCStressGeneration", " -1 ", 1) == 0);
    tenure_config c;
    tenure_config_init(&c);
    TT_CHECK(tenure_config_from_env(&c) == TENURE_OK && c.GCStressGeneration == -1);
    unset_all();
}

/* Issue 33: values outside their meaningful range are refused with a reason. */
static void check_refused(const tenure_config *c, const char *want) {
    char why[512];
    TT_CHECK_RESULT(tenure_config_check(c, why, sizeof why), TENURE_INVALID_ARGUMENT);
    TT_CHECK(strstr(why, want) != NULL, "the reason \"%s\" does not say \"%s\"", why, want);
    tenure_result r = TENURE_OK;
    TT_CHECK(tenure_create_ex(c, &r, why, sizeof why) == NULL && r == TENURE_INVALID_ARGUMENT);
}

static void test_ranges(void) {
    unset_all();
    tenure_config c;
    tenure_config_init(&c);
    c.GCgen0size = UINT64_MAX; /* no GC would ever start: the heap grew without bound */
    check_refused(&c, "GCgen0size=18446744073709551615: must be at most GCRegionRange");
    tenure_config_init(&c);
    c.GCgen1size = c.GCRegionRange + 1;
    check_refused(&c, "GCgen1size");
    tenure_config_init(&c);
    c.GCgen0MaxBudget = c.GCRegionRange * 2;
    check_refused(&c, "GCgen0MaxBudget");
    tenure_config_init(&c);
    c.GCgen0size = c.GCRegionRange; /* the largest allowed */
    TT_CHECK_RESULT(tenure_config_check(&c, NULL, 0), TENURE_OK);

    /* 4 TiB of 256 KiB regions: 2^24 regions, whose table took 8.5 s to build; refused at once */
    tenure_config_init(&c);
    c.GCRegionRange = (uint64_t)4 << 40;
    c.GCRegionSize = 256u << 10;
    double t0 = tt_now();
    check_refused(&c, "must hold at most 2^20 regions");
    TT_CHECK(tt_now() - t0 < 1, "refused after %.1f s", tt_now() - t0);
    /* the most regions allowed, 2^20 (256 GiB of 256 KiB regions): created quickly (unless the
     * address space is refused: sanitizers, ulimit -v) */
    c.GCRegionRange = (uint64_t)256 << 30;
    TT_CHECK_RESULT(tenure_config_check(&c, NULL, 0), TENURE_OK);
    t0 = tt_now();
    tenure_result r = TENURE_OK;
    char why[512];
    tenure_runtime *rt = tenure_create_ex(&c, &r, why, sizeof why);
    double took = tt_now() - t0;
    if (!rt) {
        TT_CHECK(r == TENURE_NOMEM, "GCRegionRange=256 GiB: %s", why);
        printf("  GCRegionRange=256 GiB: not reserved here (%s)\n", why);
        return;
    }
    tenure_destroy(rt);
    printf("  GCRegionRange=256 GiB of 256 KiB regions (2^20): created in %.2f s\n", took);
    TT_CHECK(took < 2 * tt_scale() + 2, "tenure_create took %.1f s", took);
}

static void test_create_uses_env(void) {
    unset_all();
    TT_CHECK(setenv("TENURE_GCLOHThreshold", "40000", 1) == 0);
    tenure_result r = TENURE_NOMEM;
    tenure_runtime *rt = tenure_create(NULL, &r);
    TT_CHECK(rt != NULL && r == TENURE_OK);
    const tenure_type *bytes = tt_register_bytes(rt);
    void *a = tenure_alloc_array(rt, bytes, 50000);
    TT_CHECK(a != NULL);
    TT_CHECK(tenure_object_generation(rt, a) == 3, "tenure_create(NULL) ignored TENURE_GCLOHThreshold");
    tenure_destroy(rt);
    /* a given config is used as given: the environment is not applied */
    tenure_config c;
    tenure_config_init(&c);
    rt = tenure_create(&c, &r);
    TT_CHECK(rt != NULL);
    bytes = tt_register_bytes(rt);
    a = tenure_alloc_array(rt, bytes, 50000);
    TT_CHECK(a != NULL && tenure_object_generation(rt, a) == 0, "an explicit config picked up the environment");
    tenure_destroy(rt);
    unset_all();
}

/* What the first tenure_create of a new process writes on stderr with var=value in its
 * environment (and no other TENURE_ option), given a default config or none. */
static void first_create_stderr(const char *var, const char *value, bool with_config, char *out, size_t cap) {
    int fds[2];
    TT_CHECK(pipe(fds) == 0);
    fflush(stderr);
    pid_t pid = fork();
    TT_CHECK(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        unset_all();
        setenv(var, value, 1);
        tenure_config c;
        tenure_config_init(&c);
        tenure_destroy(tenure_create(with_config ? &c : NULL, NULL));
        tenure_destroy(tenure_create(with_config ? &c : NULL, NULL)); /* once per process */
        _exit(0);
    }
    close(fds[1]);
    size_t n = 0;
    for (ssize_t k; n + 1 < cap && (k = read(fds[0], out + n, cap - 1 - n)) > 0;)
        n += (size_t)k;
    out[n] = 0;
    close(fds[0]);
    int status = 0;
    TT_CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}


/* Runs before any instance exists in this process: the check is once per process. */
static void test_env_warnings(void) {
    char err[2048];
    static const struct {
        const char *var, *suggests; /* NULL: no suggestion */
    } cases[] = {
        {"TENURE_GCStres", "did you mean TENURE_GCStress?"},
        {"TENURE_gcstress", "did you mean TENURE_GCStress?"},
        {"TENURE_heapverify", "did you mean TENURE_HeapVerify?"},
        {"TENURE_TRACE_LEVL", "did you mean TENURE_TRACE_LEVEL?"},
        {"TENURE_NOTHING_LIKE_IT", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        first_create_stderr(cases[i].var, "1", false, err, sizeof err);
        TT_CHECK(tt_count_of(err, "is not a variable tenure reads") == 1 &&
                     strncmp(err + 8, cases[i].var, strlen(cases[i].var)) == 0,
                 "%s: not reported once: \"%s\"", cases[i].var, err);
        TT_CHECK(cases[i].suggests ? strstr(err, cases[i].suggests) != NULL : strstr(err, "did you mean") == NULL,
                 "%s: \"%s\"", cases[i].var, err);
    }
    /* known variables and the tools' families say nothing */
    first_create_stderr("TENURE_GCStress", "0", false, err, sizeof err);
    TT_CHECK(err[0] == 0, "TENURE_GCStress reported: %s", err);
    first_create_stderr("TENURE_HEAPPROF_OUT", "x", false, err, sizeof err);
    TT_CHECK(err[0] == 0, "TENURE_HEAPPROF_OUT reported: %s", err);
    /* a given config: the option variables it does not apply are named */
    first_create_stderr("TENURE_GCStress", "500", true, err, sizeof err);
    TT_CHECK(tt_count_of(err, "TENURE_GCStress=500 is not applied") == 1, "given config: \"%s\"", err);
    first_create_stderr("TENURE_GCStress", "0", true, err, sizeof err); /* the config's own value */
    TT_CHECK(err[0] == 0, "TENURE_GCStress=0 with a config that says 0: %s", err);
    first_create_stderr("TENURE_GCStress", "abc", true, err, sizeof err); /* a bad value is not silent either */
    TT_CHECK(tt_count_of(err, "TENURE_GCStress=abc: not a valid uint32_t") == 1 &&
                 tt_count_of(err, "not applied either: tenure_create was given a config") == 1,
             "TENURE_GCStress=abc with a config: \"%s\"", err);
    /* TENURE_DEBUG=1: what it set, said once; with a given config, not applied, said once */
    first_create_stderr("TENURE_DEBUG", "1", false, err, sizeof err);
    TT_CHECK(tt_count_of(err, "tenure: TENURE_DEBUG=1: GCConservativeStack=0 GCStress=1 GCCompactMode=1 "
                              "HeapVerify=1 GCPoisonFreed=1") == 1 &&
                 tt_count_of(err, "\n") == 1,
             "TENURE_DEBUG=1: \"%s\"", err);
    first_create_stderr("TENURE_DEBUG", "1", true, err, sizeof err);
    TT_CHECK(tt_count_of(err, "tenure: TENURE_DEBUG=1 is not applied: tenure_create was given a config") == 1 &&
                 tt_count_of(err, "\n") == 1,
             "TENURE_DEBUG=1 with a config: \"%s\"", err);
}

static tenure_runtime *make(tenure_config *c, tt_errlog *log) { return tt_create(c, log); }

static void test_effects(void) {
    unset_all();
    tt_errlog log = {.fatal = 1};
    tenure_config c;

    /* GCStress=100: a GC every 100 allocations */
    tenure_config_init(&c);
    c.GCStress = 100;
    c.GCgen0size = 64u << 20;
    tenure_runtime *rt = make(&c, &log);
    const tenure_type *node = tt_register_node(rt);
    for (int i = 0; i < 10000; i++)
        TT_CHECK(tenure_alloc(rt, node) != NULL);
    tenure_stats s = tt_stats(rt);
    printf("  GCStress=100: %" PRIu64 " GCs for 10000 allocations\n", s.gc_count);
    TT_CHECK(s.gc_count >= 95 && s.gc_count <= 105, "GCStress=100 gave %" PRIu64 " GCs", s.gc_count);
    tenure_destroy(rt);

    /* GCStressGeneration=2: the forced GCs are full GCs */
    c.GCStressGeneration = 2;
    rt = make(&c, &log);
    node = tt_register_node(rt);
    for (int i = 0; i < 10000; i++)
        TT_CHECK(tenure_alloc(rt, node) != NULL);
    s = tt_stats(rt);
    TT_CHECK(s.gen[2].collections >= 95, "GCStressGeneration=2: %" PRIu64 " gen2 GCs of %" PRIu64, s.gen[2].collections,
             s.gc_count);
    tenure_destroy(rt);
    c.GCStressGeneration = 0;
    rt = make(&c, &log);
    node = tt_register_node(rt);
    for (int i = 0; i < 10000; i++)
        TT_CHECK(tenure_alloc(rt, node) != NULL);
    s = tt_stats(rt);
    TT_CHECK(s.gc_count >= 95 && s.gen[1].collections == 0,
             "GCStressGeneration=0: %" PRIu64 " GCs, %" PRIu64 " condemned gen1", s.gc_count, s.gen[1].collections);
    tenure_destroy(rt);

    /* GCgen0size=1m, GCgen0MaxBudget=2m: 64 MiB of garbage takes at least ~32 GCs */
    tenure_config_init(&c);
    c.GCgen0size = 1u << 20;
    c.GCgen0MaxBudget = 2u << 20;
    rt = make(&c, &log);
    const tenure_type *bytes = tt_register_bytes(rt);
    for (int i = 0; i < 64 * 1024; i++)
        TT_CHECK(tenure_alloc_array(rt, bytes, 1000) != NULL);
    s = tt_stats(rt);
    printf("  GCgen0size=1m GCgen0MaxBudget=2m: %" PRIu64 " GCs for 64 MiB\n", s.gc_count);
    TT_CHECK(s.gc_count >= 25 && s.gc_count <= 80, "%" PRIu64 " GCs", s.gc_count);
    tenure_destroy(rt);

    /* a big gen0 budget: few GCs */
    tenure_config_init(&c);
    c.GCgen0size = 256u << 20;
    c.GCgen0MaxBudget = 256u << 20;
    rt = make(&c, &log);
    bytes = tt_register_bytes(rt);
    for (int i = 0; i < 64 * 1024; i++)
        TT_CHECK(tenure_alloc_array(rt, bytes, 1000) != NULL);
    s = tt_stats(rt);
    TT_CHECK(s.gc_count == 0, "GCgen0size=256m: %" PRIu64 " GCs for 64 MiB", s.gc_count);
    tenure_destroy(rt);

    /* HeapVerify=1: runs (and finds nothing) */
    tenure_config_init(&c);
    c.HeapVerify = 1;
    c.GCgen0size = 1u << 20;
    rt = make(&c, &log);
    node = tt_register_node(rt);
    tt_node *head = NULL;
    TENURE_FRAME(rt, f, head);
    for (uint64_t i = 1; i <= 100000; i++) {
        tt_node *n = tt_node_new(rt, node, i);
        if (i % 3 == 0) {
            tenure_write_ref(rt, n, &n->a, head);
            tt_node_seal(n);
            head = n;
        }
    }
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    uint64_t want = 99999;
    for (tt_node *p = head; p != NULL; p = p->a, want -= 3)
        TT_CHECK_NODE(rt, node, p, want);
    TT_CHECK(want == 0);
    TENURE_FRAME_POP(rt, f);
    TT_CHECK(tt_stats(rt).gc_count > 1);
    tenure_destroy(rt);
}

int main(void) {
    tt_rng_init("options");
    double t0 = tt_now();
    test_env_warnings(); /* first: before this process creates an instance */
    test_table();
    test_defaults();
    test_from_env();
    test_debug_env();
    test_size_spellings();
    test_ranges();
    test_create_uses_env();
    test_config_rule();
    test_effects();
    printf("options: OK (%.2f s)\n", tt_now() - t0);
    return 0;
}
