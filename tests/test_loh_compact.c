/*
 * loh_compact: compaction of the large object heap on request.
 *
 * Many large objects (byte arrays with a checksummed pattern, and reference arrays holding
 * small nodes) are allocated; every other one is dropped, which fragments the LOH.
 *
 *  A. without TENURE_COLLECT_COMPACT_LOH (GCLOHCompact=0) LOH objects never move: full GCs
 *     (plain and TENURE_COLLECT_COMPACT), ephemeral GCs, ephemeral GCs with the LOH flag
 *     (it only applies to gen2 GCs) and allocation-triggered GCs.
 *  B. tenure_collect(rt, 2, TENURE_COLLECT_COMPACT_LOH): gen[3].size shrinks, survivors move
 *     and stay intact (checksums, lengths, the small nodes their reference arrays hold),
 *     references to them from small objects, from root areas and from strong and weak handles
 *     are updated; an LOH object held by a pinned handle does not move. The heap verifies.
 *  C. after B, without the flag again nothing moves; freed LOH space is reused.
 *  D. TENURE_COLLECT_AGGRESSIVE compacts the LOH as well (pinned object still in place).
 */
#include "test_util.h"

typedef struct holder {
    tenure_header header;
    void *ref; /* a large object */
    uint64_t id;
} holder;

static tenure_runtime *rt;
static const tenure_type *node_t, *refarr_t, *bytes_t, *holder_t;
static size_t n;
static void **large;   /* root area: the large objects (NULL when dropped) */
static void **holders; /* root area: one small holder per large object */
static uint64_t *ids;
static size_t *lens;
static int *is_refs; /* reference array (1) or byte array (0) */
static tenure_handle **strong, **weak;
static tenure_handle *pin_h;
static size_t pin_i;
static uintptr_t pin_addr;
static uintptr_t *addr;

static const tenure_type *register_holder(void) {
    static const size_t offs[] = {offsetof(holder, ref)};
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = "holder";
    d.size = sizeof(holder);
    d.ref_offsets = offs;
    d.ref_count = 1;
    const tenure_type *t = tenure_type_register(rt, &d);
    TT_CHECK(t != NULL);
    return t;
}

static uint64_t word_of(uint64_t id, size_t k) { return tt_mix64(id * 0x100000001b3ull + k); }

static void fill_large(size_t i) {
    void *a = large[i];
    if (is_refs[i]) {
        /* small nodes: node k has id ids[i] * 100000 + k */
        tt_node *nd = NULL;
        TENURE_FRAME(rt, f, nd);
        for (size_t k = 0; k < lens[i]; k += 97) {
            nd = tt_node_new(rt, node_t, ids[i] * 100000 + k);
            a = large[i];
            tenure_write_ref(rt, a, &tt_refs(a)[k], nd);
        }
        TENURE_FRAME_POP(rt, f);
    } else {
        uint64_t *w = tenure_array_data(a);
        for (size_t k = 0; k < lens[i] / 8; k++)
            w[k] = word_of(ids[i], k);
    }
}

