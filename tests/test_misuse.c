/*
 * misuse: every detectable misuse and failure is reported through the error hook (once, with
 * the failing public function's name) and tenure_last_error, and the function returns its
 * documented error value; the instance keeps working afterwards.
 *
 * Covered: handles (double free, freed, NULL, fake, foreign kinds, unsupported kinds 4..8),
 * allocation (NULL or fake type, absurd lengths, array/fixed type mix-ups), type registration
 * (NULL descriptor, too small, reference offsets outside the object, bad arrays; name and
 * offsets are copied), non-objects (malloc'd memory, interior pointers, NULL, stack), frames
 * popped out of order or twice, root areas/scanners removed twice, tenure_collect with a bad
 * generation or from inside a collection, invalid configurations, GCHeapHardLimit (NOMEM,
 * then recovery), tenure_strerror for every code, a NULL hook, and threads (blocking sections
 * left without entering or entered twice, allocation inside one, detaching an unattached
 * thread, the finalizer thread or from a blocking section, tenure_wait_for_pending_finalizers
 * from a finalizer).
 */
#include "test_util.h"

#include <pthread.h>

_Static_assert(TENURE_HANDLE_WEAK_SHORT == 0, "kind numbers are .NET's");
_Static_assert(TENURE_HANDLE_WEAK_LONG == 1, "kind numbers are .NET's");
_Static_assert(TENURE_HANDLE_STRONG == 2, "kind numbers are .NET's");
_Static_assert(TENURE_HANDLE_PINNED == 3, "kind numbers are .NET's");
_Static_assert(TENURE_HANDLE_VARIABLE == 4, "kind numbers are .NET's");
_Static_assert(TENURE_HANDLE_REFCOUNTED == 5, "kind numbers are .NET's");
_Static_assert(TENURE_HANDLE_DEPENDENT == 6, "kind numbers are .NET's");
_Static_assert(TENURE_HANDLE_ASYNC_PINNED == 7, "kind numbers are .NET's");
_Static_assert(TENURE_HANDLE_SIZED_REF == 8, "kind numbers are .NET's");
_Static_assert(TENURE_OK == 0 && TENURE_HEAP_CORRUPT == 10, "result codes");
_Static_assert(sizeof(tenure_header) == sizeof(void *), "one header word");
_Static_assert(sizeof(tenure_array_header) == 2 * sizeof(void *), "header + length");

static tenure_runtime *rt;
static tt_errlog log_;
static const tenure_type *node_t, *refarr_t, *bytes_t;

static void arm(void) {
    tt_errlog_reset(&log_);
    tenure_clear_error(rt);
    TT_CHECK(tenure_last_error(rt) == TENURE_OK, "tenure_clear_error did not clear");
}

/* After a failing call: exactly one hook call with `code` from function `fn` (a prefix match
 * when fn ends with '*'), and tenure_last_error == code. */
static void expect_line(int line, tenure_result code, const char *fn) {
    char what[160];
    snprintf(what, sizeof what, "line %d (%s)", line, fn);
    TT_EXPECT(log_.count == 1, "%s: error hook called %d times", what, log_.count);
    TT_EXPECT(log_.last == code, "%s: hook got %d (%s), expected %d (%s)", what, (int)log_.last,
              tenure_strerror(log_.last), (int)code, tenure_strerror(code));
    TT_EXPECT(log_.last_rt == rt, "%s: hook got another instance", what);
    size_t n = strlen(fn);
    if (n > 0 && fn[n - 1] == '*')
        TT_EXPECT(strncmp(log_.function, fn, n - 1) == 0, "%s: hook names function '%s'", what, log_.function);
    else
        TT_EXPECT(strcmp(log_.function, fn) == 0, "%s: hook names function '%s'", what, log_.function);
    TT_EXPECT(log_.message[0] != '\0' && strcmp(log_.message, "(null)") != 0, "%s: the hook got no message", what);
    TT_EXPECT(tenure_last_error(rt) == code, "%s: tenure_last_error is %d", what, (int)tenure_last_error(rt));
}
#define EXPECT(code, fn) expect_line(__LINE__, code, fn)

/* One hook call with one of two codes. */
static void expect_either_line(int line, tenure_result c1, tenure_result c2) {
    TT_EXPECT(log_.count == 1, "line %d: error hook called %d times", line, log_.count);
    TT_EXPECT(log_.last == c1 || log_.last == c2, "line %d: hook got %d (%s)", line, (int)log_.last,
              tenure_strerror(log_.last));
    TT_EXPECT(tenure_last_error(rt) == log_.last, "line %d", line);
}
#define EXPECT_EITHER(c1, c2) expect_either_line(__LINE__, c1, c2)

