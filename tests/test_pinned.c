/*
 * pinned: objects from tenure_alloc_pinned (the POH) and objects held by TENURE_HANDLE_PINNED
 * handles never move, over many compacting GCs (GCCompactMode=1 and TENURE_COLLECT_COMPACT),
 * while the objects around them (interleaved with garbage) are compacted and stay intact.
 * Some objects are kept alive by their pinned handle alone; one pinned handle is created with
 * NULL and set later. After the pinned handles are freed the objects may move (and with
 * interleaved garbage and forced compaction, some do).
 */
#include "test_util.h"

enum { NORMAL, POH, PINHANDLE, PINHANDLE_ONLY };

static tenure_runtime *rt;
static const tenure_type *node_t, *bytes_t;
static size_t n;
static void **live; /* root area */
static int *kind;
static uintptr_t *addr; /* address at creation (pinned) or last recorded */
static uint64_t *b_ids;
static tenure_handle **handles;
static uint64_t next_id;

static int is_pinned(size_t i) { return kind[i] != NORMAL; }
static int linked_from_next(size_t i) { return kind[i] != PINHANDLE_ONLY; }

static tt_node *obj(size_t i) {
    return (tt_node *)(kind[i] == PINHANDLE_ONLY ? tenure_handle_get(rt, handles[i]) : live[i]);
}

static void garbage(size_t count) {
    for (size_t k = 0; k < count; k++) {
        void *g = tenure_alloc_array(rt, bytes_t, (size_t)tt_rand_range(16, 600));
        TT_CHECK(g != NULL);
    }
}

static void check_all(int pins_active, const char *when) {
    for (size_t i = 0; i < n; i++) {
        tt_node *p = obj(i);
        TT_CHECK(p != NULL, "%s: object %zu lost", when, i);
        TT_CHECK_NODE(rt, node_t, p, i + 1);
        if (i > 0 && linked_from_next(i - 1))
            TT_CHECK(p->a == obj(i - 1), "%s: object %zu: reference to its neighbour broken", when, i);
        else
            TT_CHECK(p->a == NULL);
        if (b_ids[i] != 0)
            TT_CHECK_NODE(rt, node_t, p->b, b_ids[i]);
        else
            TT_CHECK(p->b == NULL);
        int gen = tenure_object_generation(rt, p);
        if (kind[i] == POH) {
            TT_CHECK(gen == 4, "pinned-heap object in generation %d", gen);
            TT_CHECK((uintptr_t)p == addr[i], "%s: pinned-heap object %zu moved", when, i);
        } else {
            TT_CHECK(gen >= 0 && gen <= 2, "object %zu in generation %d", i, gen);
        }
        if (pins_active && (kind[i] == PINHANDLE || kind[i] == PINHANDLE_ONLY)) {
            TT_CHECK((uintptr_t)p == addr[i], "%s: object %zu held by a pinned handle moved", when, i);
            TT_CHECK(tenure_handle_get(rt, handles[i]) == p);
        }
    }
}

static void mutate(size_t count) {
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, nn);
    for (size_t k = 0; k < count; k++) {
        nn = tt_node_new(rt, node_t, ++next_id);
        size_t i = (size_t)tt_rand_below(n);
        tt_node *p = obj(i);
        tenure_write_ref(rt, p, &p->b, nn);
        tt_node_seal(p);
        b_ids[i] = nn->id;
    }
    TENURE_FRAME_POP(rt, f);
}

