/*
 * hardening_checks: checks that used to crash (or stay silent) report instead (issue 12,
 * findings 7, 9, 10 and 11). Each case that could crash runs in a forked child, so that a
 * crash is a test failure that names the case, not the end of the test.
 *
 *  7  handles: pointers below the slab size (8192), misaligned and foreign handles, NULL
 *     instances; frozen segments: an array length whose size wraps, a segment that wraps the
 *     address space, references that are not objects; type descriptors that contradict
 *     themselves (NO_REFS with references, unknown flags, elem_size SIZE_MAX, offsets that
 *     overflow, lie outside the object, are misaligned, repeat, or outnumber the slots).
 *     Each is refused with a result code and reported through the error hook.
 *  9  HeapVerify finds a store that skipped the write barrier: without an error hook the
 *     process prints the type and field on stderr and dies of SIGABRT; with a hook, the hook
 *     gets the same message and the program goes on.
 * 10  GCPoisonFreed: a stale pointer (an unrooted C local kept across an allocation under
 *     GCStress) faults at its first use, whether its object died or moved; dead space in a
 *     region that stays in use reads as the poison pattern.
 * 11  HeapVerify's cost follows the memory in use, not the size of the regions: verifying a
 *     heap of three 1 GiB regions holding a few KiB touches no more than a little memory (it
 *     used to clear the whole mark bitmap of every region: 16 MiB each).
 *
 * Deterministic (no random choices): no seed.
 */
#include "test_util.h"

#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

typedef struct hnode {
    tenure_header header;
    struct hnode *ref;
    uint64_t value;
} hnode;

static tt_errlog log_;

/* Create an instance with the test's own settings (the suite's environment is ignored: each
 * case needs exact conditions), and log_ as its hook. */
static tenure_runtime *create(unsigned heap_verify, unsigned stress, unsigned compact_mode) {
    tenure_config cfg;
    tenure_config_init(&cfg);
    cfg.GCConservativeStack = 0;
    cfg.HeapVerify = heap_verify;
    cfg.GCStress = stress;
    cfg.GCCompactMode = compact_mode;
    cfg.GCFinalizeMode = 1;
    tenure_result r = TENURE_NOMEM;
    tenure_runtime *rt = tenure_create(&cfg, &r);
    TT_CHECK(rt != NULL, "tenure_create: %s", tenure_strerror(r));
    tenure_set_error_hook(rt, tt_hook, &log_);
    return rt;
}

static const tenure_type *register_hnode(tenure_runtime *rt) {
    static const size_t offs[] = {offsetof(hnode, ref)};
    tenure_type_desc d = {0};
    d.name = "HardeningNode";
    d.size = sizeof(hnode);
    d.ref_offsets = offs;
    d.ref_count = 1;
    const tenure_type *t = tenure_type_register(rt, &d);
    TT_CHECK(t != NULL);
    return t;
}


static const char *describe_status(int status, char *buf, size_t cap) {
    if (WIFSIGNALED(status))
        snprintf(buf, cap, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(buf, cap, "exited with %d", WEXITSTATUS(status));
    return buf;
}

/* A case that must neither crash nor fail its checks. */
static void expect_clean_exit(const char *name, void (*fn)(void)) {
    char why[128];
    int status = tt_run_child(fn, 0, NULL, 0);
    TT_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child %s", name,
              describe_status(status, why, sizeof why));
    printf("  %s: %s\n", name, WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "reported, no crash" : "FAILED");
}

/* The call just made failed with `expected` and told the hook so. */
#define EXPECT_REPORTED(what, got, expected)                                                                         \
    do {                                                                                                             \
        TT_CHECK((got) == (expected), "%s: returned %d (%s), expected %d", what, (int)(got),                         \
                 tenure_strerror((tenure_result)(got)), (int)(expected));                                            \
        TT_CHECK(log_.count == 1 && log_.last == (expected), "%s: hook called %d times (last %d)", what, log_.count, \
                 (int)log_.last);                                                                                    \
        tt_errlog_reset(&log_);                                                                                      \
    } while (0)