static void expect_quiet_line(int line) {
    TT_EXPECT(log_.count == 0, "line %d: unexpected hook call %s: %s", line, log_.function, log_.message);
    TT_EXPECT(tenure_last_error(rt) == TENURE_OK, "line %d", line);
}
#define EXPECT_QUIET() expect_quiet_line(__LINE__)

/* ------------------------------------------------------------------ handles */
static void test_handles(void) {
    tt_node *obj = tt_node_new(rt, node_t, 1);
    size_t before = tenure_handle_count(rt);
    arm();
    tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, obj);
    TT_CHECK(h != NULL);
    TT_CHECK(tenure_handle_count(rt) == before + 1);
    TT_CHECK_RESULT(tenure_handle_free(rt, h), TENURE_OK);
    EXPECT_QUIET();
    TT_CHECK(tenure_handle_count(rt) == before);

    arm();
    TT_CHECK_RESULT(tenure_handle_free(rt, h), TENURE_INVALID_HANDLE);
    EXPECT(TENURE_INVALID_HANDLE, "tenure_handle_free");
    TT_CHECK(tenure_handle_count(rt) == before, "a double free changed the handle count");
    arm();
    TT_CHECK(tenure_handle_get(rt, h) == NULL);
    EXPECT(TENURE_INVALID_HANDLE, "tenure_handle_get");
    arm();
    TT_CHECK_RESULT(tenure_handle_set(rt, h, NULL), TENURE_INVALID_HANDLE);
    EXPECT(TENURE_INVALID_HANDLE, "tenure_handle_set");
    arm();
    TT_CHECK_RESULT(tenure_handle_free(rt, NULL), TENURE_INVALID_HANDLE);
    EXPECT(TENURE_INVALID_HANDLE, "tenure_handle_free");
    arm();
    TT_CHECK(tenure_handle_get(rt, NULL) == NULL);
    EXPECT(TENURE_INVALID_HANDLE, "tenure_handle_get");
    void *fake = calloc(1, 256);
    TT_CHECK(fake != NULL);
    arm();
    TT_CHECK(tenure_handle_get(rt, (tenure_handle *)fake) == NULL);
    EXPECT(TENURE_INVALID_HANDLE, "tenure_handle_get");
    arm();
    TT_CHECK_RESULT(tenure_handle_free(rt, (tenure_handle *)fake), TENURE_INVALID_HANDLE);
    EXPECT(TENURE_INVALID_HANDLE, "tenure_handle_free");
    free(fake);

    /* kinds: 0..8 work (NULL is allowed) but dependent handles, which come from
     * tenure_handle_new_dependent; others are invalid */
    for (int k = 0; k <= 8; k++) {
        arm();
        tenure_handle *hk = tenure_handle_new(rt, (tenure_handle_kind)k, NULL);
        if (k != TENURE_HANDLE_DEPENDENT) {
            TT_CHECK(hk != NULL, "handle kind %d with NULL failed", k);
            EXPECT_QUIET();
            TT_CHECK(tenure_handle_get(rt, hk) == NULL);
            TT_CHECK_RESULT(tenure_handle_free(rt, hk), TENURE_OK);
        } else {
            TT_CHECK(hk == NULL, "tenure_handle_new made a dependent handle");
            EXPECT(TENURE_INVALID_ARGUMENT, "tenure_handle_new");
        }
    }
    int bad_kinds[] = {9, 100, -1};
    for (size_t i = 0; i < sizeof bad_kinds / sizeof bad_kinds[0]; i++) {
        arm();
        TT_CHECK(tenure_handle_new(rt, (tenure_handle_kind)bad_kinds[i], NULL) == NULL);
        EXPECT_EITHER(TENURE_INVALID_ARGUMENT, TENURE_UNSUPPORTED);
    }
    TT_CHECK(tenure_handle_count(rt) == before, "failed tenure_handle_new calls leaked handles");
}

