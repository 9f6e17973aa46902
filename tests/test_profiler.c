/*
 * profiler: the profiler API against docs/contract/profiler.md.
 *
 * A. The seed's worked example: ten objects of known sizes back to back, three of them dead,
 *    a compacting GC: the moved ranges are exactly the three runs of neighbouring survivors,
 *    and newID = newStart + (id - oldStart) sends each survivor to where it is (each object
 *    stores its own number). The same with a sweeping GC and surviving ranges.
 * B. Uncollected generations: objects in gen2 lie in no range of a gen0 GC and do not move.
 * C. Order of the callbacks in every GC, gc_started's flags, root references (kinds, flags,
 *    ids), allocation and handle callbacks, generation bounds covering every object.
 */
#include "test_util.h"
#include "tenure_profiler.h"

/* objects of one unit (16 bytes) and two units (32 bytes), each carrying its number */
typedef struct num1 {
    tenure_header h;
    uint64_t number;
} num1;
typedef struct num2 {
    tenure_header h;
    uint64_t number, pad[2];
} num2;

static const tenure_type *register_fixed(tenure_runtime *rt, const char *name, size_t size) {
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    d.flags = TENURE_TYPE_NO_REFS;
    const tenure_type *t = tenure_type_register(rt, &d);
    TT_CHECK(t != NULL);
    return t;
}

typedef struct recorder {
    int collected[5];
    int started, finished;
    int order_ok;
    size_t moved_n, surv_n, roots_n;
    uintptr_t moved_old[64], moved_new[64], surv_start[64];
    size_t moved_len[64], surv_len[64];
    int phase; /* 0 idle, 1 started, 2 ranges, 3 roots */
    size_t allocations, handles_created, handles_destroyed;
    size_t handle_roots, pinned_roots, weak_roots, stack_roots;
    tenure_handle *pinned_handle;
    uintptr_t pinned_root_id;
} recorder;

static void on_started(void *c, const int collected[5], tenure_gc_reason_kind reason) {
    recorder *r = c;
    (void)reason;
    memcpy(r->collected, collected, sizeof r->collected);
    r->order_ok &= r->phase == 0;
    r->phase = 1;
    r->started++;
    r->moved_n = r->surv_n = 0;
}

static void on_moved(void *c, size_t n, const uintptr_t *o, const uintptr_t *nw, const size_t *l) {
    recorder *r = c;
    r->order_ok &= r->phase == 1 || r->phase == 2;
    r->phase = 2;
    for (size_t i = 0; i < n; i++, r->moved_n++)
        if (r->moved_n < 64) {
            r->moved_old[r->moved_n] = o[i];
            r->moved_new[r->moved_n] = nw[i];
            r->moved_len[r->moved_n] = l[i];
        }
}

static void on_surviving(void *c, size_t n, const uintptr_t *s, const size_t *l) {
    recorder *r = c;
    r->order_ok &= r->phase == 1 || r->phase == 2;
    r->phase = 2;
    for (size_t i = 0; i < n; i++, r->surv_n++)
        if (r->surv_n < 64) {
            r->surv_start[r->surv_n] = s[i];
            r->surv_len[r->surv_n] = l[i];
        }
}

static void on_roots(void *c, size_t n, void *const *ids, const tenure_root_kind *kinds, const uint32_t *flags,
                     const uintptr_t *root_ids) {
    recorder *r = c;
    r->order_ok &= r->phase >= 1 && r->phase <= 3;
    r->phase = 3;
    for (size_t i = 0; i < n; i++) {
        r->roots_n++;
        TT_CHECK(ids[i] != NULL);
        if (kinds[i] == TENURE_ROOT_KIND_HANDLE) {
            r->handle_roots++;
            if (flags[i] & TENURE_ROOT_FLAG_PINNING) {
                r->pinned_roots++;
                r->pinned_root_id = root_ids[i];
            }
            if (flags[i] & TENURE_ROOT_FLAG_WEAK)
                r->weak_roots++;
        } else if (kinds[i] == TENURE_ROOT_KIND_STACK) {
            r->stack_roots++;
        }
    }
}

static void on_finished(void *c) {
    recorder *r = c;
    r->order_ok &= r->phase >= 1;
    r->phase = 0;
    r->finished++;
}

static void on_allocated(void *c, void *obj, const tenure_type *t) {
    recorder *r = c;
    (void)t;
    TT_CHECK(obj != NULL);
    r->allocations++;
}

static void on_handle_created(void *c, tenure_handle *h, void *obj) {
    recorder *r = c;
    (void)h;
    (void)obj;
    r->handles_created++;
}

static void on_handle_destroyed(void *c, tenure_handle *h) {
    recorder *r = c;
    (void)h;
    r->handles_destroyed++;
}

