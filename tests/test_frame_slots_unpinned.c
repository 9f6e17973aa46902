/*
 * frame_slots_unpinned (issue 13): with GCConservativeStack = 1, a stack word that is a slot of
 * one of the thread's shadow-stack frames is a precise root, not a conservative one: the
 * object it refers to is marked and moved (the frame is updated), not pinned.
 *
 *  A. 64 nodes, each after some garbage, held only by a local array on the stack whose
 *     elements are the slots of one frame, across tenure_collect(rt, 1, COMPACT): at least 3/4
 *     of those still in gen0 before it move (before issue 13's change none did: the scan
 *     found each of them in the array and pinned it; the test then fails with 0 moved), and
 *     every one keeps its id and checksum. Not all: a stale copy elsewhere on the stack (a
 *     register spilled by a callee, or HeapVerify's walk) may still pin a few, as it should.
 *     GCs that GCStress forces during the fill may promote nodes first: a round with fewer
 *     than a quarter of them in gen0 is skipped (under GCStress every round may be).
 *  B. the same frame popped before the GC: the nodes, now held only by the array on the
 *     stack, are pinned (the scan skips only live frames' slots): the GC pins at least as many
 *     objects as there are nodes in gen0, and every node is still in place with its id and
 *     checksum.
 *
 *  C. Deep recursion (an interpreter's): DEPTH levels, each with a frame of two slots holding
 *     new gen0 nodes, then a compacting gen1 GC at the bottom: the scan skips every level's
 *     slots, however many frames (before issue 38's change only the innermost 256 slots were
 *     skipped: the other levels' nodes were all pinned); fewer than a quarter of the nodes are
 *     pinned in a release build, fewer than three quarters in an unoptimized one (stale copies
 *     in spilled registers and temporaries pin some, as they should), and every node keeps its
 *     id.
 *
 * Not a STRESS test (its quick run checks A in every round); run by hand with
 * TENURE_HeapVerify=1 TENURE_GCStress=500 it passes too.
 */
#include "test_util.h"
#include <stdbool.h>

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

#define NODES 64
#define LEAST_MOVED 48

/* Addresses the test remembers are kept scrambled, so that the scan does not take them for
 * references. */
#define HIDE(x) ((uintptr_t)(x) ^ (uintptr_t)0xa5a5a5a5a5a5a5a5ull)
#define SHOW(x) ((void *)((uintptr_t)(x) ^ (uintptr_t)0xa5a5a5a5a5a5a5a5ull))

static tenure_runtime *rt;
static const tenure_type *node_t, *bytes_t;
static uintptr_t hidden[NODES];

static void garbage(size_t count) {
    for (size_t k = 0; k < count; k++)
        TT_CHECK(tenure_alloc_array(rt, bytes_t, (size_t)tt_rand_range(16, 400)) != NULL);
}

/* Fill objs (the frame's slots) with nodes, garbage in front of each; remember where they are. */
static void fill(tt_node **objs, uint64_t base_id) {
    for (size_t i = 0; i < NODES; i++) {
        garbage((size_t)tt_rand_range(1, 8));
        objs[i] = tt_node_new(rt, node_t, base_id + i);
    }
    for (size_t i = 0; i < NODES; i++)
        hidden[i] = HIDE(objs[i]);
}

static size_t moved(tt_node **objs) {
    size_t n = 0;
    for (size_t i = 0; i < NODES; i++)
        n += (void *)objs[i] != SHOW(hidden[i]);
    return n;
}

/* Nodes in gen0 now, which a compacting GC moves to gen1 unless they are pinned (a GC that
 * GCStress forced during the fill may have promoted some already; those may stay in place). */
static bool young[NODES];

static size_t note_young(tt_node **objs) {
    size_t n = 0;
    for (size_t i = 0; i < NODES; i++) {
        young[i] = tenure_object_generation(rt, objs[i]) == 0;
        n += young[i];
    }
    return n;
}

static size_t young_moved(tt_node **objs) {
    size_t n = 0;
    for (size_t i = 0; i < NODES; i++)
        n += young[i] && (void *)objs[i] != SHOW(hidden[i]);
    return n;
}

/* Returns the young nodes that moved; *eligible: the young nodes. */
/* A frame naming every element of objs (both in the caller's stack frame). */
static void push_frame_of(tt_node **objs, void ***slots, tenure_frame *frame) {
    for (size_t i = 0; i < NODES; i++)
        slots[i] = (void **)&objs[i];
    *frame = (tenure_frame){NULL, NODES, (void **const *)slots};
    tenure_frame_push(rt, frame);
}

static NOINLINE size_t held_by_frame(int round, size_t *eligible) {
    tt_node *objs[NODES] = {0};
    void **slots[NODES];
    tenure_frame frame;
    push_frame_of(objs, slots, &frame);
    uint64_t base_id = (uint64_t)round * 1000u;
    fill(objs, base_id);
    *eligible = note_young(objs);
    tt_collect(rt, 1, TENURE_COLLECT_COMPACT);
    size_t n = young_moved(objs);
    for (size_t i = 0; i < NODES; i++)
        TT_CHECK_NODE(rt, node_t, objs[i], base_id + i);
    tenure_frame_pop(rt, &frame);
    return n;
}

