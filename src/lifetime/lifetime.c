/* lifetime.c - memory pressure and identity hashes.
 *
 * Memory pressure: native memory that managed objects keep alive. When the pressure added
 * since the last gen2 GC passes a budget that grows with the heap (the gen2 budget: 0.4 to 1.6
 * times what lives in gen1 and gen2 after the last full GC, at least 4 gen0 budgets; and at
 * least 8 MiB; under server GC the instance's as one heap's), a gen2 GC is induced, as .NET's
 * GC.AddMemoryPressure does.
 *
 * Identity hashes: a side table (the "sync block" table) from object address to a hash code
 * that never changes; after every GC its entries follow their objects to their new addresses
 * and the entries of dead objects are dropped. Its size is GCHeapStats' SinkBlockCount. */
#include "runtime.h"
#include <stdlib.h>

#define MIN_PRESSURE_BUDGET ((uint64_t)8 << 20)

static uint64_t pressure_budget(const tenure_runtime *rt) {
    /* grows with what lives in gen1+gen2 (heap/budgets.c); pressure belongs to no heap: the
     * instance's as one heap's, not the sum of every server GC heap's least */
    uint64_t live = tn_heap_whole_gen2_budget(rt);
    return live > MIN_PRESSURE_BUDGET ? live : MIN_PRESSURE_BUDGET;
}

tenure_result tenure_add_memory_pressure(tenure_runtime *rt, uint64_t bytes) {
    static const char fn[] = "tenure_add_memory_pressure";
    if (tn_cb_refused(rt, TN_OP_COLLECT | TN_OP_CHANGE, fn))
        return TENURE_STATE;
    TN_LOCKED(rt);
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (bytes > UINT64_MAX / 2 || rt->lifetime.pressure + bytes < rt->lifetime.pressure)
        return tn_api_fail(rt, TENURE_SIZE, fn, "%llu bytes of pressure is impossible", (unsigned long long)bytes);
    rt->lifetime.pressure += bytes;
    rt->lifetime.pressure_since_gen2 += bytes;
    TN_EMIT(rt, IncreaseMemoryPressure, .BytesAllocated = bytes);
    if (!tn_gc_in_progress(rt) && rt->lifetime.pressure_since_gen2 >= pressure_budget(rt))
        tn_gc_collect(rt, TN_GEN2, TN_REASON_INDUCED, 0);
    return TENURE_OK;
}

tenure_result tenure_remove_memory_pressure(tenure_runtime *rt, uint64_t bytes) {
    if (tn_cb_refused(rt, TN_OP_CHANGE, "tenure_remove_memory_pressure"))
        return TENURE_STATE;
    TN_LOCKED(rt);
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (bytes > rt->lifetime.pressure)
        return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, "tenure_remove_memory_pressure",
                           "removing %llu bytes of pressure, only %llu were added", (unsigned long long)bytes,
                           (unsigned long long)rt->lifetime.pressure);
    rt->lifetime.pressure -= bytes;
    TN_EMIT(rt, DecreaseMemoryPressure, .BytesFreed = bytes);
    return TENURE_OK;
}

uint64_t tenure_memory_pressure(const tenure_runtime *crt) {
    tenure_runtime *rt = (tenure_runtime *)crt;
    TN_LOCKED(rt);
    return rt ? rt->lifetime.pressure : 0;
}

void tn_lifetime_gen2_done(tenure_runtime *rt) { rt->lifetime.pressure_since_gen2 = 0; }

/* ---- the sync block table: open addressing by address, kept at most half full ---- */

static size_t slot_of(uintptr_t key, size_t cap) { return (size_t)((key >> 3) * 0x9E3779B97F4A7C15ull) & (cap - 1); }

static bool put(tn_sync_entry *table, size_t cap, uintptr_t key, uint32_t hash) {
    for (size_t i = slot_of(key, cap);; i = (i + 1) & (cap - 1))
        if (!table[i].key) {
            table[i].key = key;
            table[i].hash = hash;
            return true;
        }
}

static bool grow(tenure_runtime *rt, size_t cap) {
    tn_sync_entry *t = tn_calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < rt->lifetime.sync_cap; i++)
        if (rt->lifetime.sync[i].key)
            put(t, cap, rt->lifetime.sync[i].key, rt->lifetime.sync[i].hash);
    free(rt->lifetime.sync);
    rt->lifetime.sync = t;
    rt->lifetime.sync_cap = cap;
    return true;
}

static uint32_t next_hash(tenure_runtime *rt) {
    uint64_t x = rt->lifetime.hash_state ? rt->lifetime.hash_state : 0x243F6A8885A308D3ull ^ rt->instance_id;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rt->lifetime.hash_state = x;
    uint32_t h = (uint32_t)((x * 2685821657736338717ull) >> 32);
    return h ? h : 1;
}