/* ------------------------------------------------------------------ allocation */
static void test_alloc(void) {
    arm();
    TT_CHECK(tenure_alloc(rt, NULL) == NULL);
    EXPECT(TENURE_INVALID_TYPE, "tenure_alloc*");
    arm();
    TT_CHECK(tenure_alloc_array(rt, NULL, 4) == NULL);
    EXPECT(TENURE_INVALID_TYPE, "tenure_alloc_array");
    arm();
    TT_CHECK(tenure_alloc_pinned(rt, NULL) == NULL);
    EXPECT(TENURE_INVALID_TYPE, "tenure_alloc_pinned");
    arm();
    TT_CHECK(tenure_alloc_array_pinned(rt, NULL, 4) == NULL);
    EXPECT(TENURE_INVALID_TYPE, "tenure_alloc_array_pinned");

    /* a forged type that claims to belong to rt (zeroed, so it takes the slow path) */
    static union {
        struct tenure_type t;
        char pad[4096];
        uint64_t align;
    } fake;
    memset(&fake, 0, sizeof fake);
    fake.t.tenure__owner = rt;
    fake.t.tenure__fast_size = 0;
    arm();
    TT_CHECK(tenure_alloc(rt, &fake.t) == NULL, "allocated with a forged type");
    EXPECT(TENURE_INVALID_TYPE, "tenure_alloc*");
    arm();
    TT_CHECK(tenure_object_type(rt, NULL) == NULL);
    EXPECT(TENURE_INVALID_OBJECT, "tenure_object_type");

    /* absurd lengths */
    size_t lens[] = {SIZE_MAX, SIZE_MAX / 2, SIZE_MAX / 8, (SIZE_MAX - 15) / 8, SIZE_MAX / 8 + 1};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        arm();
        TT_CHECK(tenure_alloc_array(rt, refarr_t, lens[i]) == NULL, "ref array of %zu", lens[i]);
        EXPECT(TENURE_SIZE, "tenure_alloc_array");
        arm();
        TT_CHECK(tenure_alloc_array_pinned(rt, refarr_t, lens[i]) == NULL);
        EXPECT(TENURE_SIZE, "tenure_alloc_array_pinned");
    }
    size_t blens[] = {SIZE_MAX, SIZE_MAX - 7, SIZE_MAX - 16, SIZE_MAX / 2};
    for (size_t i = 0; i < sizeof blens / sizeof blens[0]; i++) {
        arm();
        TT_CHECK(tenure_alloc_array(rt, bytes_t, blens[i]) == NULL, "byte array of %zu", blens[i]);
        EXPECT(TENURE_SIZE, "tenure_alloc_array");
    }

    /* array type through tenure_alloc and fixed type through tenure_alloc_array */
    arm();
    TT_CHECK(tenure_alloc(rt, refarr_t) == NULL, "tenure_alloc accepted an array type");
    EXPECT_EITHER(TENURE_INVALID_TYPE, TENURE_INVALID_ARGUMENT);
    arm();
    TT_CHECK(tenure_alloc_pinned(rt, bytes_t) == NULL, "tenure_alloc_pinned accepted an array type");
    EXPECT_EITHER(TENURE_INVALID_TYPE, TENURE_INVALID_ARGUMENT);
    arm();
    TT_CHECK(tenure_alloc_array(rt, node_t, 3) == NULL, "tenure_alloc_array accepted a fixed type");
    EXPECT_EITHER(TENURE_INVALID_TYPE, TENURE_INVALID_ARGUMENT);
    arm();
    TT_CHECK(tenure_alloc_array_pinned(rt, node_t, 3) == NULL);
    EXPECT_EITHER(TENURE_INVALID_TYPE, TENURE_INVALID_ARGUMENT);

    /* and the instance still allocates; length 0 is fine */
    arm();
    void *z = tenure_alloc_array(rt, refarr_t, 0);
    TT_CHECK(z != NULL && tenure_array_length(z) == 0);
    TT_CHECK(tenure_object_size(rt, z) >= 16);
    tt_node *n = tt_node_new(rt, node_t, 5);
    TT_CHECK(tenure_object_size(rt, n) == sizeof(tt_node));
    EXPECT_QUIET();
}

