/* options.c - the options table of tenure.h: defaults, environment parsing, descriptions. */
#include "runtime.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TN_STR2(x) #x
#define TN_STR(x) TN_STR2(x)

static const tenure_option_info option_infos[] = {
#define TN_OPTION_INFO(name, ctype, def, desc) {#name, #ctype, TN_STR(def), desc},
    TENURE_OPTIONS(TN_OPTION_INFO)
#undef TN_OPTION_INFO
};

size_t tenure_option_count(void) { return sizeof option_infos / sizeof option_infos[0]; }

const tenure_option_info *tenure_option_get(size_t i) { return i < tenure_option_count() ? &option_infos[i] : NULL; }

void tenure_config_init(tenure_config *config) {
    if (!config)
        return;
#define TN_OPTION_DEFAULT(name, ctype, def, desc) config->name = (ctype)(def);
    TENURE_OPTIONS(TN_OPTION_DEFAULT)
#undef TN_OPTION_DEFAULT
}

/* The one rule for every option's text: surrounding spaces and tabs are trimmed; a number is
 * decimal, or hex with 0x; a size may end in a suffix, after optional spaces, of any case:
 * b (bytes), k, kb, kib (KiB), m, mb, mib (MiB), g, gb, gib (GiB), t, tb, tib (TiB), all
 * powers of 1024. A sign, anything else, or a value that overflows is refused. */
static const char *skip_spaces(const char *s) {
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* The text without its surrounding spaces, in buf; false if it does not fit. */
static bool trimmed(const char *s, char *buf, size_t cap) {
    s = skip_spaces(s);
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n >= cap)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return true;
}

/* The shift of a size suffix (0 for none or "b"), or -1 if it is not one. */
static int suffix_shift(const char *s) {
    static const char *const units = "kmgt";
    if (!*s)
        return 0;
    if ((s[0] == 'b' || s[0] == 'B') && !s[1])
        return 0;
    const char *u = strchr(units, s[0] | 0x20);
    if (!u || !s[0])
        return -1;
    const char *rest = s + 1;
    if ((rest[0] | 0x20) == 'i' && (rest[1] | 0x20) == 'b' && !rest[2])
        rest += 2;
    else if ((rest[0] | 0x20) == 'b' && !rest[1])
        rest++;
    return *rest ? -1 : 10 * (int)(u - units + 1);
}

static bool parse_u64(const char *text, uint64_t *out) {
    char s[64], *end;
    if (!trimmed(text, s, sizeof s) || !(s[0] >= '0' && s[0] <= '9'))
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    int shift = suffix_shift(skip_spaces(end));
    if (errno || end == s || shift < 0 || (shift && v > (UINT64_MAX >> shift)))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

static bool parse_i64(const char *text, int64_t *out) {
    char s[64], *end;
    if (!trimmed(text, s, sizeof s) || !((s[0] >= '0' && s[0] <= '9') || (s[0] == '-' && s[1] >= '0' && s[1] <= '9')))
        return false;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || end == s || *end != '\0')
        return false;
    *out = v;
    return true;
}

enum { tn_is_signed_uint64_t = 0, tn_is_signed_uint32_t = 0, tn_is_signed_int32_t = 1 };

/* Parse `text` for an option of C type `type`: true with the value in *u or *i. */
static bool parse_option(const char *text, bool is_signed, uint64_t *u, int64_t *i) {
    return is_signed ? parse_i64(text, i) : parse_u64(text, u);
}

/* One TENURE_<name> variable: applied if it parses and fits its type; otherwise the reason is
 * written into why and the option keeps its value. Variables are read through tn_os_getenv:
 * none is seen in a secure-execution process. */
#define TN_OPTION_ENV(name, ctype, def, desc)                                                                          \
    static bool env_##name(tenure_config *config, char *why, size_t len) {                                             \
        const char *text = tn_os_getenv("TENURE_" #name);                                                              \
        uint64_t u = 0;                                                                                                \
        int64_t i = 0;                                                                                                 \
        bool is_signed = tn_is_signed_##ctype;                                                                         \
        if (!text)                                                                                                     \
            return true;                                                                                               \
        if (parse_option(text, is_signed, &u, &i) && (is_signed ? (int64_t)(ctype)i == i : (uint64_t)(ctype)u == u)) { \
            config->name = is_signed ? (ctype)i : (ctype)u;                                                            \
            return true;                                                                                               \
        }                                                                                                              \
        snprintf(why, len, "TENURE_%s=%s: not a valid %s (%s)", #name, text, #ctype,                                   \
                 is_signed ? "a decimal or 0x number"                                                                  \
                           : "a decimal or 0x number, k/m/g/t suffixes (KiB...) for sizes");                           \
        return false;                                                                                                  \
    }