uint32_t tenure_identity_hash(tenure_runtime *rt, const void *obj) {
    static const char fn[] = "tenure_identity_hash";
    if (tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return 0;
    TN_LOCKED_HOLDING(rt, obj, NULL);
    if (!rt)
        return 0;
    if (!tn_is_object(rt, obj)) {
        tn_api_fail(rt, TENURE_INVALID_OBJECT, fn, "%p is not an object of this instance", obj);
        return 0;
    }
    uintptr_t key = (uintptr_t)obj;
    if (rt->lifetime.sync_cap)
        for (size_t i = slot_of(key, rt->lifetime.sync_cap); rt->lifetime.sync[i].key;
             i = (i + 1) & (rt->lifetime.sync_cap - 1))
            if (rt->lifetime.sync[i].key == key)
                return rt->lifetime.sync[i].hash;
    if (2 * (rt->lifetime.sync_count + 1) > rt->lifetime.sync_cap &&
        !grow(rt, rt->lifetime.sync_cap ? 2 * rt->lifetime.sync_cap : 64)) {
        tn_api_fail(rt, TENURE_NOMEM, fn, "no memory for the identity hash table");
        return 0;
    }
    uint32_t h = next_hash(rt);
    put(rt->lifetime.sync, rt->lifetime.sync_cap, key, h);
    rt->lifetime.sync_count++;
    return h;
}

/* An entry whose key changed in this GC and that is not yet in its new place (keys are
 * object addresses: 8-byte aligned, their low bit is free). */
#define SYNC_MOVING ((uintptr_t)1)

/* Put e (a moving entry) in its place: the first slot of its probe sequence that is empty or
 * holds another moving entry; that one is taken out and placed in turn. Each step places one
 * entry for good, and a placed entry's probe sequence holds only placed entries, which never
 * move again: lookups find every entry when all are placed. */
static void place_moving(tn_sync_entry *table, size_t cap, tn_sync_entry e) {
    e.key &= ~SYNC_MOVING;
    for (size_t i = slot_of(e.key, cap);; i = (i + 1) & (cap - 1)) {
        if (table[i].key && !(table[i].key & SYNC_MOVING))
            continue;
        tn_sync_entry displaced = table[i];
        table[i] = e;
        if (!displaced.key)
            return;
        e = displaced;
        e.key &= ~SYNC_MOVING;
        i = slot_of(e.key, cap) - 1; /* the loop's step brings it to e's first slot */
    }
}

/* During a GC, after relocation and before anything moves: entries follow their objects
 * (forward gives the new address) and those of dead objects go. The table is rehashed in
 * place (no memory needed inside the pause): first every key is rewritten and marked moving,
 * then each moving entry is placed again. */
void tn_lifetime_update_sync(tenure_runtime *rt, char *(*forward)(tenure_runtime *, char *),
                             bool (*dead)(tenure_runtime *, const void *)) {
    if (!rt->lifetime.sync_count)
        return;
    tn_sync_entry *t = rt->lifetime.sync;
    size_t cap = rt->lifetime.sync_cap, n = 0;
    for (size_t i = 0; i < cap; i++) {
        if (!t[i].key)
            continue;
        if (dead(rt, (const void *)t[i].key)) {
            t[i].key = 0;
            continue;
        }
        t[i].key = (uintptr_t)forward(rt, (char *)t[i].key) | SYNC_MOVING;
        n++;
    }
    for (size_t i = 0; i < cap; i++)
        if (t[i].key & SYNC_MOVING) {
            tn_sync_entry e = t[i];
            t[i].key = 0;
            place_moving(t, cap, e);
        }
    rt->lifetime.sync_count = n;
}

/* An instance's lifetime state starts empty: no finalizable object, nothing ready. */
void tn_lifetime_init(tenure_runtime *rt) {
    tn_vec_init(&rt->lifetime.finalizable, sizeof(void *));
    tn_vec_init(&rt->lifetime.ready, sizeof(void *));
    pthread_cond_init(&rt->lifetime.fin_work, NULL);
    pthread_cond_init(&rt->lifetime.fin_idle, NULL);
    rt->lifetime.conds_ready = true;
}

void tn_lifetime_destroy(tenure_runtime *rt) {
    free(rt->lifetime.sync);
    rt->lifetime.sync = NULL;
    rt->lifetime.sync_cap = rt->lifetime.sync_count = 0;
    if (rt->lifetime.conds_ready) {
        rt->lifetime.conds_ready = false; /* (a thread detaching after this wakes no one) */
        pthread_cond_destroy(&rt->lifetime.fin_idle);
        pthread_cond_destroy(&rt->lifetime.fin_work);
    }
}

size_t tn_lifetime_sync_count(const tenure_runtime *rt) { return rt->lifetime.sync_count; }
