/*
 * heapprof_program: a known allocation pattern for tenure-heapprof, and its own counts.
 *
 *   A   1000 objects (site 1), all kept to the end
 *   B   100000 objects (site 2), each dropped at once
 *   C   500 objects (site 3), kept through a gen0 and a gen1 GC (so into gen1, then gen2),
 *       then dropped before a gen2 GC: they die in gen2
 *   D[] 10 arrays of 1..10 longs (site 0: no site set), kept to the end (sizes of arrays)
 *   E[] 3 byte arrays of 100000 bytes (large object heap, site 4), dropped: die in LOH
 *   F   5 pinned objects (pinned object heap, site 5), dropped: die in POH
 *
 * Usage: heapprof_program <expected.json> [--attach <out.json>] [--no-destroy]
 *   writes what it allocated (objects and bytes by type, sites, GC count) to expected.json;
 *   --attach: attach the profiler by linking (built with HEAPPROF_LINKED), else it relies on
 *   TENURE_PROFILER; --no-destroy: exit without tenure_destroy (the at-exit report).
 * Precise roots only (GCConservativeStack=0) so that nothing dropped stays reachable;
 * a small gen0 budget (256 KiB) unless TENURE_GCgen0size is set, so B causes many GCs.
 */
#define _POSIX_C_SOURCE 200809L
#include "tenure.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HEAPPROF_LINKED
#include "heapprof.h"
#define SET_SITE(s) tenure_heapprof_set_site(s)
#else
#include <dlfcn.h>
#include "heapprof.h"
#define SET_SITE(s) TENURE_HEAPPROF_SET_SITE_IF_LOADED(s)
#endif

#define CHECK(c)                                                                  \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK FAILED: %s\n", __FILE__, __LINE__, #c); \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

enum { NA = 1000, NB = 100000, NC = 500, ND = 10, NE = 3, NF = 5, E_LEN = 100000 };

typedef struct obj_a {
    tenure_header h;
    uint64_t v[3];
} obj_a; /* 32 bytes */
typedef struct obj_b {
    tenure_header h;
    uint64_t v;
} obj_b; /* 16 bytes */
typedef struct obj_c {
    tenure_header h;
    uint64_t v[5];
} obj_c; /* 48 bytes */
typedef struct obj_f {
    tenure_header h;
    uint64_t v[7];
} obj_f; /* 64 bytes */

static void *a_slots[NA], *c_slots[NC], *d_slots[ND], *e_slots[NE], *f_slots[NF];

typedef struct expect {
    const char *name;
    uint32_t site;
    uint64_t objects, bytes;
} expect;

static const tenure_type *fixed_type(tenure_runtime *rt, const char *name, size_t size) {
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    d.flags = TENURE_TYPE_NO_REFS;
    const tenure_type *t = tenure_type_register(rt, &d);
    CHECK(t != NULL);
    return t;
}

static const tenure_type *array_type(tenure_runtime *rt, const char *name, size_t elem) {
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.elem_size = elem;
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS;
    const tenure_type *t = tenure_type_register(rt, &d);
    CHECK(t != NULL);
    return t;
}

static void count(expect *e, tenure_runtime *rt, void *obj) {
    CHECK(obj != NULL);
    e->objects++;
    e->bytes += tenure_object_size(rt, obj);
}

/* B: allocate and drop; a function of its own so that no B stays in a local */
static __attribute__((noinline)) void churn(tenure_runtime *rt, const tenure_type *tb, expect *e) {
    for (int i = 0; i < NB; i++) {
        obj_b *b = tenure_alloc(rt, tb);
        b->v = (uint64_t)i;
        count(e, rt, b);
    }
}

int main(int argc, char **argv) {
    const char *expected_path = NULL, *attach_json = NULL;
    int destroy = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--attach") && i + 1 < argc)
            attach_json = argv[++i];
        else if (!strcmp(argv[i], "--no-destroy"))
            destroy = 0;
        else
            expected_path = argv[i];
    }
    if (!expected_path) {
        fprintf(stderr, "usage: %s <expected.json> [--attach <out.json>] [--no-destroy]\n", argv[0]);
        return 2;
    }

    tenure_config cfg;
    tenure_config_init(&cfg);
    tenure_config_from_env(&cfg);
    if (!getenv("TENURE_GCgen0size"))
        cfg.GCgen0size = 256u << 10;
    cfg.GCConservativeStack = 0;
    tenure_result r;
    tenure_runtime *rt = tenure_create(&cfg, &r);
    CHECK(rt != NULL);