static void check_large(size_t i, const char *when) {
    void *a = large[i];
    TT_CHECK(a != NULL);
    TT_CHECK(tenure_is_object(rt, a), "%s: large object %zu is not an object", when, i);
    TT_CHECK(tenure_object_generation(rt, a) == 3, "%s: large object %zu in generation %d", when, i,
             tenure_object_generation(rt, a));
    TT_CHECK(tenure_array_length(a) == lens[i], "%s: large object %zu: length %zu, expected %zu", when, i,
             tenure_array_length(a), lens[i]);
    if (is_refs[i]) {
        TT_CHECK(tenure_object_type(rt, a) == refarr_t);
        for (size_t k = 0; k < lens[i]; k++) {
            if (k % 97 == 0)
                TT_CHECK_NODE(rt, node_t, tt_refs(a)[k], ids[i] * 100000 + k);
            else
                TT_CHECK(tt_refs(a)[k] == NULL, "%s: large ref array %zu: element %zu not NULL", when, i, k);
        }
    } else {
        TT_CHECK(tenure_object_type(rt, a) == bytes_t);
        const uint64_t *w = tenure_array_data(a);
        for (size_t k = 0; k < lens[i] / 8; k++)
            TT_CHECK(w[k] == word_of(ids[i], k), "%s: large object %zu: word %zu changed", when, i, k);
    }
    holder *h = holders[i];
    TT_CHECK(h != NULL && tenure_object_type(rt, h) == holder_t && h->id == ids[i]);
    TT_CHECK(h->ref == a, "%s: a small object's reference to large object %zu not updated (%p, object at %p)", when, i,
             h->ref, a);
    if (strong[i])
        TT_CHECK(tenure_handle_get(rt, strong[i]) == a, "%s: strong handle to %zu not updated", when, i);
    if (weak[i])
        TT_CHECK(tenure_handle_get(rt, weak[i]) == a, "%s: weak handle to %zu not updated or cleared", when, i);
    if (i == pin_i) {
        TT_CHECK(tenure_handle_get(rt, pin_h) == a);
        TT_CHECK((uintptr_t)a == pin_addr, "%s: the LOH object held by a pinned handle moved", when);
    }
}

/* Check every survivor; count and record moves. */
static size_t check_all(const char *when) {
    size_t moved = 0;
    for (size_t i = 0; i < n; i++) {
        if (!large[i])
            continue;
        check_large(i, when);
        if ((uintptr_t)large[i] != addr[i])
            moved++;
        addr[i] = (uintptr_t)large[i];
    }
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    return moved;
}

static void small_garbage(size_t count) {
    for (size_t k = 0; k < count; k++)
        TT_CHECK(tenure_alloc_array(rt, bytes_t, (size_t)tt_rand_range(8, 300)) != NULL);
}

static void build(void) {
    holder *h = NULL;
    TENURE_FRAME(rt, f, h);
    for (size_t i = 0; i < n; i++) {
        ids[i] = i + 1;
        is_refs[i] = i % 4 == 1;
        lens[i] = is_refs[i] ? (size_t)tt_rand_range(12000, 40000) : (size_t)tt_rand_range(90000, 600000) & ~(size_t)7;
        large[i] = is_refs[i] ? tenure_alloc_array(rt, refarr_t, lens[i]) : tenure_alloc_array(rt, bytes_t, lens[i]);
        TT_CHECK(large[i] != NULL, "large allocation %zu failed", i);
        TT_CHECK(tenure_object_generation(rt, large[i]) == 3);
        fill_large(i);
        h = tenure_alloc(rt, holder_t);
        TT_CHECK(h != NULL);
        h->id = ids[i];
        tenure_write_ref(rt, h, &h->ref, large[i]);
        holders[i] = h;
        if (i % 3 == 0) {
            strong[i] = tenure_handle_new(rt, TENURE_HANDLE_STRONG, large[i]);
            TT_CHECK(strong[i] != NULL);
        }
        if (i % 5 == 0) {
            weak[i] = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, large[i]);
            TT_CHECK(weak[i] != NULL);
        }
        addr[i] = (uintptr_t)large[i];
        small_garbage(20);
    }
    TENURE_FRAME_POP(rt, f);
}

static void drop(size_t i) {
    large[i] = NULL;
    holders[i] = NULL;
    if (strong[i])
        TT_CHECK_RESULT(tenure_handle_free(rt, strong[i]), TENURE_OK);
    if (weak[i])
        TT_CHECK_RESULT(tenure_handle_free(rt, weak[i]), TENURE_OK);
    strong[i] = weak[i] = NULL;
}

static uint64_t loh_size(void) { return tt_stats(rt).gen[3].size; }

