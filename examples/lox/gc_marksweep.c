/* gc_marksweep.c - the baseline: a plain, non-moving, non-generational mark-sweep collector
 * over malloc'd objects, with the same types and precise roots as the tenure build.
 *
 * Each object is preceded by a small header (the list of all objects, its type, its size, a
 * mark bit); the object itself keeps tenure's layout (header word, array length word) so that
 * the VM's code is the same in both builds. A collection runs when the bytes allocated since
 * the last one pass the bytes live after it (at least 1 MiB): the heap grows to twice what
 * lives, as clox's collector does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gc.h"

typedef struct MsHeader {
    struct MsHeader *next;
    const LoxType *type;
    size_t size;
    uint64_t marked;
} MsHeader;

struct LoxType {
    LoxTypeDesc desc;
    struct LoxType *next; /* the list of types, freed with the collector */
    size_t refs[];
};

struct LoxWeak {
    void *obj;
    struct LoxWeak *next;
    int freed;
};

struct LoxGc {
    MsHeader *objects;
    size_t bytes_allocated, next_gc;
    lox_scan_fn scan;
    void *context;
    void **gray;
    size_t gray_count, gray_capacity;
    LoxWeak *weaks;
    LoxType *types;
    LoxGcStats stats;
};

struct lox_visitor {
    LoxGc *gc;
};

#define MS_MIN_HEAP ((size_t)1 << 20)

static MsHeader *header_of(void *obj) { return (MsHeader *)obj - 1; }
/* Arrays: where the elements start (after the fixed fields, if any). */
static size_t array_base(const LoxType *type) {
    return type->desc.size ? type->desc.size : sizeof(tenure_array_header);
}

static void *must(void *p) {
    if (!p) {
        fprintf(stderr, "lox: out of memory\n");
        exit(70);
    }
    return p;
}

LoxGc *lox_gc_new(lox_scan_fn scan, void *context) {
    LoxGc *gc = calloc(1, sizeof *gc);
    if (!gc)
        return NULL;
    gc->scan = scan;
    gc->context = context;
    gc->next_gc = MS_MIN_HEAP;
    return gc;
}

void lox_gc_free(LoxGc *gc) {
    for (MsHeader *h = gc->objects, *next; h; h = next) {
        next = h->next;
        free(h);
    }
    for (LoxWeak *w = gc->weaks, *next; w; w = next) {
        next = w->next;
        free(w);
    }
    for (LoxType *t = gc->types, *next; t; t = next) {
        next = t->next;
        free(t);
    }
    free(gc->gray);
    free(gc);
}

const LoxType *lox_gc_type(LoxGc *gc, const LoxTypeDesc *desc) {
    LoxType *type = must(malloc(sizeof *type + desc->ref_count * sizeof(size_t)));
    type->desc = *desc;
    if (desc->ref_count)
        memcpy(type->refs, desc->refs, desc->ref_count * sizeof(size_t));
    type->next = gc->types;
    gc->types = type;
    return type;
}

void lox_visit(lox_visitor *visitor, void **slot) {
    void *obj = *slot;
    if (!obj)
        return;
    MsHeader *h = header_of(obj);
    if (h->marked)
        return;
    h->marked = 1;
    LoxGc *gc = visitor->gc;
    if (gc->gray_count == gc->gray_capacity) {
        gc->gray_capacity = gc->gray_capacity ? gc->gray_capacity * 2 : 256;
        gc->gray = must(realloc(gc->gray, gc->gray_capacity * sizeof *gc->gray));
    }
    gc->gray[gc->gray_count++] = obj;
}

static void trace_object(void *obj, lox_visitor *visitor) {
    const LoxType *type = header_of(obj)->type;
    if (type->desc.trace) {
        type->desc.trace(obj, visitor);
        return;
    }
    for (size_t i = 0; i < type->desc.ref_count; i++)
        lox_visit(visitor, (void **)((char *)obj + type->refs[i]));
    if (type->desc.elem_refs) {
        void **elems = (void **)((char *)obj + array_base(type));
        for (size_t i = 0, n = ((tenure_array_header *)obj)->length; i < n; i++)
            lox_visit(visitor, &elems[i]);
    }
}

static void clear_dead_weaks(LoxGc *gc) {
    for (LoxWeak **link = &gc->weaks; *link;) {
        LoxWeak *w = *link;
        if (w->freed) {
            *link = w->next;
            free(w);
            continue;
        }
        if (w->obj && !header_of(w->obj)->marked)
            w->obj = NULL;
        link = &w->next;
    }
}

static void sweep(LoxGc *gc) {
    size_t live = 0;
    for (MsHeader **link = &gc->objects; *link;) {
        MsHeader *h = *link;
        if (h->marked) {
            h->marked = 0;
            live += h->size;
            link = &h->next;
        } else {
            *link = h->next;
            free(h);
        }
    }
    gc->bytes_allocated = live;
    gc->next_gc = live * 2 > MS_MIN_HEAP ? live * 2 : MS_MIN_HEAP;
}

void lox_gc_collect(LoxGc *gc) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    lox_visitor visitor = {gc};
    gc->scan(gc->context, &visitor);
    while (gc->gray_count > 0)
        trace_object(gc->gray[--gc->gray_count], &visitor);
    clear_dead_weaks(gc);
    sweep(gc);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    gc->stats.collections++;
    gc->stats.pause_ns += (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)(t1.tv_nsec - t0.tv_nsec);
}

static void *allocate(LoxGc *gc, const LoxType *type, size_t size) {
    if (gc->bytes_allocated + size > gc->next_gc)
        lox_gc_collect(gc);
    MsHeader *h = calloc(1, sizeof *h + size);
    if (!h)
        return NULL;
    h->type = type;
    h->size = size;
    ((tenure_header *)(h + 1))->tenure__word = (uintptr_t)type; /* lox_type_of reads it */
    h->next = gc->objects;
    gc->objects = h;
    gc->bytes_allocated += size;
    return h + 1;
}

void *lox_gc_alloc(LoxGc *gc, const LoxType *type) { return allocate(gc, type, type->desc.size); }

void *lox_gc_alloc_array(LoxGc *gc, const LoxType *type, size_t length) {
    size_t elem_size = type->desc.elem_refs ? sizeof(void *) : type->desc.elem_size;
    size_t size = (array_base(type) + length * elem_size + 7) & ~(size_t)7;
    tenure_array_header *array = allocate(gc, type, size);
    if (array)
        array->length = length;
    return array;
}

void lox_gc_stats(LoxGc *gc, LoxGcStats *stats) { *stats = gc->stats; }

LoxWeak *lox_weak_new(LoxGc *gc, void *obj) {
    LoxWeak *w = must(calloc(1, sizeof *w));
    w->obj = obj;
    w->next = gc->weaks;
    gc->weaks = w;
    return w;
}
void *lox_weak_get(LoxGc *gc, LoxWeak *weak) {
    (void)gc;
    return weak->obj;
}
void lox_weak_free(LoxGc *gc, LoxWeak *weak) {
    (void)gc;
    weak->obj = NULL;
    weak->freed = 1;
}