#ifdef HEAPPROF_LINKED
    if (attach_json)
        CHECK(tenure_heapprof_attach(rt, attach_json) == 0);
#else
    CHECK(attach_json == NULL); /* this build does not link the profiler */
#endif

    const tenure_type *ta = fixed_type(rt, "A", sizeof(obj_a));
    const tenure_type *tb = fixed_type(rt, "B", sizeof(obj_b));
    const tenure_type *tc = fixed_type(rt, "C", sizeof(obj_c));
    const tenure_type *td = array_type(rt, "D[]", sizeof(long));
    const tenure_type *te = array_type(rt, "E[]", 1);
    const tenure_type *tf = fixed_type(rt, "F", sizeof(obj_f));
    CHECK(tenure_root_area_add(rt, a_slots, NA) && tenure_root_area_add(rt, c_slots, NC) &&
          tenure_root_area_add(rt, d_slots, ND) && tenure_root_area_add(rt, e_slots, NE) &&
          tenure_root_area_add(rt, f_slots, NF));

    expect ex[6] = {{"A", 1, 0, 0}, {"B", 2, 0, 0}, {"C", 3, 0, 0}, {"D[]", 0, 0, 0}, {"E[]", 4, 0, 0}, {"F", 5, 0, 0}};

    SET_SITE(1);
    for (int i = 0; i < NA; i++)
        count(&ex[0], rt, a_slots[i] = tenure_alloc(rt, ta));
    SET_SITE(0);
    for (int i = 0; i < ND; i++) {
        d_slots[i] = tenure_alloc_array(rt, td, (size_t)i + 1);
        count(&ex[3], rt, d_slots[i]);
    }
    SET_SITE(3);
    for (int i = 0; i < NC; i++)
        count(&ex[2], rt, c_slots[i] = tenure_alloc(rt, tc));
    CHECK(tenure_collect(rt, 0, 0) == TENURE_OK);
    CHECK(tenure_object_generation(rt, c_slots[0]) == 1);
    CHECK(tenure_collect(rt, 1, 0) == TENURE_OK);
    CHECK(tenure_object_generation(rt, c_slots[0]) == 2);

    SET_SITE(4);
    for (int i = 0; i < NE; i++) {
        e_slots[i] = tenure_alloc_array(rt, te, E_LEN);
        count(&ex[4], rt, e_slots[i]);
        CHECK(tenure_object_generation(rt, e_slots[i]) == 3);
    }
    SET_SITE(5);
    for (int i = 0; i < NF; i++) {
        f_slots[i] = tenure_alloc_pinned(rt, tf);
        count(&ex[5], rt, f_slots[i]);
        CHECK(tenure_object_generation(rt, f_slots[i]) == 4);
    }

    SET_SITE(2);
    churn(rt, tb, &ex[1]);
    SET_SITE(0);

    memset(c_slots, 0, sizeof c_slots);
    memset(e_slots, 0, sizeof e_slots);
    memset(f_slots, 0, sizeof f_slots);
    CHECK(tenure_collect(rt, 2, 0) == TENURE_OK);

    tenure_stats st;
    tenure_get_stats(rt, &st);
    FILE *f = fopen(expected_path, "w");
    CHECK(f != NULL);
    fprintf(f, "{\"gcs\": %" PRIu64 ", \"types\": [", st.gc_count);
    for (int i = 0; i < 6; i++)
        fprintf(f, "%s\n  {\"type\": \"%s\", \"site\": %" PRIu32 ", \"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
                i ? "," : "", ex[i].name, ex[i].site, ex[i].objects, ex[i].bytes);
    fprintf(f, "\n]}\n");
    CHECK(fclose(f) == 0);
    printf("heapprof_program: %" PRIu64 " GCs\n", st.gc_count);
    fflush(stdout);
    if (destroy)
        tenure_destroy(rt);
    return 0;
}