/* B: the same array after its frame is popped (the stack alone holds the nodes): each is
 * pinned; returns the GC's pinned objects (*eligible: the nodes in gen0 before it). */
static NOINLINE size_t held_by_stack_only(int round, size_t *eligible) {
    tt_node *objs[NODES] = {0};
    void **slots[NODES];
    tenure_frame frame;
    push_frame_of(objs, slots, &frame);
    uint64_t base_id = (uint64_t)round * 1000u + 500u;
    fill(objs, base_id);
    tenure_frame_pop(rt, &frame); /* no GC can run between the fill and here */
    *eligible = note_young(objs);
    tt_collect(rt, 1, TENURE_COLLECT_COMPACT);
    size_t pinned = (size_t)tt_stats(rt).pinned_objects;
    TT_CHECK(moved(objs) == 0, "the array was changed without a frame");
    for (size_t i = 0; i < NODES; i++)
        TT_CHECK_NODE(rt, node_t, objs[i], base_id + i);
    return pinned;
}

/* C: every level's frame slots, remembered by address to check them at the bottom. */
#define DEPTH 1000
static tt_node **level_slots[DEPTH][2];
static size_t deep_pinned;

static NOINLINE void descend(int level) {
    tt_node *a = NULL, *b = NULL;
    TENURE_FRAME(rt, f, a, b);
    garbage(2);
    a = tt_node_new(rt, node_t, 2u * (uint64_t)level);
    b = tt_node_new(rt, node_t, 2u * (uint64_t)level + 1);
    level_slots[level][0] = &a;
    level_slots[level][1] = &b;
    if (level + 1 < DEPTH) {
        descend(level + 1);
    } else {
        tt_collect(rt, 1, TENURE_COLLECT_COMPACT);
        deep_pinned = (size_t)tt_stats(rt).pinned_objects;
        for (int l = 0; l < DEPTH; l++)
            for (int k = 0; k < 2; k++)
                TT_CHECK_NODE(rt, node_t, *level_slots[l][k], 2u * (uint64_t)l + (uint64_t)k);
    }
    TENURE_FRAME_POP(rt, f);
}

int main(void) {
    tt_rng_init("frame_slots_unpinned");
    double t0 = tt_now();
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCConservativeStack = 1;
    if (getenv("TENURE_GCgen0size") == NULL)
        cfg.GCgen0size = 256u << 10;
    rt = tt_create(&cfg, &log);
    node_t = tt_register_node(rt);
    bytes_t = tt_register_bytes(rt);

    int rounds = (int)tt_scaled(10, 3);
    size_t least_a = NODES, least_b = SIZE_MAX;
    int skipped = 0;
    for (int r = 0; r < rounds; r++) {
        size_t eligible, eligible_b;
        size_t a = held_by_frame(r, &eligible);
        size_t b = held_by_stack_only(r, &eligible_b);
        least_b = b < least_b ? b : least_b;
        if (eligible < NODES / 4) {
            skipped++; /* GCStress promoted most of them during the fill */
        } else {
            least_a = a < least_a ? a : least_a;
            TT_CHECK(a * NODES >= eligible * LEAST_MOVED,
                     "round %d: only %zu of %zu young nodes held by frame slots moved", r, a, eligible);
        }
        TT_CHECK(b >= eligible_b, "round %d: %zu objects pinned, %zu gen0 nodes held only by the stack", r, b,
                 eligible_b);
    }
    /* with a GC every few allocations, no fill keeps half its nodes in gen0: only said */
    const char *stress = getenv("TENURE_GCStress");
    if (stress != NULL && strtoul(stress, NULL, 0) != 0 && skipped == rounds)
        printf("  note: GCStress=%s promoted the nodes before every check of A\n", stress);
    else
        TT_CHECK(skipped < rounds, "no round had enough young nodes to check A");
    printf("  A: held by a frame's slots, at least %zu of %d moved per GC (%d of %d rounds skipped: promoted early); "
           "B: held by the stack only, at least %zu objects pinned per GC\n",
           least_a, NODES, skipped, rounds, least_b);
    descend(0);
    printf("  C: %d levels of frames, two gen0 nodes each: %zu objects pinned by the GC at the bottom\n", DEPTH,
           deep_pinned);
    /* the old code pinned all but the innermost 256 slots' nodes (1827 of 2000 in a release
     * build); a stale copy in each level's own stack frame still pins (about half the nodes in
     * an unoptimized sanitizer build, under 100 in a release one) */
#ifdef __OPTIMIZE__
    size_t quarters = 1;
#else
    size_t quarters = 3;
#endif
    TT_CHECK(deep_pinned * 4 < quarters * 2 * DEPTH, "%zu of %d nodes held by deep frames pinned", deep_pinned,
             2 * DEPTH);
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    tenure_destroy(rt);
    return tt_finish("frame_slots_unpinned", t0);
}