/* ------------------------------------------------------------------ types */
static void test_types(void) {
    arm();
    TT_CHECK(tenure_type_register(rt, NULL) == NULL);
    EXPECT(TENURE_INVALID_ARGUMENT, "tenure_type_register");

    size_t offs[2] = {8, 16};
    tenure_type_desc d;
    struct {
        size_t size;
        size_t off;
        size_t count;
        const char *why;
    } bad[] = {
        {4, 0, 0, "size 4"},
        {0, 0, 0, "fixed type of size 0"},
        {sizeof(tenure_header) - 1, 0, 0, "size below a header"},
        {32, 32, 1, "offset == size"},
        {32, 28, 1, "offset straddles the end"},
        {32, SIZE_MAX, 1, "offset SIZE_MAX"},
        {32, 1000, 1, "offset far outside"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&d, 0, sizeof d);
        d.name = "bad";
        d.size = bad[i].size;
        offs[0] = bad[i].off;
        d.ref_offsets = bad[i].count ? offs : NULL;
        d.ref_count = bad[i].count;
        arm();
        TT_CHECK(tenure_type_register(rt, &d) == NULL, "registered a type with %s", bad[i].why);
        EXPECT(TENURE_INVALID_ARGUMENT, "tenure_type_register");
    }
    /* ref_count without offsets */
    memset(&d, 0, sizeof d);
    d.name = "bad";
    d.size = 32;
    d.ref_count = 2;
    arm();
    TT_CHECK(tenure_type_register(rt, &d) == NULL, "registered ref_count 2 with no offsets");
    EXPECT(TENURE_INVALID_ARGUMENT, "tenure_type_register");
    /* arrays: element size 0, element reference outside the element, odd header size */
    size_t eoff[1] = {8};
    memset(&d, 0, sizeof d);
    d.name = "bad_array";
    d.flags = TENURE_TYPE_ARRAY;
    d.elem_size = 0;
    arm();
    TT_CHECK(tenure_type_register(rt, &d) == NULL, "registered an array with elem_size 0");
    EXPECT(TENURE_INVALID_ARGUMENT, "tenure_type_register");
    d.elem_size = 8;
    d.elem_ref_offsets = eoff;
    d.elem_ref_count = 1;
    arm();
    TT_CHECK(tenure_type_register(rt, &d) == NULL, "registered an element reference at offset 8 of 8");
    EXPECT(TENURE_INVALID_ARGUMENT, "tenure_type_register");
    d.elem_ref_count = 0;
    d.elem_ref_offsets = NULL;
    d.size = 8;
    arm();
    TT_CHECK(tenure_type_register(rt, &d) == NULL, "registered an array with size 8");
    EXPECT(TENURE_INVALID_ARGUMENT, "tenure_type_register");

    /* valid: the name and the offsets are copied */
    char name[32] = "copied_name";
    size_t good[2] = {offsetof(tt_node, a), offsetof(tt_node, b)};
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = sizeof(tt_node);
    d.ref_offsets = good;
    d.ref_count = 2;
    arm();
    const tenure_type *t = tenure_type_register(rt, &d);
    TT_CHECK(t != NULL);
    EXPECT_QUIET();
    memset(name, 'X', sizeof name - 1);
    good[0] = good[1] = offsetof(tt_node, id); /* would be fatal if the collector read this */
    TT_CHECK(strcmp(tenure_type_name(t), "copied_name") == 0, "type name not copied: '%s'", tenure_type_name(t));
    /* array with header size 0 and with 16 are both fine */
    memset(&d, 0, sizeof d);
    d.name = "arr0";
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS;
    d.elem_size = 3;
    TT_CHECK(tenure_type_register(rt, &d) != NULL);
    d.size = sizeof(tenure_array_header);
    TT_CHECK(tenure_type_register(rt, &d) != NULL);
    EXPECT_QUIET();

    tt_node *a = NULL, *b = NULL;
    TENURE_FRAME(rt, f, a, b);
    for (uint64_t i = 0; i < 20000; i++) {
        b = (tt_node *)tenure_alloc(rt, t);
        TT_CHECK(b != NULL);
        b->id = i + 1;
        tenure_write_ref(rt, b, &b->a, a);
        tt_node_seal(b);
        a = b;
    }
    b = NULL;
    tt_collect(rt, 0, 0);
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    for (uint64_t i = 20000; i >= 1; i--, a = a->a) {
        TT_CHECK(a != NULL && a->id == i && a->check == tt_node_sum(a),
                 "objects of a type whose offsets array was overwritten are broken at %" PRIu64, i);
        TT_CHECK(tenure_object_type(rt, a) == t);
    }
    TENURE_FRAME_POP(rt, f);
}

/* ------------------------------------------------------------------ non-objects */
static void test_non_objects(void) {
    tt_node *obj = NULL;
    TENURE_FRAME(rt, f, obj);
    obj = tt_node_new(rt, node_t, 77);
    void *m = calloc(1, 256);
    TT_CHECK(m != NULL);
    long on_stack[8] = {0};
    void *bad[] = {m, (char *)m + 16, (char *)obj + 8, (char *)obj + 16, NULL, on_stack};
    const char *names[] = {"malloc'd", "malloc'd + 16", "interior (+8)", "interior (+16)", "NULL", "stack"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        arm();
        TT_CHECK(tenure_is_object(rt, bad[i]) == 0, "%s pointer accepted as an object", names[i]);
        EXPECT_QUIET();
        arm();
        TT_CHECK(tenure_object_size(rt, bad[i]) == 0, "%s", names[i]);
        EXPECT(TENURE_INVALID_OBJECT, "tenure_object_size");
        arm();
        TT_CHECK(tenure_object_type(rt, bad[i]) == NULL, "%s", names[i]);
        EXPECT(TENURE_INVALID_OBJECT, "tenure_object_type");
        arm();
        TT_CHECK(tenure_object_generation(rt, bad[i]) == -1, "%s", names[i]);
        EXPECT(TENURE_INVALID_OBJECT, "tenure_object_generation");
        if (bad[i] != NULL) {
            arm();
            TT_CHECK(tenure_handle_new(rt, TENURE_HANDLE_STRONG, bad[i]) == NULL, "handle to %s", names[i]);
            EXPECT(TENURE_INVALID_OBJECT, "tenure_handle_new");
            arm();
            TT_CHECK(tenure_handle_new(rt, TENURE_HANDLE_PINNED, bad[i]) == NULL, "pinned handle to %s", names[i]);
            EXPECT(TENURE_INVALID_OBJECT, "tenure_handle_new");
        }
    }
    /* a handle keeps its value when set to a non-object */
    tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, obj);
    TT_CHECK(h != NULL);
    arm();
    TT_CHECK_RESULT(tenure_handle_set(rt, h, m), TENURE_INVALID_OBJECT);
    EXPECT(TENURE_INVALID_OBJECT, "tenure_handle_set");
    TT_CHECK(tenure_handle_get(rt, h) == obj);
    TT_CHECK_RESULT(tenure_handle_free(rt, h), TENURE_OK);
    /* the real object is fine */
    arm();
    TT_CHECK(tenure_is_object(rt, obj) && tenure_object_type(rt, obj) == node_t &&
             tenure_object_size(rt, obj) == sizeof(tt_node) && tenure_object_generation(rt, obj) == 0);
    EXPECT_QUIET();
    free(m);
    TENURE_FRAME_POP(rt, f);
}