TENURE_OPTIONS(TN_OPTION_ENV)
#undef TN_OPTION_ENV

typedef bool (*env_reader)(tenure_config *config, char *why, size_t len);
static const env_reader env_readers[] = {
#define TN_OPTION_READER(name, ctype, def, desc) env_##name,
    TENURE_OPTIONS(TN_OPTION_READER)
#undef TN_OPTION_READER
};

/* In a secure-execution process the variables are not read; say so, in one line, for those
 * that are set. */
static void report_hidden_env(void) {
    if (!tn_os_secure_execution())
        return;
    char names[1024] = "";
    size_t used = 0;
    for (size_t k = 0; k < tenure_option_count() && used < sizeof names; k++) {
        char var[64];
        snprintf(var, sizeof var, "TENURE_%s", option_infos[k].name);
        if (tn_os_env_present(var))
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", var);
    }
    if (used)
        fprintf(stderr,
                "tenure: ignoring %s: the environment does not configure a secure-execution (setuid, "
                "setgid or capability) process\n",
                names);
}

/* TENURE_DEBUG=1: the settings that find a missing root (README.md, "Debugging an embedding"):
 * precise roots only, a compacting GC at every allocation, the heap verified before and after
 * each, freed space poisoned (and a fault there explained: api/debug.c). They are options like
 * the others: the TENURE_<option> variables apply after them (TENURE_DEBUG=1
 * TENURE_GCStress=100 thins the GCs), and a config given to tenure_create is used as given. */
#define TN_DEBUG_SETTINGS "GCConservativeStack=0 GCStress=1 GCCompactMode=1 HeapVerify=1 GCPoisonFreed=1"

static void apply_debug(tenure_config *c) {
    c->GCConservativeStack = 0;
    c->GCStress = 1;
    c->GCCompactMode = 1;
    c->HeapVerify = 1;
    c->GCPoisonFreed = 1;
}

/* TENURE_DEBUG's value: 1 on, 0 off (also unset or empty), -1 anything else. */
static int env_debug_value(void) {
    const char *text = tn_os_getenv("TENURE_DEBUG");
    char s[8];
    if (!text || !trimmed(text, s, sizeof s))
        return text ? -1 : 0;
    return !s[0] || strcmp(s, "0") == 0 ? 0 : strcmp(s, "1") == 0 ? 1 : -1;
}

static bool env_debug(tenure_config *config, char *why, size_t len) {
    int on = env_debug_value();
    if (on < 0) {
        snprintf(why, len, "TENURE_DEBUG=%s: must be 0 or 1 (1: %s)", tn_os_getenv("TENURE_DEBUG"), TN_DEBUG_SETTINGS);
        return false;
    }
    if (on)
        apply_debug(config);
    return true;
}

/* One refusal: the first one's reason into why, or each on stderr when why is NULL. */
static void refused_env(const char *reason, tenure_result *result, char *why, size_t len) {
    if (why && *result == TENURE_OK)
        snprintf(why, len, "%s", reason);
    else if (!why)
        fprintf(stderr, "tenure: %s; the option keeps its value\n", reason);
    *result = TENURE_INVALID_ARGUMENT;
}

tenure_result tn_config_from_env(tenure_config *config, char *why, size_t len) {
    tenure_result result = TENURE_OK;
    char reason[256];
    report_hidden_env();
    if (!env_debug(config, reason, sizeof reason))
        refused_env(reason, &result, why, len);
    for (size_t k = 0; k < tenure_option_count(); k++)
        if (!env_readers[k](config, reason, sizeof reason))
            refused_env(reason, &result, why, len);
    return result;
}

/* ---- variables nobody reads, and variables a given config leaves out (issue 38) ----
 *
 * A misspelt variable (TENURE_GCStres, TENURE_gcstress) would otherwise do nothing without a
 * word, and a test "under GCStress" would stress nothing. Once per process, at the first
 * tenure_create, each TENURE_ variable that no part of tenure reads is named on stderr with
 * the nearest name that is read; the tools' own families (TENURE_HEAPPROF_..., TENURE_TEST_...)
 * are theirs to check. */
