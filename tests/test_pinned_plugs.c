/*
 * pinned_plugs: a pinned object keeps only itself in place (gc/plan.c, "Plugs and pins").
 *
 * 1. A run of live neighbours around an object pinned by a handle: after a compacting GC the
 *    pinned object has not moved and its live neighbours before and after it have (the old
 *    collector kept the whole run, one plug, in place). Every reference to them is right: the
 *    plug after a pinned one keeps its move distance in the pin's record, not in a gap.
 * 2. A pinned node inside a 2 MB tree (the "stale stack word" case of issue 13): once the tree
 *    has been promoted, later gen0 GCs find almost nothing surviving in gen0 (the old collector
 *    kept the whole tree in a demoted gen0 region and re-marked it every GC).
 * 3. Random runs of neighbours with random pins (pinned runs too), random links, collected in
 *    every generation with compaction; pins come and go between rounds. Seeded.
 */
#include "test_util.h"

static tenure_runtime *rt;
static const tenure_type *node_t, *bytes_t;

static void garbage_bytes(size_t bytes) {
    for (size_t done = 0; done < bytes;) {
        size_t len = (size_t)tt_rand_range(16, 400);
        TT_CHECK(tenure_alloc_array(rt, bytes_t, len) != NULL);
        done += len + 16;
    }
}

static uint64_t gc_count(void) { return tt_stats(rt).gc_count; }

/* ---- 1: neighbours of a pinned object move ---- */
enum { CHAIN = 200, PIN_AT = 100 };

static void neighbours_move(void) {
    void **chain = calloc(CHAIN, sizeof *chain);
    TT_CHECK(chain != NULL);
    tenure_root_area *ra = tenure_root_area_add(rt, chain, CHAIN);
    TT_CHECK(ra != NULL);
    int checked = 0;
    for (int attempt = 0; attempt < 20 && !checked; attempt++) {
        tt_collect(rt, -1, TENURE_COLLECT_COMPACT); /* an empty gen0 to start from */
        uint64_t before = gc_count();
        garbage_bytes(64 * 1024); /* room below the run for it to slide into */
        for (size_t i = 0; i < CHAIN; i++) {
            tt_node *p = tt_node_new(rt, node_t, i + 1);
            if (i > 0)
                tenure_write_ref(rt, p, &p->a, chain[i - 1]);
            tt_node_seal(p);
            chain[i] = p;
        }
        tenure_handle *pin = tenure_handle_new(rt, TENURE_HANDLE_PINNED, chain[PIN_AT]);
        TT_CHECK(pin != NULL);
        uintptr_t old[CHAIN];
        int contiguous = 1;
        for (size_t i = 0; i < CHAIN; i++) {
            old[i] = (uintptr_t)chain[i];
            if (i > 0 && old[i] != old[i - 1] + tenure_object_size(rt, chain[i - 1]))
                contiguous = 0;
        }
        tt_collect(rt, 0, TENURE_COLLECT_COMPACT);
        for (size_t i = 0; i < CHAIN; i++) {
            TT_CHECK_NODE(rt, node_t, chain[i], i + 1);
            tt_node *p = chain[i];
            TT_CHECK(p->a == (i > 0 ? chain[i - 1] : NULL), "node %zu: link to its neighbour broken", i);
        }
        TT_CHECK((uintptr_t)chain[PIN_AT] == old[PIN_AT], "the pinned object moved");
        TT_CHECK(tenure_handle_get(rt, pin) == chain[PIN_AT]);
        /* the premise: one run of neighbours, and no GC but ours since it was built */
        if (contiguous && gc_count() == before + 1) {
            size_t moved_before = 0, moved_after = 0;
            for (size_t i = 0; i < CHAIN; i++) {
                if (i < PIN_AT)
                    moved_before += (uintptr_t)chain[i] != old[i];
                if (i > PIN_AT)
                    moved_after += (uintptr_t)chain[i] != old[i];
            }
            printf("  neighbours of a pinned object: %zu of %d before it moved, %zu of %d after it\n", moved_before,
                   PIN_AT, moved_after, CHAIN - PIN_AT - 1);
            TT_CHECK(moved_before == PIN_AT, "live neighbours in front of a pinned object stayed in place");
            TT_CHECK(moved_after == CHAIN - PIN_AT - 1, "live neighbours after a pinned object stayed in place");
            checked = 1;
        }
        TT_CHECK_RESULT(tenure_handle_free(rt, pin), TENURE_OK);
        memset(chain, 0, CHAIN * sizeof *chain);
    }
    TT_CHECK(checked || tt_stress_mode(), "never got one contiguous run without a GC in between");
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    free(chain);
}