/* ------------------------------------------------------------------ frames */
static void test_frames(void) {
    void *x = NULL, *y = NULL;
    arm();
    tenure_frame f1 = {NULL, 1, NULL}, f2 = {NULL, 1, NULL};
    void **const s1[] = {&x}, **const s2[] = {&y};
    f1.slots = s1;
    f2.slots = s2;
    tenure_frame_push(rt, &f1);
    tenure_frame_push(rt, &f2);
    EXPECT_QUIET();
    tenure_frame_pop(rt, &f1); /* out of order */
    TT_CHECK(log_.count >= 1, "popping frames out of order was not reported");
    TT_CHECK(log_.last == TENURE_STATE || log_.last == TENURE_INVALID_ARGUMENT, "out-of-order pop reported as %d (%s)",
             (int)log_.last, tenure_strerror(log_.last));
    TT_CHECK(strcmp(log_.function, "tenure_frame_pop") == 0, "reported by '%s'", log_.function);
    /* clean up whatever the library did (it may or may not have unwound) */
    tenure_frame_pop(rt, &f2);
    tenure_frame_pop(rt, &f1);
    arm();
    /* popping with no frame pushed */
    tenure_frame f3 = {NULL, 1, NULL};
    void **const s3[] = {&x};
    f3.slots = s3;
    tenure_frame_push(rt, &f3);
    tenure_frame_pop(rt, &f3);
    EXPECT_QUIET();
    tenure_frame_pop(rt, &f3);
    TT_CHECK(log_.count == 1, "popping a frame twice reported %d times", log_.count);
    TT_CHECK(log_.last == TENURE_STATE || log_.last == TENURE_INVALID_ARGUMENT);
    /* frames still work */
    arm();
    tt_node *kept = NULL;
    TENURE_FRAME(rt, f, kept);
    kept = tt_node_new(rt, node_t, 4242);
    tenure_handle *w = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, kept);
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    TT_CHECK_NODE(rt, node_t, kept, 4242);
    TT_CHECK(tenure_handle_get(rt, w) == kept);
    TENURE_FRAME_POP(rt, f);
    EXPECT_QUIET();
    tt_collect(rt, -1, 0);
    TT_CHECK(tenure_handle_get(rt, w) == NULL, "object of a popped frame still alive");
    tenure_handle_free(rt, w);
}

/* ------------------------------------------------------------------ roots and collect */
static int scan_calls;
static tenure_result nested_result = TENURE_OK;
static int nested_hook_count;
static void nested_scan(tenure_runtime *r, tenure_visitor *v, void *ctx) {
    (void)v;
    (void)ctx;
    if (scan_calls++ == 0) {
        int before = log_.count;
        nested_result = tenure_collect(r, 0, 0);
        nested_hook_count = log_.count - before;
    }
}
static void noop_scan(tenure_runtime *r, tenure_visitor *v, void *ctx) {
    (void)r;
    (void)v;
    (void)ctx;
}