static const tenure_profiler_callbacks callbacks = {
    .gc_started = on_started,
    .moved_references = on_moved,
    .surviving_references = on_surviving,
    .root_references = on_roots,
    .gc_finished = on_finished,
    .object_allocated = on_allocated,
    .handle_created = on_handle_created,
    .handle_destroyed = on_handle_destroyed,
};

/* unit sizes of the ten objects (16 bytes a unit) and which die: objects 2, 5 and 10 */
static const int units[10] = {1, 1, 2, 1, 2, 1, 1, 1, 1, 1};
static const int dead[10] = {0, 1, 0, 0, 1, 0, 0, 0, 0, 1};

static uint64_t number_of(const void *obj) { return ((const num1 *)obj)->number; }

/* The new address of id according to moved ranges, 0 if in none. */
static uintptr_t map_moved(const recorder *r, uintptr_t id) {
    for (size_t i = 0; i < r->moved_n && i < 64; i++)
        if (id >= r->moved_old[i] && id < r->moved_old[i] + r->moved_len[i])
            return r->moved_new[i] + (id - r->moved_old[i]);
    return 0;
}

static int in_surviving(const recorder *r, uintptr_t id) {
    int n = 0;
    for (size_t i = 0; i < r->surv_n && i < 64; i++)
        n += id >= r->surv_start[i] && id < r->surv_start[i] + r->surv_len[i];
    return n;
}

static void worked_example(uint32_t mode) {
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCCompactMode = mode; /* 1: compact, 2: sweep */
    cfg.GCStress = 0;
    tenure_runtime *rt = tt_create(&cfg, &log);
    const tenure_type *one = register_fixed(rt, "num1", sizeof(num1)), *two = register_fixed(rt, "num2", sizeof(num2));
    const tenure_type *bytes = tt_register_bytes(rt);
    recorder rec = {.order_ok = 1};
    tenure_profiler *p = tenure_profiler_attach(rt, &callbacks, TENURE_PROFILE_GC, &rec);
    TT_CHECK(p != NULL);
    void *objs[10];
    uintptr_t old[10];
    tenure_root_area *area = tenure_root_area_add(rt, objs, 10);
    for (int i = 0; i < 10; i++) {
        objs[i] = tenure_alloc(rt, units[i] == 1 ? one : two);
        TT_CHECK(objs[i] != NULL);
        ((num1 *)objs[i])->number = (uint64_t)i + 1;
        old[i] = (uintptr_t)objs[i];
        if (i)
            TT_CHECK(old[i] == old[i - 1] + (size_t)units[i - 1] * 16, "objects not back to back");
    }
    for (int i = 0; i < 10; i++)
        if (dead[i])
            objs[i] = NULL;
    TT_CHECK(tenure_collect(rt, 0, mode == 1 ? TENURE_COLLECT_COMPACT : 0) == TENURE_OK);
    TT_CHECK(rec.started == 1 && rec.finished == 1 && rec.order_ok);
    TT_CHECK(rec.collected[0] == 1 && rec.collected[1] == 0 && rec.collected[2] == 0);
    if (mode == 1) {
        TT_CHECK(rec.surv_n == 0, "a compacting GC reported surviving ranges");
        TT_CHECK(rec.moved_n == 3, "expected 3 moved ranges (runs of neighbouring survivors), got %zu", rec.moved_n);
        TT_CHECK(rec.moved_old[0] == old[0] && rec.moved_len[0] == 16);
        TT_CHECK(rec.moved_old[1] == old[2] && rec.moved_len[1] == 48);
        TT_CHECK(rec.moved_old[2] == old[5] && rec.moved_len[2] == 64);
        for (int i = 0; i < 10; i++) {
            uintptr_t to = map_moved(&rec, old[i]);
            if (dead[i]) {
                TT_CHECK(to == 0, "dead object %d lies in a moved range", i + 1);
                continue;
            }
            TT_CHECK(to == (uintptr_t)objs[i], "object %d: the ranges say %#lx, it is at %p", i + 1, (unsigned long)to,
                     objs[i]);
            TT_CHECK(number_of((void *)to) == (uint64_t)i + 1, "object %d's number at its new address", i + 1);
        }
    } else {
        TT_CHECK(rec.moved_n == 0, "a sweeping GC reported moved ranges");
        TT_CHECK(rec.surv_n == 3, "expected 3 surviving ranges, got %zu", rec.surv_n);
        for (int i = 0; i < 10; i++) {
            TT_CHECK(in_surviving(&rec, old[i]) == (dead[i] ? 0 : 1), "object %d in %d ranges", i + 1,
                     in_surviving(&rec, old[i]));
            if (!dead[i])
                TT_CHECK((uintptr_t)objs[i] == old[i] && number_of(objs[i]) == (uint64_t)i + 1,
                         "a sweep moved object %d", i + 1);
        }
    }
    /* B: promote to gen2, then a gen0 GC must leave them out of every range and in place */
    TT_CHECK(tenure_collect(rt, 1, 0) == TENURE_OK);
    uintptr_t before[10];
    for (int i = 0; i < 10; i++)
        before[i] = (uintptr_t)objs[i];
    for (int k = 0; k < 1000; k++)
        TT_CHECK(tenure_alloc_array(rt, bytes, 40) != NULL);
    TT_CHECK(tenure_collect(rt, 0, 0) == TENURE_OK);
    for (int i = 0; i < 10; i++) {
        if (dead[i])
            continue;
        TT_CHECK(tenure_object_generation(rt, objs[i]) == 2);
        TT_CHECK((uintptr_t)objs[i] == before[i], "an uncollected generation moved");
        TT_CHECK(map_moved(&rec, before[i]) == 0 && in_surviving(&rec, before[i]) == 0,
                 "an object of an uncollected generation lies in a range");
    }
    tenure_root_area_remove(rt, area);
    TT_CHECK(tenure_profiler_detach(rt, p) == TENURE_OK);
    tenure_destroy(rt);
    printf("  worked example, mode %u: ok\n", mode);
}