static const char *const library_vars[] = {"TRACE", "TRACE_KEYWORDS", "TRACE_LEVEL", "TRACE_FORMAT",
                                           "LTTNG", "PROFILER",       "DEBUG"};
static const char *const tool_families[] = {"HEAPPROF_", "TEST_", "BENCH_", "FUZZ_", "SIM_", "REPORT_", "TORTURE_"};

static bool known_var(const char *name, size_t len) {
    for (size_t k = 0; k < tenure_option_count(); k++)
        if (strlen(option_infos[k].name) == len && memcmp(option_infos[k].name, name, len) == 0)
            return true;
    for (size_t k = 0; k < sizeof library_vars / sizeof *library_vars; k++)
        if (strlen(library_vars[k]) == len && memcmp(library_vars[k], name, len) == 0)
            return true;
    for (size_t k = 0; k < sizeof tool_families / sizeof *tool_families; k++)
        if (strncmp(name, tool_families[k], strlen(tool_families[k])) == 0)
            return true;
    return false;
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* Edit distance between a (len la) and b, case ignored; stops counting at 9. */
static unsigned distance(const char *a, size_t la, const char *b) {
    size_t lb = strlen(b);
    unsigned row[64];
    if (la >= 63 || lb >= 63)
        return 9;
    for (size_t j = 0; j <= lb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned up = row[j], best = diag + (lower(a[i - 1]) != lower(b[j - 1]));
            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb] < 9 ? row[lb] : 9;
}

/* The known name nearest to name, case ignored, if at most a third of it (two letters at
 * least) differs; NULL if none is that near. */
static const char *nearest_var(const char *name, size_t len) {
    unsigned limit = len / 3 > 2 ? (unsigned)(len / 3) : 2;
    size_t nopt = tenure_option_count(), nlib = sizeof library_vars / sizeof *library_vars;
    const char *best = NULL;
    unsigned best_d = limit + 1;
    for (size_t k = 0; k < nopt + nlib; k++) {
        const char *cand = k < nopt ? option_infos[k].name : library_vars[k - nopt];
        unsigned d = distance(name, len, cand);
        if (d < best_d)
            best = cand, best_d = d;
    }
    return best;
}

static void warn_unknown(const char *var, size_t len, void *ctx) {
    (void)ctx;
    const char *name = var + strlen("TENURE_");
    size_t n = len - strlen("TENURE_");
    if (known_var(name, n))
        return;
    const char *near = nearest_var(name, n);
    fprintf(stderr, "tenure: %.*s is not a variable tenure reads; it has no effect%s%s%s\n", (int)len, var,
            near ? " (did you mean TENURE_" : "", near ? near : "", near ? "?)" : "");
}

/* A config given to tenure_create is used as given: the TENURE_<option> variables whose value
 * it does not have are named, and TENURE_DEBUG=1 when one of its settings is missing (the
 * embedder applies them with tenure_config_from_env). */
static void not_applied(const char *var, const char *value) {
    fprintf(stderr,
            "tenure: %s=%s is not applied: tenure_create was given a config, which is used as given "
            "(tenure_config_from_env applies the environment to a config)\n",
            var, value);
}

static bool warn_not_applied(const tenure_config *given) {
    tenure_config env = *given;
    char why[256];
    bool missing = false, debug_missing = false;
    if (tn_config_from_env(&env, why, sizeof why) != TENURE_OK) { /* (the first bad value; the good ones below) */
        fprintf(stderr, "tenure: %s; not applied either: tenure_create was given a config, which is used as given\n",
                why);
        missing = true;
    }
#define TN_OPTION_DIFF(name, ctype, def, desc)                    \
    if (env.name != given->name) {                                \
        const char *text_ = tn_os_getenv("TENURE_" #name);        \
        if (text_)                                                \
            not_applied("TENURE_" #name, text_);                  \
        debug_missing |= !text_; /* (then TENURE_DEBUG set it) */ \
        missing = true;                                           \
    }
    TENURE_OPTIONS(TN_OPTION_DIFF)
#undef TN_OPTION_DIFF
    if (debug_missing)
        not_applied("TENURE_DEBUG", tn_os_getenv("TENURE_DEBUG"));
    return missing;
}

/* TENURE_DEBUG=1 in effect: say what it set, as the instance has it. */
static void announce_debug(const tenure_config *c) {
    fprintf(stderr,
            "tenure: TENURE_DEBUG=1: GCConservativeStack=%u GCStress=%u GCCompactMode=%u HeapVerify=%u "
            "GCPoisonFreed=%u (a TENURE_<option> beside it wins): slow, every GC verified; a stale pointer "
            "faults and is explained\n",
            (unsigned)c->GCConservativeStack, (unsigned)c->GCStress, (unsigned)c->GCCompactMode,
            (unsigned)c->HeapVerify, (unsigned)c->GCPoisonFreed);
}

void tn_config_check_env(const tenure_config *given) {
    static bool checked;
    if (tn_os_secure_execution() || __atomic_exchange_n(&checked, true, __ATOMIC_ACQ_REL))
        return; /* (a secure-execution process reads no variable: report_hidden_env says so) */
    tn_os_env_names("TENURE_", warn_unknown, NULL);
    tenure_config env;
    char why[256];
    tenure_config_init(&env);
    if (given ? warn_not_applied(given) : tn_config_from_env(&env, why, sizeof why) != TENURE_OK)
        return;
    if (env_debug_value() == 1)
        announce_debug(given ? given : &env);
}

tenure_result tenure_config_from_env(tenure_config *config) {
    if (!config)
        return TENURE_INVALID_ARGUMENT;
    return tn_config_from_env(config, NULL, 0);
}

/* ---- validation: every refusal names the option, its value and the rule ---- */

#define TN_MIN_HARD_LIMIT_REGIONS 3
#define TN_MAX_REGION_RANGE ((uint64_t)1 << 46)
/* Regions in the range (GCRegionRange / GCRegionSize): the region table has one entry per
 * region and is written whole at creation (heap/regions.c): 2^24 of them (4 TiB of 256 KiB
 * regions) took 8.5 s; 2^20 take about a tenth of a second. */
#define TN_MAX_REGIONS ((uint64_t)1 << 20)
#define TN_MAX_MARK_STACK ((uint64_t)1 << 30) /* entries: 8 GiB */

bool tn_config_range_is_automatic(const tenure_config *c) {
    tenure_config d;
    tenure_config_init(&d);
    return c->GCRegionRange == d.GCRegionRange;
}

uint64_t tn_config_min_range(const tenure_config *c) {
    uint64_t floor = (uint64_t)256 << 20, regions = 4 * c->GCRegionSize;
    return regions > floor ? regions : floor;
}

typedef struct checker {
    bool from_env; /* name the TENURE_ variable when the value came from it */
    char *why;
    size_t len;
} checker;

/* "GCCompactMode=3: must be 0, 1 or 2" (TENURE_GCCompactMode when the value came from there) */
static tenure_result refuse(const checker *k, const char *name, const char *value, const char *rule) {
    char var[64];
    snprintf(var, sizeof var, "TENURE_%s", name);
    const char *text = k->from_env ? tn_os_getenv(var) : NULL;
    if (k->why && k->len && text && strcmp(text, value) != 0) /* as written, and as understood */
        snprintf(k->why, k->len, "%s=%s (%s): %s", var, text, value, rule);
    else if (k->why && k->len)
        snprintf(k->why, k->len, "%s=%s: %s", text ? var : name, value, rule);
    return TENURE_INVALID_ARGUMENT;
}

#define REFUSE_U(k, name, v, rule)                                \
    do {                                                          \
        char text_[32];                                           \
        snprintf(text_, sizeof text_, "%" PRIu64, (uint64_t)(v)); \
        return refuse(k, name, text_, rule);                      \
    } while (0)

/* The options that are switches: anything but 0 or 1 is a typo, not "on". */
static tenure_result check_switches(const tenure_config *c, const checker *k) {
    const struct {
        const char *name;
        uint32_t value;
    } switches[] = {
        {"GCConservativeStack", c->GCConservativeStack},
        {"GCLOHCompact", c->GCLOHCompact},
        {"HeapVerify", c->HeapVerify},
        {"GCFinalizeOnShutdown", c->GCFinalizeOnShutdown},
        {"GCPoisonFreed", c->GCPoisonFreed},
        {"gcServer", c->gcServer},
        {"GCNoAffinitize", c->GCNoAffinitize},
        {"gcConcurrent", c->gcConcurrent},
    };
    for (size_t i = 0; i < sizeof switches / sizeof switches[0]; i++)
        if (switches[i].value > 1)
            REFUSE_U(k, switches[i].name, switches[i].value, "must be 0 or 1");
    return TENURE_OK;
}

static tenure_result check(const tenure_config *c, const checker *k) {
    uint64_t rs = c->GCRegionSize;
    if (rs < (256u << 10) || (rs & (rs - 1)) || rs > ((uint64_t)1 << 30))
        REFUSE_U(k, "GCRegionSize", rs, "must be a power of two between 256 KiB (262144) and 1 GiB");
    if (c->GCRegionRange < 4 * rs)
        REFUSE_U(k, "GCRegionRange", c->GCRegionRange, "must hold at least 4 regions (4 x GCRegionSize)");
    if (c->GCRegionRange > TN_MAX_REGION_RANGE)
        REFUSE_U(k, "GCRegionRange", c->GCRegionRange, "must be at most 64 TiB");
    if (c->GCRegionRange / rs > TN_MAX_REGIONS)
        REFUSE_U(k, "GCRegionRange", c->GCRegionRange,
                 "must hold at most 2^20 regions (GCRegionRange / GCRegionSize; the region table is built at "
                 "creation): raise GCRegionSize for a larger range");
    const struct {
        const char *name;
        uint64_t value;
    } budgets[] = {{"GCgen0size", c->GCgen0size},
                   {"GCgen1size", c->GCgen1size},
                   {"GCgen0MaxBudget", c->GCgen0MaxBudget}};
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++)
        if (budgets[i].value > c->GCRegionRange)
            REFUSE_U(k, budgets[i].name, budgets[i].value,
                     "must be at most GCRegionRange (a budget the reserved range cannot hold never starts a GC)");
    if (c->GCHeapHardLimit && c->GCHeapHardLimit < TN_MIN_HARD_LIMIT_REGIONS * rs)
        REFUSE_U(k, "GCHeapHardLimit", c->GCHeapHardLimit,
                 "must be 0 (no limit) or at least 3 regions (3 x GCRegionSize): below that every allocation "
                 "fails or collects");
    if (c->GCMarkStackSize < 1 || c->GCMarkStackSize > TN_MAX_MARK_STACK)
        REFUSE_U(k, "GCMarkStackSize", c->GCMarkStackSize, "must be between 1 and 2^30 entries");
    if (c->GCCompactMode > 2)
        REFUSE_U(k, "GCCompactMode", c->GCCompactMode, "must be 0, 1 or 2");
    if (c->GCStressGeneration < -1 || c->GCStressGeneration > 2) {
        char text[16];
        snprintf(text, sizeof text, "%d", (int)c->GCStressGeneration);
        return refuse(k, "GCStressGeneration", text, "must be -1, 0, 1 or 2");
    }
    if (c->GCLOHThreshold < 1024)
        REFUSE_U(k, "GCLOHThreshold", c->GCLOHThreshold, "must be at least 1024");
    if (c->GCLOHThreshold > rs)
        REFUSE_U(k, "GCLOHThreshold", c->GCLOHThreshold,
                 "must be at most GCRegionSize (a smaller object must fit in one region)");
    if (c->GCFinalizeMode > 2)
        REFUSE_U(k, "GCFinalizeMode", c->GCFinalizeMode, "must be 0, 1 or 2");
    if (c->GCHeapCount > TN_MAX_GC_THREADS)
        REFUSE_U(k, "GCHeapCount", c->GCHeapCount, "must be at most 64 (0: one per CPU)");
    return check_switches(c, k);
}

tenure_result tn_config_check(const tenure_config *c, bool from_env, char *why, size_t len) {
    checker k = {from_env, why, len};
    if (why && len)
        why[0] = '\0';
    return check(c, &k);
}

tenure_result tenure_config_check(const tenure_config *config, char *why, size_t why_len) {
    if (!config) {
        if (why && why_len)
            snprintf(why, why_len, "NULL config");
        return TENURE_INVALID_ARGUMENT;
    }
    return tn_config_check(config, false, why, why_len);
}