static void test_roots_and_collect(void) {
    static void *slots[2];
    tenure_root_area *a = tenure_root_area_add(rt, slots, 2);
    TT_CHECK(a != NULL);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, a), TENURE_OK);
    arm();
    TT_CHECK(tenure_root_area_remove(rt, a) != TENURE_OK, "root area removed twice");
    TT_CHECK(log_.count == 1);
    arm();
    TT_CHECK(tenure_root_area_remove(rt, NULL) != TENURE_OK);
    TT_CHECK(log_.count == 1);
    arm();
    TT_CHECK(tenure_root_area_add(rt, NULL, 4) == NULL, "root area with NULL slots");
    EXPECT(TENURE_INVALID_ARGUMENT, "tenure_root_area_add");

    tenure_root_scanner *s = tenure_root_scanner_add(rt, noop_scan, NULL);
    TT_CHECK(s != NULL);
    TT_CHECK_RESULT(tenure_root_scanner_remove(rt, s), TENURE_OK);
    arm();
    TT_CHECK(tenure_root_scanner_remove(rt, s) != TENURE_OK, "root scanner removed twice");
    TT_CHECK(log_.count == 1);
    arm();
    TT_CHECK(tenure_root_scanner_add(rt, NULL, NULL) == NULL, "root scanner without a function");
    EXPECT(TENURE_INVALID_ARGUMENT, "tenure_root_scanner_add");

    int bad_gens[] = {3, 4, 7, -2, 1000};
    for (size_t i = 0; i < sizeof bad_gens / sizeof bad_gens[0]; i++) {
        arm();
        TT_CHECK_RESULT(tenure_collect(rt, bad_gens[i], 0), TENURE_INVALID_ARGUMENT);
        EXPECT(TENURE_INVALID_ARGUMENT, "tenure_collect");
    }

    /* collect from inside a collection (a root scanner) */
    s = tenure_root_scanner_add(rt, nested_scan, NULL);
    TT_CHECK(s != NULL);
    arm();
    uint64_t gcs = tt_stats(rt).gc_count;
    TT_CHECK_RESULT(tenure_collect(rt, -1, 0), TENURE_OK);
    TT_CHECK(scan_calls >= 1, "root scanner not called");
    TT_CHECK(nested_result == TENURE_STATE, "tenure_collect inside a collection returned %d (%s)", (int)nested_result,
             tenure_strerror(nested_result));
    TT_CHECK(nested_hook_count == 1 && log_.last == TENURE_STATE && strcmp(log_.function, "tenure_collect") == 0,
             "nested collect not reported");
    TT_CHECK(tt_stats(rt).gc_count == gcs + 1, "the nested collect ran a GC");
    TT_CHECK_RESULT(tenure_root_scanner_remove(rt, s), TENURE_OK);
}

/* ------------------------------------------------------------------ threads */
static tenure_result fin_wait_result = TENURE_OK;
static void waiting_finalizer(tenure_runtime *r, void *obj) {
    (void)obj;
    fin_wait_result = tenure_wait_for_pending_finalizers(r);
}

static void *detach_unattached(void *arg) {
    (void)arg;
    arm();
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_STATE);
    EXPECT(TENURE_STATE, "tenure_thread_detach");
    arm();
    tenure_blocking_enter(rt);
    EXPECT(TENURE_STATE, "tenure_blocking_enter");
    return NULL;
}

static void test_threads(void) {
    arm();
    tenure_blocking_leave(rt);
    EXPECT(TENURE_STATE, "tenure_blocking_leave");
    arm();
    tenure_blocking_enter(rt);
    EXPECT_QUIET();
    tenure_blocking_enter(rt);
    EXPECT(TENURE_STATE, "tenure_blocking_enter");
    arm();
    TT_CHECK(tenure_alloc_array(rt, bytes_t, 8) == NULL, "allocation inside a blocking section");
    EXPECT(TENURE_STATE, "tenure_alloc_array");
    arm();
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_STATE);
    EXPECT(TENURE_STATE, "tenure_thread_detach");
    arm();
    tenure_blocking_leave(rt);
    EXPECT_QUIET();
    TT_CHECK(tenure_alloc_array(rt, bytes_t, 8) != NULL, "allocation after the blocking section");
    void *kept = NULL;
    TENURE_FRAME(rt, f, kept);
    arm();
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_STATE); /* with a frame pushed */
    EXPECT(TENURE_STATE, "tenure_thread_detach");
    TENURE_FRAME_POP(rt, f);

    pthread_t th;
    TT_CHECK(pthread_create(&th, NULL, detach_unattached, NULL) == 0);
    TT_CHECK(pthread_join(th, NULL) == 0);

    /* a finalizer that waits for the finalizers (mode 1: it runs here) */
    tenure_type_desc d = {.name = "waiter",
                          .size = 16,
                          .flags = TENURE_TYPE_FINALIZABLE,
                          .finalize = waiting_finalizer};
    const tenure_type *waiter_t = tenure_type_register(rt, &d);
    TT_CHECK(waiter_t != NULL);
    TT_CHECK(tenure_alloc(rt, waiter_t) != NULL);
    TT_CHECK_RESULT(tenure_collect(rt, 2, 0), TENURE_OK);
    arm();
    TT_CHECK(tenure_run_pending_finalizers(rt) >= 1, "the waiting finalizer did not run");
    TT_CHECK(fin_wait_result == TENURE_STATE, "tenure_wait_for_pending_finalizers from a finalizer returned %d",
             (int)fin_wait_result);
    EXPECT(TENURE_STATE, "tenure_wait_for_pending_finalizers");
}