static void expect_no_moves(const char *when) {
    size_t moved = check_all(when);
    TT_CHECK(moved == 0, "%s: %zu LOH objects moved without TENURE_COLLECT_COMPACT_LOH", when, moved);
}

int main(void) {
    tt_rng_init("loh_compact");
    double t0 = tt_now();
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    TT_CHECK(cfg.GCLOHCompact == 0 || getenv("TENURE_GCLOHCompact") != NULL);
    if (getenv("TENURE_GCLOHCompact") != NULL && cfg.GCLOHCompact) {
        printf("loh_compact: SKIPPED: TENURE_GCLOHCompact is set in the environment\n");
        return 0;
    }
    rt = tt_create(&cfg, &log);
    node_t = tt_register_node(rt);
    refarr_t = tt_register_ref_array(rt);
    bytes_t = tt_register_bytes(rt);
    holder_t = register_holder();

    n = tt_scaled(160, 160); /* not smaller: the fragmented LOH must span more than one LOH region */
    large = calloc(n, sizeof *large);
    holders = calloc(n, sizeof *holders);
    ids = calloc(n, sizeof *ids);
    lens = calloc(n, sizeof *lens);
    is_refs = calloc(n, sizeof *is_refs);
    strong = calloc(n, sizeof *strong);
    weak = calloc(n, sizeof *weak);
    addr = calloc(n, sizeof *addr);
    TT_CHECK(large && holders && ids && lens && is_refs && strong && weak && addr);
    tenure_root_area *ra1 = tenure_root_area_add(rt, large, n);
    tenure_root_area *ra2 = tenure_root_area_add(rt, holders, n);
    TT_CHECK(ra1 && ra2);

    build();
    /* the pinned one: in the second half, with a dropped neighbour in front of it */
    pin_i = (n / 2) | 1;
    pin_i = pin_i + 1 < n ? pin_i + 1 : pin_i - 1; /* even: survives */
    pin_h = tenure_handle_new(rt, TENURE_HANDLE_PINNED, large[pin_i]);
    TT_CHECK(pin_h != NULL);
    pin_addr = (uintptr_t)large[pin_i];
    tt_collect(rt, -1, 0);
    expect_no_moves("after building");

    /* fragment: drop every other one */
    size_t dropped = 0;
    uint64_t dropped_bytes = 0;
    for (size_t i = 1; i < n; i += 2) {
        dropped_bytes += tenure_object_size(rt, large[i]);
        drop(i);
        dropped++;
    }

    /* A: no LOH moves without the flag */
    tt_collect(rt, 0, 0);
    expect_no_moves("gen0 GC");
    tt_collect(rt, 2, 0);
    expect_no_moves("full GC");
    uint64_t frag_size = loh_size();
    tt_collect(rt, 2, TENURE_COLLECT_COMPACT);
    expect_no_moves("full compacting GC (no LOH flag)");
    tt_collect(rt, 0, TENURE_COLLECT_COMPACT_LOH);
    expect_no_moves("gen0 GC with the LOH flag");
    tt_collect(rt, 1, TENURE_COLLECT_COMPACT | TENURE_COLLECT_COMPACT_LOH);
    expect_no_moves("gen1 GC with the LOH flag");
    small_garbage(tt_scaled(100000, 20000));
    expect_no_moves("allocation-triggered GCs");
    tenure_stats sf = tt_stats(rt);
    printf("  A: %zu large objects, %zu dropped (%.1f MiB); LOH spans %.1f MiB (free %.1f MiB) after full GCs; %" PRIu64
           " GCs so far, none moved an LOH object\n",
           n, dropped, dropped_bytes / 1048576.0, frag_size / 1048576.0, sf.gen[3].free_bytes / 1048576.0, sf.gc_count);

    /* B: compact the LOH */
    tt_collect(rt, 2, 0);
    uint64_t before = loh_size();
    tt_collect(rt, 2, TENURE_COLLECT_COMPACT_LOH);
    uint64_t after = loh_size();
    size_t moved = check_all("LOH compaction");
    tenure_stats sc = tt_stats(rt);
    printf("  B: TENURE_COLLECT_COMPACT_LOH: LOH %.1f -> %.1f MiB (free %.1f MiB); %zu of %zu survivors moved; "
           "pinned one in place\n",
           before / 1048576.0, after / 1048576.0, sc.gen[3].free_bytes / 1048576.0, moved, n - dropped);
    TT_EXPECT(after < before, "gen[3].size did not shrink: %" PRIu64 " -> %" PRIu64, before, after);
    TT_EXPECT(before - after >= dropped_bytes / 4, "gen[3].size shrank by %" PRIu64 " bytes only; %" PRIu64 " dropped",
              before > after ? before - after : 0, dropped_bytes);
    TT_EXPECT(moved > 0, "no LOH object moved in an LOH compaction");

    /* C: nothing moves without the flag; freed space is reused */
    tt_collect(rt, 2, 0);
    tt_collect(rt, 2, TENURE_COLLECT_COMPACT);
    tt_collect(rt, 1, 0);
    expect_no_moves("after LOH compaction, without the flag");
    uint64_t size_c = loh_size();
    for (size_t i = 1; i < n; i += 2) {
        ids[i] = 1000 + i;
        is_refs[i] = 0;
        lens[i] = 100000;
        large[i] = tenure_alloc_array(rt, bytes_t, lens[i]);
        TT_CHECK(large[i] != NULL);
        fill_large(i);
        holders[i] = tenure_alloc(rt, holder_t);
        TT_CHECK(holders[i] != NULL);
        ((holder *)holders[i])->id = ids[i];
        tenure_write_ref(rt, holders[i], &((holder *)holders[i])->ref, large[i]);
        addr[i] = (uintptr_t)large[i];
    }
    tt_collect(rt, 2, 0);
    expect_no_moves("after refilling");
    printf("  C: refilled %zu x 100 KB: LOH %.1f -> %.1f MiB\n", dropped, size_c / 1048576.0, loh_size() / 1048576.0);

    /* D: aggressive compacts the LOH too */
    for (size_t i = 0; i < n; i += 3)
        if (i != pin_i && large[i])
            drop(i);
    before = loh_size();
    tt_collect(rt, 2, TENURE_COLLECT_AGGRESSIVE);
    after = loh_size();
    moved = check_all("aggressive GC");
    printf("  D: aggressive: LOH %.1f -> %.1f MiB, %zu moved\n", before / 1048576.0, after / 1048576.0, moved);
    TT_EXPECT(after <= before, "an aggressive GC grew the LOH: %" PRIu64 " -> %" PRIu64, before, after);
    TT_EXPECT(moved > 0, "an aggressive GC moved no LOH object"); /* (the LOH may fit one region already) */

    /* unpin: the formerly pinned object may move now; everything intact */
    TT_CHECK_RESULT(tenure_handle_free(rt, pin_h), TENURE_OK);
    pin_h = NULL;
    pin_i = (size_t)-1;
    tt_collect(rt, 2, TENURE_COLLECT_COMPACT_LOH);
    check_all("after unpinning");

    for (size_t i = 0; i < n; i++)
        if (large[i])
            drop(i);
    TT_CHECK(tenure_handle_count(rt) == 0);
    tt_collect(rt, 2, TENURE_COLLECT_COMPACT_LOH);
    TT_CHECK(tt_stats(rt).gen[3].size < 1u << 20, "an empty LOH spans %" PRIu64 " bytes", tt_stats(rt).gen[3].size);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra1), TENURE_OK);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra2), TENURE_OK);
    tenure_destroy(rt);
    free(large);
    free(holders);
    free(ids);
    free(lens);
    free(is_refs);
    free(strong);
    free(weak);
    free(addr);
    return tt_finish("loh_compact", t0);
}