/* ---- finding 7: handles ---- */

static void handles_low_and_bad_pointers(void) {
    tenure_runtime *rt = create(0, 0, 0), *other = create(0, 0, 0);
    /* with a slab in place: the lookup of address 0 (a pointer below 8192, masked) used to
     * match the set's empty marker and read the "slab" at address 0 */
    tenure_handle *first = tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL);
    TT_CHECK(first != NULL);
    static const uintptr_t bad[] = {1, 8, 16, 4096, 8184, 8191};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tenure_handle *h = (tenure_handle *)bad[i];
        char what[64];
        snprintf(what, sizeof what, "tenure_handle_get(%#lx)", (unsigned long)bad[i]);
        TT_CHECK(tenure_handle_get(rt, h) == NULL);
        EXPECT_REPORTED(what, TENURE_INVALID_HANDLE, TENURE_INVALID_HANDLE);
        EXPECT_REPORTED("tenure_handle_set", tenure_handle_set(rt, h, NULL), TENURE_INVALID_HANDLE);
        EXPECT_REPORTED("tenure_handle_free", tenure_handle_free(rt, h), TENURE_INVALID_HANDLE);
        EXPECT_REPORTED("tenure_handle_set_secondary", tenure_handle_set_secondary(rt, h, NULL), TENURE_INVALID_HANDLE);
        EXPECT_REPORTED("tenure_handle_set_variable_kind", tenure_handle_set_variable_kind(rt, h, TENURE_HANDLE_STRONG),
                        TENURE_INVALID_HANDLE);
        TT_CHECK(tenure_handle_get_secondary(rt, h) == NULL);
        EXPECT_REPORTED("tenure_handle_get_secondary", TENURE_INVALID_HANDLE, TENURE_INVALID_HANDLE);
        TT_CHECK(tenure_handle_sized_ref_bytes(rt, h) == 0);
        EXPECT_REPORTED("tenure_handle_sized_ref_bytes", TENURE_INVALID_HANDLE, TENURE_INVALID_HANDLE);
    }
    /* inside a real slab but not a slot; a handle of another instance */
    tenure_handle *real = tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL);
    TT_CHECK(real != NULL);
    TT_CHECK(tenure_handle_get(rt, (tenure_handle *)((char *)real + 4)) == NULL);
    EXPECT_REPORTED("misaligned handle", TENURE_INVALID_HANDLE, TENURE_INVALID_HANDLE);
    TT_CHECK(tenure_handle_get(other, real) == NULL);
    EXPECT_REPORTED("foreign handle", TENURE_INVALID_HANDLE, TENURE_INVALID_HANDLE);
    EXPECT_REPORTED("free a foreign handle", tenure_handle_free(other, real), TENURE_INVALID_HANDLE);
    TT_CHECK(tenure_handle_free(rt, real) == TENURE_OK);
    EXPECT_REPORTED("double free", tenure_handle_free(rt, real), TENURE_INVALID_HANDLE);
    TT_CHECK(tenure_handle_free(rt, first) == TENURE_OK);
    tenure_destroy(other);
    tenure_destroy(rt);
}

static void handles_null_instance(void) {
    tenure_runtime *rt = create(0, 0, 0);
    tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL);
    TT_CHECK(h != NULL);
    TT_CHECK(tenure_handle_new(NULL, TENURE_HANDLE_STRONG, NULL) == NULL);
    TT_CHECK(tenure_handle_new_dependent(NULL, NULL, NULL) == NULL);
    TT_CHECK(tenure_handle_get(NULL, h) == NULL);
    TT_CHECK(tenure_handle_get_secondary(NULL, h) == NULL);
    TT_CHECK(tenure_handle_set(NULL, h, NULL) != TENURE_OK);
    TT_CHECK(tenure_handle_set_secondary(NULL, h, NULL) != TENURE_OK);
    TT_CHECK(tenure_handle_set_variable_kind(NULL, h, TENURE_HANDLE_STRONG) != TENURE_OK);
    TT_CHECK(tenure_handle_sized_ref_bytes(NULL, h) == 0);
    TT_CHECK(tenure_handle_free(NULL, h) != TENURE_OK);
    TT_CHECK(tenure_handle_count(NULL) == 0);
    tenure_set_refcount_callback(NULL, NULL, NULL);
    TT_CHECK(tenure_handle_get(rt, h) == NULL && log_.count == 0); /* h is intact */
    TT_CHECK(tenure_handle_free(rt, h) == TENURE_OK);
    tenure_destroy(rt);
}