/* With GCFinalizeMode 0, a finalizer (on the finalizer thread) may not detach that thread. */
static tenure_result fin_detach_result = TENURE_OK;
static int fin_detach_ran;
static void detaching_finalizer(tenure_runtime *r, void *obj) {
    (void)obj;
    fin_detach_result = tenure_thread_detach(r);
    __atomic_store_n(&fin_detach_ran, 1, __ATOMIC_RELEASE);
}

static void test_finalizer_thread_detach(void) {
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCFinalizeMode = 0;
    tt_errlog log = {0};
    tenure_runtime *r = tt_create(&cfg, &log);
    tenure_type_desc d = {.name = "detacher",
                          .size = 16,
                          .flags = TENURE_TYPE_FINALIZABLE,
                          .finalize = detaching_finalizer};
    const tenure_type *t = tenure_type_register(r, &d);
    TT_CHECK(t != NULL && tenure_alloc(r, t) != NULL);
    TT_CHECK_RESULT(tenure_wait_for_pending_finalizers(r), TENURE_OK);
    TT_CHECK(__atomic_load_n(&fin_detach_ran, __ATOMIC_ACQUIRE), "the finalizer did not run");
    TT_CHECK(fin_detach_result == TENURE_STATE, "the finalizer thread detached itself (%d)", (int)fin_detach_result);
    TT_CHECK(tenure_thread_count(r) == 2, "%zu threads attached", tenure_thread_count(r));
    tenure_destroy(r);
}

/* ------------------------------------------------------------------ configuration */
static void test_bad_config(void) {
    tenure_config cfg;
    struct {
        const char *why;
        int which;
        uint64_t value;
    } bad[] = {
        {"GCRegionSize not a power of two", 0, 3u << 20},
        {"GCRegionSize below 256 KiB", 0, 64u << 10},
        {"GCRegionSize 0", 0, 0},
        {"GCCompactMode 3", 1, 3},
        {"GCStressGeneration 5", 2, 5},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tenure_config_init(&cfg);
        if (bad[i].which == 0)
            cfg.GCRegionSize = bad[i].value;
        if (bad[i].which == 1)
            cfg.GCCompactMode = (uint32_t)bad[i].value;
        if (bad[i].which == 2)
            cfg.GCStressGeneration = (int32_t)bad[i].value;
        tenure_result r = TENURE_OK;
        tenure_runtime *x = tenure_create(&cfg, &r);
        TT_EXPECT(x == NULL, "tenure_create accepted %s", bad[i].why);
        if (x != NULL) {
            tenure_destroy(x);
            continue;
        }
        TT_EXPECT(r == TENURE_INVALID_ARGUMENT, "%s: result %d (%s)", bad[i].why, (int)r, tenure_strerror(r));
        TT_CHECK(tenure_create(&cfg, NULL) == NULL); /* result may be NULL */
    }
    /* and a valid unusual one: 256 KiB regions */
    tenure_config_init(&cfg);
    cfg.GCRegionSize = 256u << 10;
    tenure_result r = TENURE_NOMEM;
    tenure_runtime *x = tenure_create(&cfg, &r);
    TT_CHECK(x != NULL && r == TENURE_OK);
    tenure_destroy(x);
}

/* ------------------------------------------------------------------ heap hard limit */
typedef struct kib {
    tenure_header header;
    struct kib *next;
    char payload[1024 - 2 * sizeof(void *)];
} kib;