int main(void) {
    tt_rng_init("pinned");
    double t0 = tt_now();
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCCompactMode = 1;
    if (getenv("TENURE_GCgen0size") == NULL)
        cfg.GCgen0size = 4u << 20;
    rt = tt_create(&cfg, &log);
    node_t = tt_register_node(rt);
    bytes_t = tt_register_bytes(rt);

    n = tt_scaled(4000, 400);
    live = calloc(n, sizeof *live);
    kind = calloc(n, sizeof *kind);
    addr = calloc(n, sizeof *addr);
    b_ids = calloc(n, sizeof *b_ids);
    handles = calloc(n, sizeof *handles);
    TT_CHECK(live && kind && addr && b_ids && handles);
    tenure_root_area *ra = tenure_root_area_add(rt, live, n);
    TT_CHECK(ra != NULL);
    next_id = n + 1;

    size_t pinned_handles = 0;
    tenure_handle *late = tenure_handle_new(rt, TENURE_HANDLE_PINNED, NULL); /* set later */
    TT_CHECK(late != NULL && tenure_handle_get(rt, late) == NULL);
    for (size_t i = 0; i < n; i++) {
        garbage(3);
        tt_node *p;
        if (i % 10 == 0) {
            kind[i] = POH;
            p = (tt_node *)tenure_alloc_pinned(rt, node_t);
            TT_CHECK(p != NULL);
            TT_CHECK(tenure_object_generation(rt, p) == 4);
        } else {
            p = (tt_node *)tenure_alloc(rt, node_t);
            TT_CHECK(p != NULL);
            TT_CHECK(tenure_object_generation(rt, p) == 0);
            if (i % 10 == 5) {
                kind[i] = i % 20 == 5 ? PINHANDLE_ONLY : PINHANDLE;
                handles[i] = tenure_handle_new(rt, TENURE_HANDLE_PINNED, p);
                TT_CHECK(handles[i] != NULL);
                pinned_handles++;
            }
        }
        p->id = i + 1;
        if (kind[i] != PINHANDLE_ONLY)
            live[i] = p;
        if (i > 0 && linked_from_next(i - 1))
            tenure_write_ref(rt, p, &p->a, obj(i - 1));
        tt_node_seal(p);
        addr[i] = (uintptr_t)p;
    }
    /* a pinned handle set after creation pins too */
    size_t late_i = 7;
    TT_CHECK_RESULT(tenure_handle_set(rt, late, live[late_i]), TENURE_OK);
    uintptr_t late_addr = (uintptr_t)live[late_i];
    check_all(1, "after building");

    size_t rounds = tt_scaled(100, 20);
    uint64_t moved_normal = 0;
    for (size_t r = 0; r < rounds; r++) {
        garbage(tt_scaled(4000, 400));
        mutate(20);
        garbage(500);
        uint64_t g = tt_rand_below(4);
        if (g == 0)
            tt_collect(rt, 0, 0);
        else if (g == 1)
            tt_collect(rt, 1, TENURE_COLLECT_COMPACT);
        else
            tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
        char when[32];
        snprintf(when, sizeof when, "round %zu", r);
        check_all(1, when);
        TT_CHECK((uintptr_t)live[late_i] == late_addr, "object pinned by a late-set handle moved");
        TT_CHECK(tenure_handle_get(rt, late) == live[late_i]);
        for (size_t i = 0; i < n; i++)
            if (!is_pinned(i) && i != late_i && (uintptr_t)live[i] != addr[i]) {
                moved_normal++;
                addr[i] = (uintptr_t)live[i];
            }
    }
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    tenure_stats s = tt_stats(rt);
    printf("  %zu objects (%zu pinned by handles, %zu on the POH), %zu rounds, %" PRIu64 " GCs, %" PRIu64
           " moves of unpinned objects, pinned_objects %" PRIu64 "\n",
           n, pinned_handles, (n + 9) / 10, rounds, s.gc_count, moved_normal, s.pinned_objects);
    check_all(1, "final full GC");
    TT_CHECK(moved_normal > 0, "nothing was compacted around the pinned objects");
    TT_CHECK(s.sweeping_gcs == 0);
    TT_CHECK(s.pinned_objects >= pinned_handles,
             "the last (full) GC saw %" PRIu64 " pinned objects, %zu are pinned by handles", s.pinned_objects,
             pinned_handles);
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);

    /* unpin: free the pinned handles; the handle-only objects keep a strong handle */
    for (size_t i = 0; i < n; i++) {
        if (handles[i] == NULL)
            continue;
        void *p = tenure_handle_get(rt, handles[i]);
        TT_CHECK_RESULT(tenure_handle_free(rt, handles[i]), TENURE_OK);
        handles[i] = NULL;
        if (kind[i] == PINHANDLE_ONLY) {
            handles[i] = tenure_handle_new(rt, TENURE_HANDLE_STRONG, p);
            TT_CHECK(handles[i] != NULL);
        }
    }
    TT_CHECK_RESULT(tenure_handle_free(rt, late), TENURE_OK);
    for (size_t i = 0; i < n; i++)
        addr[i] = (uintptr_t)obj(i);
    uint64_t moved_unpinned = 0;
    for (int k = 0; k < 3; k++) {
        garbage(2000);
        tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
        check_all(0, "after unpinning");
    }
    for (size_t i = 0; i < n; i++)
        if ((kind[i] == PINHANDLE || kind[i] == PINHANDLE_ONLY) && (uintptr_t)obj(i) != addr[i])
            moved_unpinned++;
    for (size_t i = 0; i < n; i++)
        if (kind[i] == POH)
            TT_CHECK((uintptr_t)obj(i) == addr[i], "pinned-heap object moved");
    printf("  after unpinning: %" PRIu64 " of %zu formerly pinned objects moved\n", moved_unpinned, pinned_handles);
    TT_CHECK(moved_unpinned > 0, "no formerly pinned object moved in 3 compacting full GCs");

    for (size_t i = 0; i < n; i++)
        if (handles[i] != NULL)
            TT_CHECK_RESULT(tenure_handle_free(rt, handles[i]), TENURE_OK);
    TT_CHECK(tenure_handle_count(rt) == 0);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
    free(live);
    free(kind);
    free(addr);
    free(b_ids);
    free(handles);
    printf("pinned: OK (%.2f s)\n", tt_now() - t0);
    return 0;
}