/* ---- 2: a pinned node in a big tree is not re-marked by every gen0 GC ---- */
static tt_node *tree(int depth, uint64_t *id) {
    tt_node *n = tt_node_new(rt, node_t, ++*id);
    if (depth > 0) {
        TENURE_FRAME(rt, f, n);
        tt_node *l = tree(depth - 1, id);
        tenure_write_ref(rt, n, &n->a, l);
        tt_node *r = tree(depth - 1, id);
        tenure_write_ref(rt, n, &n->b, r);
        TENURE_FRAME_POP(rt, f);
    }
    tt_node_seal(n);
    return n;
}

static void pinned_tree(void) {
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    /* a gen1 region with room: gen0 survivors go there first, and a gen0 region left holding
     * only pinned plugs is demoted (stays in gen0) */
    tenure_handle *keep = tenure_handle_new(rt, TENURE_HANDLE_STRONG, tt_node_new(rt, node_t, 1));
    TT_CHECK(keep != NULL);
    tt_collect(rt, 0, 0);
    TT_CHECK(tenure_object_generation(rt, tenure_handle_get(rt, keep)) == 1);
    uint64_t id = 0;
    tt_node *root = tree(15, &id); /* 65535 nodes, about 2.5 MB */
    tenure_handle *pin = tenure_handle_new(rt, TENURE_HANDLE_PINNED, root->a->b->a);
    TT_CHECK(pin != NULL);
    uintptr_t pinned_at = (uintptr_t)tenure_handle_get(rt, pin);
    /* the tree is reachable only through the pinned node (as from a stale stack word) */
    tt_collect(rt, 0, 0);
    uint64_t worst = 0;
    for (int i = 0; i < 8; i++) {
        garbage_bytes(256 * 1024);
        tt_collect(rt, 0, 0);
        uint64_t promoted = tt_stats(rt).promoted_bytes;
        if (i > 0 && promoted > worst)
            worst = promoted;
    }
    tt_node *p = tenure_handle_get(rt, pin);
    TT_CHECK((uintptr_t)p == pinned_at, "the pinned node moved");
    uint64_t n = 0;
    tt_node *stack[64];
    int sp = 0;
    stack[sp++] = p;
    while (sp) { /* the pinned node's subtree is intact */
        tt_node *x = stack[--sp];
        TT_CHECK(tenure_is_object(rt, x) && tt_node_sum(x) == x->check);
        n++;
        if (x->a)
            stack[sp++] = x->a;
        if (x->b)
            stack[sp++] = x->b;
    }
    TT_CHECK(n == (1u << 13) - 1, "the pinned subtree has %" PRIu64 " nodes", n);
    printf("  pinned node in a tree: later gen0 GCs keep at most %" PRIu64 " bytes\n", worst);
    TT_CHECK(worst < 64 * 1024 || tt_stress_mode(),
             "gen0 GCs keep %" PRIu64 " bytes: the pinned node's neighbours stay in gen0", worst);
    TT_CHECK_RESULT(tenure_handle_free(rt, pin), TENURE_OK);
    TT_CHECK_RESULT(tenure_handle_free(rt, keep), TENURE_OK);
}

/* ---- 3: random runs, random pins ---- */
enum { MAXN = 3000 };
static void **nodes;         /* root area: every node */
static tenure_handle **pins; /* a pinned handle per node, or NULL */
static uintptr_t *pin_addr;
static uint64_t *a_id, *b_id; /* ids the links must name (0: NULL) */

static void check_nodes(size_t n, const char *when) {
    for (size_t i = 0; i < n; i++) {
        tt_node *p = nodes[i];
        TT_CHECK_NODE(rt, node_t, p, i + 1);
        TT_CHECK((p->a ? p->a->id : 0) == a_id[i], "%s: node %zu: link a broken", when, i);
        TT_CHECK((p->b ? p->b->id : 0) == b_id[i], "%s: node %zu: link b broken", when, i);
        if (pins[i]) {
            TT_CHECK((uintptr_t)p == pin_addr[i], "%s: pinned node %zu moved", when, i);
            TT_CHECK(tenure_handle_get(rt, pins[i]) == p);
        }
    }
}

static void set_pin(size_t i, int on) {
    if (on && !pins[i]) {
        pins[i] = tenure_handle_new(rt, TENURE_HANDLE_PINNED, nodes[i]);
        TT_CHECK(pins[i] != NULL);
        pin_addr[i] = (uintptr_t)nodes[i];
    } else if (!on && pins[i]) {
        TT_CHECK_RESULT(tenure_handle_free(rt, pins[i]), TENURE_OK);
        pins[i] = NULL;
    }
}