static void test_hard_limit(void) {
    tt_errlog log = {.fatal = 0};
    tenure_config cfg;
    tenure_config_init(&cfg);
    cfg.GCHeapHardLimit = 32u << 20;
    tenure_result r = TENURE_NOMEM;
    tenure_runtime *x = tenure_create(&cfg, &r);
    TT_CHECK(x != NULL, "tenure_create with a 32 MiB hard limit: %s", tenure_strerror(r));
    tenure_set_error_hook(x, tt_hook, &log);
    static const size_t offs[] = {offsetof(kib, next)};
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = "kib";
    d.size = sizeof(kib);
    d.ref_offsets = offs;
    d.ref_count = 1;
    const tenure_type *t = tenure_type_register(x, &d);
    const tenure_type *bt = tt_register_bytes(x);
    TT_CHECK(t != NULL);

    /* garbage only: 256 MiB of it must never fail */
    for (size_t i = 0; i < (256u << 20) / sizeof(kib); i++)
        TT_CHECK(tenure_alloc(x, t) != NULL, "garbage allocation %zu failed under the hard limit: %s", i, log.message);
    TT_CHECK(log.count == 0);

    /* live data: eventually NOMEM */
    kib *head = NULL;
    TENURE_FRAME(x, f, head);
    size_t live = 0;
    for (;;) {
        kib *k = (kib *)tenure_alloc(x, t);
        if (k == NULL)
            break;
        tenure_write_ref(x, k, &k->next, head);
        head = k;
        live++;
        TT_CHECK(live < (256u << 20) / sizeof(kib), "32 MiB hard limit not enforced");
    }
    TT_CHECK(log.count == 1 && log.last == TENURE_NOMEM, "hook: %d calls, last %d", log.count, (int)log.last);
    TT_CHECK(strncmp(log.function, "tenure_alloc", 12) == 0, "NOMEM reported by '%s'", log.function);
    TT_CHECK(tenure_last_error(x) == TENURE_NOMEM);
    tenure_stats s = tt_stats(x);
    printf("  hard limit 32 MiB: %zu KiB live at NOMEM, committed %" PRIu64 " KiB, heap %" PRIu64 " KiB\n", live,
           s.committed_bytes >> 10, s.heap_bytes >> 10);
    TT_CHECK(s.committed_bytes <= cfg.GCHeapHardLimit, "committed %" PRIu64 " > limit", s.committed_bytes);
    TT_CHECK(live * sizeof(kib) >= (8u << 20), "NOMEM with only %zu KiB live", live);
    tt_errlog_reset(&log);
    tenure_clear_error(x);
    TT_CHECK(tenure_alloc_array(x, bt, 64u << 20) == NULL, "a 64 MiB array under a 32 MiB limit");
    TT_CHECK(log.count == 1 && log.last == TENURE_NOMEM);
    /* the live list is intact */
    size_t count = 0;
    for (kib *p = head; p != NULL; p = p->next)
        count++;
    TT_CHECK(count == live);
    /* drop it: allocation works again */
    head = NULL;
    tt_errlog_reset(&log);
    tenure_clear_error(x);
    tt_collect(x, -1, TENURE_COLLECT_COMPACT);
    for (size_t i = 0; i < live / 2; i++) {
        kib *k = (kib *)tenure_alloc(x, t);
        TT_CHECK(k != NULL, "allocation after recovery failed at %zu", i);
        tenure_write_ref(x, k, &k->next, head);
        head = k;
    }
    TT_CHECK(log.count == 0);
    TENURE_FRAME_POP(x, f);
    tenure_destroy(x);
}

/* ------------------------------------------------------------------ strerror, NULL hook */
static void test_strerror(void) {
    static const struct {
        int code;
        const char *text;
    } table[] = {
#define ROW(name, value, text) {value, text},
        TENURE_RESULTS(ROW)
#undef ROW
    };
    size_t n = sizeof table / sizeof table[0];
    TT_CHECK(n == 11);
    for (size_t i = 0; i < n; i++) {
        const char *s = tenure_strerror((tenure_result)table[i].code);
        TT_CHECK(s != NULL && s[0] != '\0', "code %d", table[i].code);
        TT_CHECK(strcmp(s, table[i].text) == 0, "tenure_strerror(%d) = '%s'", table[i].code, s);
        for (size_t k = 0; k < i; k++)
            TT_CHECK(strcmp(s, tenure_strerror((tenure_result)table[k].code)) != 0, "codes %d and %d share a text",
                     table[i].code, table[k].code);
    }
    int outside[] = {11, 12, 1000, -1};
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
        const char *s = tenure_strerror((tenure_result)outside[i]);
        TT_CHECK(s != NULL && strcmp(s, "unknown result") == 0, "tenure_strerror(%d) = '%s'", outside[i],
                 s ? s : "(null)");
    }
}

static void test_null_hook(void) {
    tenure_set_error_hook(rt, NULL, NULL);
    tenure_clear_error(rt);
    TT_CHECK(tenure_alloc(rt, NULL) == NULL);
    TT_CHECK(tenure_last_error(rt) == TENURE_INVALID_TYPE, "last error without a hook: %d", (int)tenure_last_error(rt));
    tenure_clear_error(rt);
    tenure_set_error_hook(rt, tt_hook, &log_);
}

int main(void) {
    tt_rng_init("misuse");
    double t0 = tt_now();
    tenure_result r = TENURE_NOMEM;
    tenure_config cfg;
    tt_config(&cfg);        /* precise: the frame test checks that a popped frame's object dies */
    cfg.GCFinalizeMode = 1; /* finalizers run here, when the test says */
    rt = tenure_create(&cfg, &r);
    TT_CHECK(rt != NULL && r == TENURE_OK);
    tenure_set_error_hook(rt, tt_hook, &log_);
    TT_CHECK(tenure_last_error(rt) == TENURE_OK);
    TT_CHECK(tt_stats(rt).gc_count == 0);
    node_t = tt_register_node(rt);
    refarr_t = tt_register_ref_array(rt);
    bytes_t = tt_register_bytes(rt);

    test_strerror();
    test_handles();
    test_alloc();
    test_types();
    test_non_objects();
    test_frames();
    test_roots_and_collect();
    test_null_hook();
    test_threads();
    test_finalizer_thread_detach();
    test_bad_config();
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    tenure_destroy(rt);
    test_hard_limit();
    return tt_finish("misuse", t0);
}