/* ---- finding 7: frozen segments ---- */

static uint64_t segment[64] __attribute__((aligned(16)));

static const tenure_type *register_words(tenure_runtime *rt) { return tt_register_plain_array(rt, "Words", 8); }

static void frozen_wrapping_length(void) {
    tenure_runtime *rt = create(1, 0, 0);
    const tenure_type *words = register_words(rt), *node = register_hnode(rt);
    /* 16 + 8 * (2^61 + 2) wraps to 32: the old check saw a 32-byte object */
    memset(segment, 0, sizeof segment);
    TT_CHECK(tenure_frozen_object_init(rt, segment, words, 2) == 32);
    ((tenure_array_header *)segment)->length = ((size_t)1 << 61) + 2;
    EXPECT_REPORTED("wrapping array length", tenure_register_frozen_segment(rt, segment, 32), TENURE_INVALID_OBJECT);
    /* a ref array of that length would be visited by every GC */
    tenure_type_desc d = {0};
    d.name = "Refs";
    d.flags = TENURE_TYPE_REF_ARRAY;
    const tenure_type *refs = tenure_type_register(rt, &d);
    TT_CHECK(refs != NULL);
    TT_CHECK(tenure_frozen_object_init(rt, segment, refs, 2) == 32);
    ((tenure_array_header *)segment)->length = ((size_t)1 << 61) + 2;
    EXPECT_REPORTED("wrapping ref array length", tenure_register_frozen_segment(rt, segment, 32),
                    TENURE_INVALID_OBJECT);
    /* a segment that wraps the address space */
    EXPECT_REPORTED("wrapping segment", tenure_register_frozen_segment(rt, segment, SIZE_MAX & ~(size_t)7),
                    TENURE_INVALID_ARGUMENT);
    /* an object cut by the segment's end: its length word lies outside */
    TT_CHECK(tenure_frozen_object_init(rt, segment + 1, words, 0) == 16);
    EXPECT_REPORTED("cut object", tenure_register_frozen_segment(rt, segment + 1, 8), TENURE_INVALID_OBJECT);
    /* a reference that is not an object (malloc'd memory, the middle of a frozen object) */
    static uint64_t outside[4];
    TT_CHECK(tenure_frozen_object_init(rt, segment, node, 0) == sizeof(hnode));
    ((hnode *)segment)->ref = (hnode *)outside;
    EXPECT_REPORTED("reference outside", tenure_register_frozen_segment(rt, segment, sizeof(hnode)),
                    TENURE_INVALID_OBJECT);
    ((hnode *)segment)->ref = (hnode *)((char *)segment + 8);
    EXPECT_REPORTED("reference inside an object", tenure_register_frozen_segment(rt, segment, sizeof(hnode)),
                    TENURE_INVALID_OBJECT);
    ((hnode *)segment)->ref = (hnode *)segment; /* itself: fine */
    TT_CHECK(tenure_register_frozen_segment(rt, segment, sizeof(hnode)) == TENURE_OK);
    /* an object written into the heap */
    hnode *in_heap = tenure_alloc(rt, node);
    TT_CHECK(in_heap != NULL);
    TT_CHECK(tenure_frozen_object_init(rt, in_heap, node, 0) == 0);
    EXPECT_REPORTED("frozen object in the heap", TENURE_INVALID_ARGUMENT, TENURE_INVALID_ARGUMENT);
    TT_CHECK(tenure_collect(rt, -1, 0) == TENURE_OK); /* verified: nothing bad got in */
    TT_CHECK(log_.count == 0, "%s", log_.message);
    tenure_destroy(rt);
}