static void set_link(size_t i, size_t j, int which) {
    tt_node *p = nodes[i];
    tenure_write_ref(rt, p, which ? &p->b : &p->a, nodes[j]);
    tt_node_seal(p);
    (which ? b_id : a_id)[i] = j + 1;
}

static void random_runs(void) {
    size_t n = tt_scaled(MAXN, 300);
    nodes = calloc(n, sizeof *nodes);
    pins = calloc(n, sizeof *pins);
    pin_addr = calloc(n, sizeof *pin_addr);
    a_id = calloc(n, sizeof *a_id);
    b_id = calloc(n, sizeof *b_id);
    TT_CHECK(nodes && pins && pin_addr && a_id && b_id);
    tenure_root_area *ra = tenure_root_area_add(rt, nodes, n);
    TT_CHECK(ra != NULL);
    for (size_t i = 0; i < n; i++) { /* runs of 1..40 neighbours between garbage */
        if (tt_rand_below(20) == 0)
            garbage_bytes((size_t)tt_rand_range(16, 4096));
        nodes[i] = tt_node_new(rt, node_t, i + 1);
        if (i > 0 && tt_rand_below(2))
            set_link(i, (size_t)tt_rand_below(i), 0);
        if (tt_rand_below(8) == 0)
            set_pin(i, 1);
        if (i > 0 && pins[i - 1] && tt_rand_below(3) == 0)
            set_pin(i, 1); /* pinned runs */
    }
    for (size_t i = 0; i < n; i++)
        if (tt_rand_below(3) == 0)
            set_link(i, (size_t)tt_rand_below(n), 1);
    check_nodes(n, "built");
    uint64_t moved = 0;
    size_t rounds = tt_scaled(60, 10);
    for (size_t r = 0; r < rounds; r++) {
        uintptr_t *before = calloc(n, sizeof *before);
        TT_CHECK(before != NULL);
        for (size_t i = 0; i < n; i++)
            before[i] = (uintptr_t)nodes[i];
        int g = (int)tt_rand_below(3);
        tt_collect(rt, g, TENURE_COLLECT_COMPACT);
        char when[48];
        snprintf(when, sizeof when, "round %zu (gen%d GC)", r, g);
        check_nodes(n, when);
        for (size_t i = 0; i < n; i++)
            moved += (uintptr_t)nodes[i] != before[i];
        free(before);
        for (size_t k = 0; k < n / 20; k++) { /* pins come and go, links change */
            size_t i = (size_t)tt_rand_below(n);
            set_pin(i, tt_rand_below(4) == 0);
            set_link(i, (size_t)tt_rand_below(n), (int)tt_rand_below(2));
        }
        for (size_t k = 0; k < n / 10; k++) { /* fresh neighbours for some */
            size_t i = (size_t)tt_rand_below(n);
            set_pin(i, 0);
            uint64_t a = a_id[i], b = b_id[i];
            nodes[i] = tt_node_new(rt, node_t, i + 1);
            if (a)
                set_link(i, a - 1, 0);
            if (b)
                set_link(i, b - 1, 1);
            for (size_t j = 0; j < n; j++) { /* whoever linked the old node i now names the new */
                tt_node *q = nodes[j];
                if (a_id[j] == i + 1 && q->a != nodes[i])
                    set_link(j, i, 0);
                if (b_id[j] == i + 1 && q->b != nodes[i])
                    set_link(j, i, 1);
            }
            if (tt_rand_below(6) == 0)
                set_pin(i, 1);
            garbage_bytes((size_t)tt_rand_range(16, 2048));
        }
        TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    }
    printf("  random runs: %zu nodes, %zu rounds, %" PRIu64 " moves\n", n, rounds, moved);
    TT_CHECK(moved > 0, "nothing moved around the pins");
    for (size_t i = 0; i < n; i++)
        set_pin(i, 0);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    free(nodes);
    free(pins);
    free(pin_addr);
    free(a_id);
    free(b_id);
}

int main(void) {
    tt_rng_init("pinned_plugs");
    double t0 = tt_now();
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    if (getenv("TENURE_GCgen0size") == NULL)
        cfg.GCgen0size = 16u << 20;
    rt = tt_create(&cfg, &log);
    node_t = tt_register_node(rt);
    bytes_t = tt_register_bytes(rt);
    neighbours_move();
    pinned_tree();
    random_runs();
    tenure_destroy(rt);
    return tt_finish("pinned_plugs", t0);
}
