/*
 * frame_slots_unpinned (issue 13): with GCConservativeStack = 1, a stack word that is a slot of
 * one of the thread's shadow-stack frames is a precise root, not a conservative one: the
 * object it refers to is marked and moved (the frame is updated), not pinned.
 *
 *  A. 64 nodes, each after some garbage, held only by a local array on the stack whose
 *     elements are the slots of one frame, across tenure_collect(rt, 1, COMPACT): at least 48
 *     of them move (before issue 13's change none did: the scan found each of them in the
 *     array and pinned it) and every one keeps its id and checksum. Without the change the
 *     test fails (0 moved). Not all 64: a stale copy elsewhere on the stack (a register
 *     spilled by a callee, or HeapVerify's walk) may still pin a few, as it should.
 *  B. the same frame popped before the GC: the nodes, now held only by the array on the
 *     stack, are pinned (the scan skips only live frames' slots): the GC pins at least 64
 *     objects and every node is still in place with its id and checksum.
 *
 * Not a STRESS test: GCStress only adds GCs before the explicit one, which moves the nodes
 * wherever they are (gen0 to gen1, gen1 to gen2).
 */
#include "test_util.h"

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

static NOINLINE size_t held_by_frame(int round) {
    tt_node *objs[NODES] = {0};
    void **slots[NODES];
    for (size_t i = 0; i < NODES; i++)
        slots[i] = (void **)&objs[i];
    tenure_frame frame = {NULL, NODES, (void **const *)slots};
    tenure_frame_push(rt, &frame);
    uint64_t base_id = (uint64_t)round * 1000u;
    fill(objs, base_id);
    tt_collect(rt, 1, TENURE_COLLECT_COMPACT);
    size_t n = moved(objs);
    for (size_t i = 0; i < NODES; i++)
        TT_CHECK_NODE(rt, node_t, objs[i], base_id + i);
    tenure_frame_pop(rt, &frame);
    return n;
}

/* B: the same array after its frame is popped (the stack alone holds the nodes): each is
 * pinned; returns the GC's pinned objects. */
static NOINLINE size_t held_by_stack_only(int round) {
    tt_node *objs[NODES] = {0};
    void **slots[NODES];
    for (size_t i = 0; i < NODES; i++)
        slots[i] = (void **)&objs[i];
    tenure_frame frame = {NULL, NODES, (void **const *)slots};
    tenure_frame_push(rt, &frame);
    uint64_t base_id = (uint64_t)round * 1000u + 500u;
    fill(objs, base_id);
    tenure_frame_pop(rt, &frame); /* no GC can run between the fill and here */
    tt_collect(rt, 1, TENURE_COLLECT_COMPACT);
    size_t pinned = (size_t)tt_stats(rt).pinned_objects;
    TT_CHECK(moved(objs) == 0, "the array was changed without a frame");
    for (size_t i = 0; i < NODES; i++)
        TT_CHECK_NODE(rt, node_t, objs[i], base_id + i);
    return pinned;
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
    for (int r = 0; r < rounds; r++) {
        size_t a = held_by_frame(r);
        size_t b = held_by_stack_only(r);
        least_a = a < least_a ? a : least_a;
        least_b = b < least_b ? b : least_b;
        TT_CHECK(a >= LEAST_MOVED, "round %d: only %zu of %d nodes held by frame slots moved", r, a, NODES);
        TT_CHECK(b >= NODES, "round %d: %zu objects pinned, %d nodes held only by the stack", r, b, NODES);
    }
    printf("  A: held by a frame's slots, at least %zu of %d moved per GC; B: held by the stack only, at least "
           "%zu objects pinned per GC\n",
           least_a, NODES, least_b);
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    tenure_destroy(rt);
    return tt_finish("frame_slots_unpinned", t0);
}