/* ---- finding 7: type descriptors ---- */

static void noop_trace(void *obj, tenure_visitor *v) {
    (void)obj;
    (void)v;
}

static void type_descriptors(void) {
    tenure_runtime *rt = create(0, 0, 0);
    static const size_t off8[] = {8}, off_wrap[] = {SIZE_MAX - 7}, off_mis[] = {12}, off_out[] = {24},
                        dup[] = {8, 16, 8};
    struct {
        const char *what;
        tenure_type_desc d;
    } cases[] = {
        {"NO_REFS with offsets", {.size = 24, .ref_offsets = off8, .ref_count = 1, .flags = TENURE_TYPE_NO_REFS}},
        {"NO_REFS with a trace callback", {.size = 24, .trace = noop_trace, .flags = TENURE_TYPE_NO_REFS}},
        {"NO_REFS reference array", {.flags = TENURE_TYPE_REF_ARRAY | TENURE_TYPE_NO_REFS}},
        {"NO_REFS array with element offsets",
         {.elem_size = 8,
          .elem_ref_offsets = off8 /* any */,
          .elem_ref_count = 1,
          .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS}},
        {"unknown flag", {.size = 24, .flags = 1u << 7}},
        {"unknown high flag", {.size = 24, .flags = 1u << 31}},
        {"elem_size SIZE_MAX", {.elem_size = SIZE_MAX, .flags = TENURE_TYPE_ARRAY}},
        {"elem_size 2^41", {.elem_size = (size_t)1 << 41}},
        {"size SIZE_MAX", {.size = SIZE_MAX}},
        {"offset that overflows", {.size = 24, .ref_offsets = off_wrap, .ref_count = 1}},
        {"misaligned offset", {.size = 24, .ref_offsets = off_mis, .ref_count = 1}},
        {"offset outside the object", {.size = 24, .ref_offsets = off_out, .ref_count = 1}},
        {"offset 0 (the header)", {.size = 24, .ref_offsets = (const size_t[]){0}, .ref_count = 1}},
        {"element offset that overflows",
         {.elem_size = 16, .elem_ref_offsets = off_wrap, .elem_ref_count = 1, .flags = TENURE_TYPE_ARRAY}},
        {"more offsets than slots", {.size = 24, .ref_offsets = off8, .ref_count = SIZE_MAX}},
        {"the same offset twice", {.size = 32, .ref_offsets = dup, .ref_count = 3}},
        {"array with fixed offsets", {.elem_size = 8, .ref_offsets = off8, .ref_count = 1, .flags = TENURE_TYPE_ARRAY}},
        {"fixed type with element offsets", {.size = 24, .elem_ref_offsets = off8, .elem_ref_count = 1}},
        {"reference array with element offsets",
         {.elem_ref_offsets = (const size_t[]){0}, .elem_ref_count = 1, .flags = TENURE_TYPE_REF_ARRAY}},
        {"reference array with a trace callback", {.trace = noop_trace, .flags = TENURE_TYPE_REF_ARRAY}},
        {"count without offsets", {.size = 24, .ref_count = 1}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cases[i].d.name = cases[i].what;
        TT_CHECK(tenure_type_register(rt, &cases[i].d) == NULL, "%s: registered", cases[i].what);
        EXPECT_REPORTED(cases[i].what, tenure_last_error(rt), TENURE_INVALID_ARGUMENT);
        tenure_clear_error(rt);
    }
    /* what is valid still registers, and allocates */
    const tenure_type *node = register_hnode(rt);
    static const size_t two[] = {16, 8};
    tenure_type_desc ok2 = {.name = "TwoRefs", .size = 24, .ref_offsets = two, .ref_count = 2};
    TT_CHECK(tenure_type_register(rt, &ok2) != NULL, "%s", log_.message);
    tenure_type_desc bytes = {.name = "Bytes", .elem_size = 1, .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS};
    TT_CHECK(tenure_type_register(rt, &bytes) != NULL, "%s", log_.message);
    TT_CHECK(tenure_alloc(rt, node) != NULL);
    TT_CHECK(log_.count == 0, "%s", log_.message);
    tenure_destroy(rt);
}

/* ---- finding 9: HeapVerify without and with an error hook ---- */

/* An old object gets a young reference stored without the barrier; the next GC verifies. */
static tenure_runtime *skip_barrier(bool hook) {
    tenure_runtime *rt = create(1, 0, 0);
    if (!hook)
        tenure_set_error_hook(rt, NULL, NULL);
    const tenure_type *node = register_hnode(rt);
    void *roots[2] = {0};
    tenure_root_area *area = tenure_root_area_add(rt, roots, 2);
    TT_CHECK(area != NULL);
    roots[0] = tenure_alloc(rt, node);
    TT_CHECK(roots[0] != NULL);
    TT_CHECK(tenure_collect(rt, -1, 0) == TENURE_OK);
    TT_CHECK(tenure_collect(rt, -1, 0) == TENURE_OK);
    TT_CHECK(tenure_object_generation(rt, roots[0]) == 2);
    roots[1] = tenure_alloc(rt, node);
    TT_CHECK(roots[1] != NULL && tenure_object_generation(rt, roots[1]) == 0);
    ((hnode *)roots[0])->ref = roots[1]; /* the missed barrier */
    tenure_collect(rt, 0, 0);
    return rt;
}

static void skip_barrier_no_hook(void) {
    skip_barrier(false);
    fprintf(stderr, "the program went on after a missed write barrier\n");
}

static void verify_reports(void) {
    char err[8192], why[128];
    int status = tt_run_child(skip_barrier_no_hook, 0, err, sizeof err);
    TT_EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "without a hook: the child %s; stderr:\n%s",
              describe_status(status, why, sizeof why), err);
    TT_EXPECT(strstr(err, "HardeningNode") && strstr(err, "field at offset 8") && strstr(err, "before GC 3") &&
                  strstr(err, "missed write barrier"),
              "without a hook: stderr does not name the type, field and GC:\n%s", err);
    printf("  HeapVerify without a hook: %s; stderr: %s", describe_status(status, why, sizeof why), err);

    tt_errlog_reset(&log_);
    tenure_runtime *rt = skip_barrier(true); /* the hook decides: it returns, the program goes on */
    TT_EXPECT(log_.count >= 1 && log_.last == TENURE_HEAP_CORRUPT, "with a hook: %d reports", log_.count);
    TT_EXPECT(strcmp(log_.function, "HeapVerify") == 0, "reported by %s", log_.function);
    TT_EXPECT(strstr(log_.message, "HardeningNode") && strstr(log_.message, "field at offset 8") &&
                  strstr(log_.message, "GC 3"),
              "with a hook: the message does not name the type, field and GC: %s", log_.message);
    printf("  HeapVerify with a hook: %d report(s), e.g. \"%s\"\n", log_.count, log_.message);
    tt_errlog_reset(&log_);
    tenure_set_error_hook(rt, NULL, NULL);
    tenure_destroy(rt);
}

