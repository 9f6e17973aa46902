/* gc_tenure.c - the VM's memory on tenure: types, the root scanner, weak handles. */
#include <stdio.h>
#include <stdlib.h>

#include "gc.h"

typedef struct TenureGc {
    LoxGc base; /* first: the inline paths of gc.h see a LoxGc */
    lox_scan_fn scan;
    void *context;
    tenure_root_scanner *scanner;
} TenureGc;

static void scan_roots(tenure_runtime *rt, tenure_visitor *visitor, void *context) {
    (void)rt;
    TenureGc *gc = context;
    gc->scan(gc->context, visitor);
}

/* The VM's roots are all precise, so it runs without conservative stack scanning unless the
 * environment asks for it: a raw pointer kept across an allocation then goes stale at the
 * next compaction instead of being pinned, and the tests find it. */
static tenure_runtime *create_runtime(void) {
    tenure_config config;
    tenure_config_init(&config);
    config.GCConservativeStack = 0;
    if (tenure_config_from_env(&config) != TENURE_OK)
        return NULL;
    return tenure_create(&config, NULL);
}

LoxGc *lox_gc_new(lox_scan_fn scan, void *context) {
    TenureGc *gc = calloc(1, sizeof *gc);
    if (!gc)
        return NULL;
    gc->base.rt = create_runtime();
    if (!gc->base.rt) {
        free(gc);
        return NULL;
    }
    gc->scan = scan;
    gc->context = context;
    gc->scanner = tenure_root_scanner_add(gc->base.rt, scan_roots, gc);
    return &gc->base;
}

void lox_gc_free(LoxGc *base) {
    TenureGc *gc = (TenureGc *)base;
    tenure_root_scanner_remove(base->rt, gc->scanner);
    tenure_destroy(base->rt);
    free(gc);
}

const LoxType *lox_gc_type(LoxGc *gc, const LoxTypeDesc *desc) {
    tenure_type_desc d = {.name = desc->name,
                          .size = desc->size,
                          .trace = (tenure_trace_fn)desc->trace,
                          .ref_offsets = desc->refs,
                          .ref_count = desc->ref_count};
    if (desc->elem_size || desc->elem_refs) {
        d.flags = desc->elem_refs ? TENURE_TYPE_REF_ARRAY : TENURE_TYPE_ARRAY;
        d.elem_size = desc->elem_size;
    }
    if (!desc->trace && !desc->ref_count && !desc->elem_refs)
        d.flags |= TENURE_TYPE_NO_REFS;
    return (const LoxType *)tenure_type_register(gc->rt, &d);
}

void lox_gc_stats(LoxGc *gc, LoxGcStats *stats) {
    tenure_stats s;
    tenure_get_stats(gc->rt, &s);
    stats->collections = s.gc_count;
    stats->pause_ns = s.total_pause_ns;
}

void lox_gc_collect(LoxGc *gc) { tenure_collect(gc->rt, -1, 0); }

LoxWeak *lox_weak_new(LoxGc *gc, void *obj) {
    return (LoxWeak *)tenure_handle_new(gc->rt, TENURE_HANDLE_WEAK_SHORT, obj);
}
void *lox_weak_get(LoxGc *gc, LoxWeak *weak) { return tenure_handle_get(gc->rt, (tenure_handle *)weak); }
void lox_weak_free(LoxGc *gc, LoxWeak *weak) { tenure_handle_free(gc->rt, (tenure_handle *)weak); }