typedef struct bounds_ctx {
    tenure_runtime *rt;
    tenure_generation_range *ranges;
    size_t n;
    size_t checked;
} bounds_ctx;

static int check_in_bounds(void *obj, const tenure_type *type, size_t size, int generation, void *c) {
    bounds_ctx *b = c;
    (void)type;
    for (size_t i = 0; i < b->n; i++)
        if ((uintptr_t)obj >= b->ranges[i].start &&
            (uintptr_t)obj + size <= b->ranges[i].start + b->ranges[i].used_length) {
            TT_CHECK(b->ranges[i].generation == generation, "bounds say generation %d, the object is in %d",
                     b->ranges[i].generation, generation);
            b->checked++;
            return 0;
        }
    TT_CHECK(0, "object %p is in no generation range", obj);
    return 1;
}

static void callbacks_and_roots(void) {
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(NULL, &log);
    const tenure_type *node_t = tt_register_node(rt);
    recorder rec = {.order_ok = 1};
    tenure_profiler *p = tenure_profiler_attach(
        rt, &callbacks, TENURE_PROFILE_GC | TENURE_PROFILE_ALLOCATIONS | TENURE_PROFILE_HANDLES, &rec);
    TT_CHECK(p != NULL);
    tt_node *a = NULL;
    TENURE_FRAME(rt, f, a);
    a = tt_node_new(rt, node_t, 1);
    tenure_handle *pin = tenure_handle_new(rt, TENURE_HANDLE_PINNED, tt_node_new(rt, node_t, 2));
    tenure_handle *weak = tenure_handle_new(rt, TENURE_HANDLE_WEAK_LONG, a);
    tenure_handle *strong = tenure_handle_new(rt, TENURE_HANDLE_STRONG, tt_node_new(rt, node_t, 3));
    size_t allocs = 3;
    for (int i = 0; i < 200000; i++, allocs++)
        TT_CHECK(tt_node_new(rt, node_t, 100 + (uint64_t)i) != NULL);
    TT_CHECK(tenure_collect(rt, 2, 0) == TENURE_OK);
    TT_CHECK(rec.started == rec.finished && rec.started > 0 && rec.order_ok, "callbacks out of order");
    TT_CHECK(rec.allocations == allocs, "object_allocated %zu times for %zu allocations", rec.allocations, allocs);
    TT_CHECK(rec.handles_created == 3);
    TT_CHECK(rec.pinned_roots > 0 && rec.pinned_root_id == (uintptr_t)pin, "pinned handle root id");
    TT_CHECK(rec.weak_roots > 0 && rec.stack_roots > 0);
    for (int g = 0; g < 5; g++)
        TT_CHECK(rec.collected[g] == 1, "a gen2 GC collects generation %d", g);
    tenure_generation_range ranges[4096];
    size_t n = tenure_generation_bounds(rt, ranges, 4096);
    TT_CHECK(n > 0 && n <= 4096);
    bounds_ctx bc = {rt, ranges, n, 0};
    tenure_heap_walk(rt, check_in_bounds, &bc);
    TT_CHECK(bc.checked > 0);
    tenure_handle_free(rt, pin);
    tenure_handle_free(rt, weak);
    tenure_handle_free(rt, strong);
    TT_CHECK(rec.handles_destroyed == 3);
    TENURE_FRAME_POP(rt, f);
    TT_CHECK(tenure_profiler_detach(rt, p) == TENURE_OK);
    tenure_destroy(rt);
    printf("  callbacks, roots and bounds: %zu GCs, %zu roots, %zu objects in bounds\n", (size_t)rec.started,
           rec.roots_n, bc.checked);
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("profiler");
    worked_example(1);
    worked_example(2);
    callbacks_and_roots();
    return tt_finish("profiler", t0);
}