/* The checked barrier (HeapVerify) refuses a value the verifier would call corrupt: a
 * pointer outside the heap that is not a frozen object. */
static void checked_barrier(void) {
    tenure_runtime *rt = create(1, 0, 0);
    const tenure_type *node = register_hnode(rt);
    static uint64_t not_an_object[4];
    hnode *n = tenure_alloc(rt, node);
    TT_CHECK(n != NULL);
    TENURE_FRAME(rt, f, n);
    tenure_write_ref(rt, n, &n->ref, not_an_object);
    EXPECT_REPORTED("barrier: value outside the heap", tenure_last_error(rt), TENURE_INVALID_OBJECT);
    TT_CHECK(n->ref == NULL, "the store was done");
    TT_CHECK(tenure_collect(rt, 0, 0) == TENURE_OK && log_.count == 0, "%s", log_.message);
    TENURE_FRAME_POP(rt, f);
    tenure_destroy(rt);
}

/* ---- finding 10: GCPoisonFreed ---- */

/* Created with GCPoisonFreed from the environment (so that this file also builds, and runs,
 * against a version without the option: there the stale reads succeed and the test fails). */
static tenure_runtime *create_poisoned(unsigned stress, unsigned compact_mode) {
    TT_CHECK(setenv("TENURE_GCPoisonFreed", "1", 1) == 0);
    tenure_config cfg;
    tenure_config_init(&cfg);
    TT_CHECK(tenure_config_from_env(&cfg) == TENURE_OK);
    cfg.GCConservativeStack = 0;
    cfg.HeapVerify = 1;
    cfg.GCStress = stress;
    cfg.GCStressGeneration = 0;
    cfg.GCCompactMode = compact_mode;
    cfg.GCFinalizeMode = 1;
    tenure_runtime *rt = tenure_create(&cfg, NULL);
    TT_CHECK(rt != NULL);
    tenure_set_error_hook(rt, tt_hook, &log_);
    log_.fatal = 1;
    return rt;
}

