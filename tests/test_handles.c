/*
 * handles: the handle kinds beyond strong, pinned and weak, with the .NET semantics.
 *
 * Dependent: the secondary lives exactly as long as the primary (chains, cycles, a primary
 * in gen2 keeping a young secondary across ephemeral GCs). Variable: its kind changes at run
 * time. RefCounted: strong while the callback says the count is nonzero. AsyncPinned: the
 * object and the elements of a reference array stay in place. SizedRef: the bytes a known
 * graph holds.
 */
#include "test_util.h"

static tenure_runtime *rt;
static const tenure_type *node_t, *refarr_t;
static tt_errlog log_ = {.fatal = 1};

/* a weak handle to watch whether an object is still alive after a GC */
static tenure_handle *watch(void *obj) {
    tenure_handle *w = tenure_handle_new(rt, TENURE_HANDLE_WEAK_LONG, obj);
    TT_CHECK(w != NULL);
    return w;
}
static int alive(tenure_handle *w) { return tenure_handle_get(rt, w) != NULL; }

static void full_gc(void) { TT_CHECK(tenure_collect(rt, 2, TENURE_COLLECT_COMPACT) == TENURE_OK); }

static void test_dependent(void) {
    tt_node *a = NULL, *b = NULL, *c = NULL;
    TENURE_FRAME(rt, f, a, b, c);
    a = tt_node_new(rt, node_t, 1);
    b = tt_node_new(rt, node_t, 2);
    c = tt_node_new(rt, node_t, 3);
    tenure_handle *ab = tenure_handle_new_dependent(rt, a, b), *bc = tenure_handle_new_dependent(rt, b, c);
    TT_CHECK(ab && bc);
    tenure_handle *wa = watch(a), *wb = watch(b), *wc = watch(c);
    b = c = NULL; /* only A is rooted: the chain keeps B and C */
    for (int i = 0; i < 3; i++)
        full_gc();
    TT_CHECK(alive(wb) && alive(wc), "a dependent chain A->B->C lost B or C while A lives");
    TT_CHECK(tenure_handle_get(rt, ab) == a && tenure_handle_get_secondary(rt, ab) == tenure_handle_get(rt, wb));
    TT_CHECK_NODE(rt, node_t, (tt_node *)tenure_handle_get(rt, wc), 3);
    a = NULL; /* the primary dies: everything goes, and the handles are cleared */
    full_gc();
    TT_CHECK(!alive(wa) && !alive(wb) && !alive(wc), "the chain outlived its primary");
    TT_CHECK(tenure_handle_get(rt, ab) == NULL && tenure_handle_get_secondary(rt, ab) == NULL);
    TT_CHECK(tenure_handle_get(rt, bc) == NULL && tenure_handle_get_secondary(rt, bc) == NULL);
    /* a cycle A->B, B->A with nothing rooted must not keep itself alive */
    a = tt_node_new(rt, node_t, 4);
    b = tt_node_new(rt, node_t, 5);
    tenure_handle *x = tenure_handle_new_dependent(rt, a, b), *y = tenure_handle_new_dependent(rt, b, a);
    tenure_handle *w4 = watch(a), *w5 = watch(b);
    a = b = NULL;
    full_gc();
    TT_CHECK(!alive(w4) && !alive(w5), "a cycle of dependent handles kept itself alive");
    /* a gen2 primary keeps a young secondary across ephemeral GCs */
    a = tt_node_new(rt, node_t, 6);
    full_gc();
    full_gc();
    TT_CHECK(tenure_object_generation(rt, a) == 2);
    tenure_handle *young = tenure_handle_new_dependent(rt, a, tt_node_new(rt, node_t, 7));
    for (int i = 0; i < 20; i++) {
        for (int k = 0; k < 2000; k++)
            tt_node_new(rt, node_t, 100);
        TT_CHECK(tenure_collect(rt, i % 3 == 2 ? 1 : 0, 0) == TENURE_OK);
        TT_CHECK_NODE(rt, node_t, (tt_node *)tenure_handle_get_secondary(rt, young), 7);
    }
    /* no primary: the secondary is not kept, and the handle is cleared (never dangling) */
    b = tt_node_new(rt, node_t, 8);
    tenure_handle *orphan = tenure_handle_new_dependent(rt, NULL, b), *w8 = watch(b);
    b = NULL;
    full_gc();
    TT_CHECK(!alive(w8), "a dependent handle without a primary kept its secondary");
    TT_CHECK(tenure_handle_get_secondary(rt, orphan) == NULL, "a dependent handle without a primary: secondary left");
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    tenure_handle *list[] = {ab, bc, wa, wb, wc, x, y, w4, w5, young, orphan, w8};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        TT_CHECK(tenure_handle_free(rt, list[i]) == TENURE_OK);
    TENURE_FRAME_POP(rt, f);
    printf("  dependent: chains, cycles, young secondaries of old primaries, no primary\n");
}

