/* weak_cache.c - an ephemeron table (a weak-keyed cache) built on dependent handles.
 *
 * Each entry is a dependent handle: primary = the key, secondary = the value. The value lives
 * exactly as long as its key does, even when the value refers back to the key (a cycle that
 * a strong table would keep alive forever). When a key dies, the GC clears its handle; the
 * table drops the entry the next time it looks. (With conservative stack scanning on, the
 * default, a stale word on the stack may keep a key alive a little longer: the test of this
 * example runs precise, TENURE_GCConservativeStack=0, to count exactly.) */
#include <stddef.h>
#include <stdio.h>
#include <tenure.h>

typedef struct key {
    tenure_header h;
    long id;
} key;
typedef struct value {
    tenure_header h;
    struct key *back;
    long payload;
} value;

#define SLOTS 1024
typedef struct cache {
    tenure_handle *entries[SLOTS];
} cache;

static void cache_put(tenure_runtime *rt, cache *c, key *k, value *v) {
    for (int i = 0; i < SLOTS; i++)
        if (!c->entries[i]) {
            c->entries[i] = tenure_handle_new_dependent(rt, k, v);
            return;
        }
}

static value *cache_get(tenure_runtime *rt, cache *c, const key *k) {
    for (int i = 0; i < SLOTS; i++)
        if (c->entries[i] && tenure_handle_get(rt, c->entries[i]) == k)
            return tenure_handle_get_secondary(rt, c->entries[i]);
    return NULL;
}

static int cache_live(tenure_runtime *rt, cache *c) { /* drops the entries of dead keys */
    int n = 0;
    for (int i = 0; i < SLOTS; i++) {
        if (!c->entries[i])
            continue;
        if (tenure_handle_get(rt, c->entries[i])) {
            n++;
        } else {
            tenure_handle_free(rt, c->entries[i]);
            c->entries[i] = NULL;
        }
    }
    return n;
}

int main(void) {
    tenure_runtime *rt = tenure_create(NULL, NULL);
    tenure_type_desc kd = {.name = "key", .size = sizeof(key)};
    size_t vrefs[] = {offsetof(value, back)};
    tenure_type_desc vd = {.name = "value", .size = sizeof(value), .ref_offsets = vrefs, .ref_count = 1};
    const tenure_type *key_t = tenure_type_register(rt, &kd), *value_t = tenure_type_register(rt, &vd);
    static cache c;
    key *keys[100] = {0};
    tenure_root_area *roots = tenure_root_area_add(rt, (void **)keys, 100);
    value *v = NULL;
    TENURE_FRAME(rt, frame, v);
    for (int i = 0; i < 100; i++) {
        keys[i] = tenure_alloc(rt, key_t);
        keys[i]->id = i;
        v = tenure_alloc(rt, value_t);
        v->payload = i * 10;
        tenure_write_ref(rt, v, &v->back, keys[i]); /* the value refers to its key */
        cache_put(rt, &c, keys[i], v);
    }
    v = NULL;
    tenure_collect(rt, -1, TENURE_COLLECT_COMPACT);
    long sum = 0;
    for (int i = 0; i < 100; i++)
        sum += cache_get(rt, &c, keys[i])->payload;
    printf("100 keys alive: %d entries, payload sum %ld\n", cache_live(rt, &c), sum);
    for (int i = 0; i < 100; i += 2)
        keys[i] = NULL; /* half of the keys die */
    tenure_collect(rt, -1, 0);
    printf("50 keys alive: %d entries\n", cache_live(rt, &c));
    TENURE_FRAME_POP(rt, frame);
    tenure_root_area_remove(rt, roots);
    tenure_destroy(rt);
    return 0;
}