static volatile uint64_t sink;

/* An unrooted local whose object dies at the next allocation's GC. */
static void stale_dead(void) {
    tenure_runtime *rt = create_poisoned(1, 0);
    const tenure_type *node = register_hnode(rt);
    hnode *a = tenure_alloc(rt, node);
    a->value = 42;
    TT_CHECK(tenure_alloc(rt, node) != NULL); /* a GC: a is not rooted */
    sink = a->value;                          /* must fault */
    fprintf(stderr, "read %llu through a stale pointer to a dead object\n", (unsigned long long)sink);
}

/* An unrooted local whose (rooted) object moves at the next allocation's GC: the survivors
 * of gen0 go to the free end of a gen1 region, and the gen0 region they left is empty. */
static void stale_moved(void) {
    tenure_runtime *rt = create_poisoned(1, 1);
    const tenure_type *node = register_hnode(rt);
    void *roots[2] = {0};
    TT_CHECK(tenure_root_area_add(rt, roots, 2) != NULL);
    roots[0] = tenure_alloc(rt, node); /* its region becomes gen1 at the next GC */
    hnode *a = tenure_alloc(rt, node);
    a->value = 42;
    roots[1] = a;
    TT_CHECK(tenure_alloc(rt, node) != NULL); /* a GC: a moves, the raw local does not */
    TT_CHECK(roots[1] != a, "the object did not move");
    TT_CHECK(((hnode *)roots[1])->value == 42);
    sink = a->value; /* must fault */
    fprintf(stderr, "read %llu through a stale pointer to a moved object\n", (unsigned long long)sink);
}

static void expect_fault(const char *name, void (*fn)(void)) {
    char err[4096], why[128];
    int status = tt_run_child(fn, 0, err, sizeof err);
    /* under AddressSanitizer the fault is its report and exit code */
    bool asan_fault = WIFEXITED(status) && WEXITSTATUS(status) != 0 && strstr(err, "AddressSanitizer: SEGV");
    TT_EXPECT(asan_fault || (WIFSIGNALED(status) && (WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS)),
              "%s: the child %s instead of faulting; stderr:\n%s", name, describe_status(status, why, sizeof why), err);
    printf("  %s: %s\n", name, asan_fault ? "AddressSanitizer: SEGV" : describe_status(status, why, sizeof why));
}

/* A region that stays in use (a pinned object keeps it): the dead object after the pinned
 * one reads as poison, and the heap still verifies (HeapVerify is on). */