static void test_variable(void) {
    for (int k = 0; k < 2000; k++)
        tt_node_new(rt, node_t, 999); /* garbage before it: compaction would move it */
    tenure_handle *v = tenure_handle_new(rt, TENURE_HANDLE_VARIABLE, tt_node_new(rt, node_t, 10));
    tenure_handle *w = watch(tenure_handle_get(rt, v));
    TT_CHECK(tenure_handle_set_variable_kind(rt, v, TENURE_HANDLE_PINNED) == TENURE_OK);
    void *obj = tenure_handle_get(rt, v);
    full_gc();
    TT_CHECK(tenure_handle_get(rt, v) == obj, "a variable handle set to pinned let its object move");
    TT_CHECK(tenure_handle_set_variable_kind(rt, v, TENURE_HANDLE_STRONG) == TENURE_OK);
    full_gc();
    TT_CHECK(alive(w), "a variable handle set to strong let its object die");
    TT_CHECK(tenure_handle_set_variable_kind(rt, v, TENURE_HANDLE_WEAK_SHORT) == TENURE_OK);
    full_gc();
    TT_CHECK(!alive(w) && tenure_handle_get(rt, v) == NULL, "a variable handle set to weak kept its object");
    log_.fatal = 0;
    TT_CHECK(tenure_handle_set_variable_kind(rt, v, TENURE_HANDLE_DEPENDENT) == TENURE_INVALID_ARGUMENT);
    TT_CHECK(tenure_handle_set_variable_kind(rt, w, TENURE_HANDLE_STRONG) == TENURE_INVALID_HANDLE);
    log_.fatal = 1;
    tenure_handle_free(rt, v);
    tenure_handle_free(rt, w);
    printf("  variable: strong, pinned, weak short\n");
}

/* the refcount of object 20 lives here */
static int g_count;
static int refcount(void *obj, void *ctx) {
    (void)ctx;
    return ((tt_node *)obj)->id == 20 ? g_count : 0;
}

static void test_refcounted(void) {
    tenure_set_refcount_callback(rt, refcount, NULL);
    tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_REFCOUNTED, tt_node_new(rt, node_t, 20));
    tenure_handle *w = watch(tenure_handle_get(rt, h));
    g_count = 2;
    full_gc();
    full_gc();
    TT_CHECK(alive(w), "a refcounted handle with count 2 let its object die");
    TT_CHECK_NODE(rt, node_t, (tt_node *)tenure_handle_get(rt, h), 20);
    g_count = 0;
    full_gc();
    TT_CHECK(!alive(w) && tenure_handle_get(rt, h) == NULL, "a refcounted handle with count 0 kept its object");
    tenure_handle_free(rt, h);
    tenure_handle_free(rt, w);
    tenure_set_refcount_callback(rt, NULL, NULL);
    printf("  refcounted: strong with a count, weak without\n");
}

static void test_async_pinned(void) {
    enum { N = 64 };
    void *arr = tenure_alloc_array(rt, refarr_t, N);
    TT_CHECK(arr != NULL);
    tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_ASYNC_PINNED, arr);
    uintptr_t where[N];
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < 50; k++)
            tt_node_new(rt, node_t, 999); /* garbage between the elements */
        void *n = tt_node_new(rt, node_t, 30 + (uint64_t)i);
        arr = tenure_handle_get(rt, h);
        tenure_write_ref(rt, arr, &((void **)tenure_array_data(arr))[i], n);
    }
    arr = tenure_handle_get(rt, h);
    uintptr_t arr_at = (uintptr_t)arr;
    for (int i = 0; i < N; i++)
        where[i] = (uintptr_t)((void **)tenure_array_data(arr))[i];
    for (int g = 0; g < 5; g++) {
        full_gc();
        arr = tenure_handle_get(rt, h);
        TT_CHECK((uintptr_t)arr == arr_at, "an async-pinned array moved");
        for (int i = 0; i < N; i++) {
            tt_node *n = ((tt_node **)tenure_array_data(arr))[i];
            TT_CHECK((uintptr_t)n == where[i], "element %d of an async-pinned array moved", i);
            TT_CHECK_NODE(rt, node_t, n, 30 + (uint64_t)i);
        }
    }
    tenure_handle_free(rt, h);
    printf("  async pinned: the array and its elements stay in place\n");
}

static void test_sized_ref(void) {
    enum { N = 1000 };
    tt_node *head = NULL, *n = NULL;
    TENURE_FRAME(rt, f, head, n);
    for (int i = 0; i < N; i++) {
        n = tt_node_new(rt, node_t, 40 + (uint64_t)i);
        tenure_write_ref(rt, n, &n->a, head);
        tt_node_seal(n);
        head = n;
    }
    size_t node_size = tenure_object_size(rt, head);
    tenure_handle *s = tenure_handle_new(rt, TENURE_HANDLE_SIZED_REF, head);
    head = n = NULL;
    full_gc();
    uint64_t bytes = tenure_handle_sized_ref_bytes(rt, s);
    TT_CHECK(bytes == (uint64_t)N * node_size, "a sized ref over %d nodes of %zu bytes reports %llu bytes", N,
             node_size, (unsigned long long)bytes);
    TT_CHECK_NODE(rt, node_t, (tt_node *)tenure_handle_get(rt, s), 40 + N - 1);
    tenure_handle_free(rt, s);
    TENURE_FRAME_POP(rt, f);
    printf("  sized ref: %llu bytes for %d nodes\n", (unsigned long long)bytes, N);
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("handles");
    rt = tt_create(NULL, &log_);
    node_t = tt_register_node(rt);
    refarr_t = tt_register_ref_array(rt);
    test_dependent();
    test_variable();
    test_refcounted();
    test_async_pinned();
    test_sized_ref();
    TT_CHECK(tenure_verify_heap(rt) == TENURE_OK);
    tenure_destroy(rt);
    return tt_finish("handles", t0);
}