static void poison_in_used_region(void) {
    tenure_runtime *rt = create_poisoned(0, 1);
    const tenure_type *node = register_hnode(rt);
    hnode *pinned = tenure_alloc(rt, node);
    tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_PINNED, pinned);
    TT_CHECK(h != NULL);
    hnode *dead = tenure_alloc(rt, node);
    TT_CHECK((char *)dead == (char *)pinned + sizeof(hnode), "not neighbours");
    dead->value = 7;
    TT_CHECK(tenure_collect(rt, 0, 0) == TENURE_OK);
    TT_CHECK(tenure_handle_get(rt, h) == pinned, "the pinned object moved");
    TT_EXPECT(dead->value == 0xccccccccccccccccull, "dead space reads %#llx, not the poison pattern",
              (unsigned long long)dead->value);
    TT_EXPECT(dead->header.tenure__word == 0xccccccccccccccccull, "dead header reads %#llx",
              (unsigned long long)dead->header.tenure__word);
    TT_CHECK(tenure_verify_heap(rt) == TENURE_OK);
    TT_CHECK(tenure_handle_free(rt, h) == TENURE_OK);
    log_.fatal = 0;
    tenure_destroy(rt);
}

/* ---- finding 11: the verifier's cost follows the memory in use ---- */

static size_t rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    TT_CHECK(f != NULL);
    TT_CHECK(fscanf(f, "%lu %lu", &size, &resident) == 2);
    fclose(f);
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

static void verify_cost(void) {
    tenure_config cfg;
    tenure_config_init(&cfg);
    cfg.GCConservativeStack = 0;
    cfg.GCRegionSize = (uint64_t)1 << 30; /* 16 MiB of mark bits per region */
    cfg.GCRegionRange = (uint64_t)8 << 30;
    cfg.GCFinalizeMode = 1;
    tenure_runtime *rt = tenure_create(&cfg, NULL);
    TT_CHECK(rt != NULL);
    tenure_set_error_hook(rt, tt_hook, &log_);
    const tenure_type *node = register_hnode(rt);
    void *roots[3] = {0};
    TT_CHECK(tenure_root_area_add(rt, roots, 3) != NULL);
    for (int i = 0; i < 3; i++) { /* one region each in gen2, gen1 and gen0 */
        roots[i] = tenure_alloc(rt, node);
        TT_CHECK(roots[i] != NULL);
        if (i < 2)
            TT_CHECK(tenure_collect(rt, -1, 0) == TENURE_OK);
    }
    TT_CHECK(tenure_object_generation(rt, roots[0]) == 2 && tenure_object_generation(rt, roots[1]) == 1);
    size_t before = rss_bytes();
    for (int i = 0; i < 3; i++)
        TT_CHECK(tenure_verify_heap(rt) == TENURE_OK, "%s", log_.message);
    size_t grew = rss_bytes() - before;
    if (rss_bytes() < before)
        grew = 0;
    printf("  verifying 3 regions of 1 GiB holding 3 objects: resident memory grew by %zu KiB\n", grew >> 10);
    TT_EXPECT(grew < ((size_t)4 << 20), "verification touched %zu KiB: it scans whole regions", grew >> 10);
    tenure_destroy(rt);
}

static void verify_cost_child(void) {
    /* the first verification in a fresh process: nothing touched the bitmaps before */
    tt_failures = 0; /* the parent's, inherited */
    verify_cost();
    exit(tt_failures ? 1 : 0);
}

int main(void) {
    double t0 = tt_now();
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("finding 7: checks that crashed\n");
    expect_clean_exit("handles: low, misaligned and foreign pointers", handles_low_and_bad_pointers);
    expect_clean_exit("handles: NULL instance", handles_null_instance);
    expect_clean_exit("frozen segments", frozen_wrapping_length);
    expect_clean_exit("type descriptors", type_descriptors);
    printf("finding 9: HeapVerify is never silent\n");
    verify_reports();
    expect_clean_exit("checked barrier refuses a value that is no object", checked_barrier);
    printf("finding 10: GCPoisonFreed\n");
    expect_fault("stale pointer to a dead object", stale_dead);
    expect_fault("stale pointer to a moved object", stale_moved);
    expect_clean_exit("dead space in a region in use is poisoned", poison_in_used_region);
    printf("finding 11: verification cost\n");
    expect_clean_exit("HeapVerify touches memory in proportion to use", verify_cost_child);
    return tt_finish("hardening_checks", t0);
}
