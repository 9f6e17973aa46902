/* gc.h - the one small interface between the Lox VM and its memory manager.
 *
 * Two implementations, chosen at compile time: gc_tenure.c (the default: tenure, generational
 * and moving) and gc_marksweep.c (LOX_MARKSWEEP: a plain non-moving mark-sweep over malloc'd
 * objects, the baseline of the benchmarks). Both see the same object layouts (every object
 * begins with a tenure_header, arrays with a tenure_array_header), the same types and the
 * same precise roots (one root-scan callback). The rules the VM follows are tenure's, the
 * stricter ones: any allocation may move every object not reached through a root slot, and
 * every reference stored into an object goes through lox_gc_write. */
#ifndef LOX_GC_H
#define LOX_GC_H

#include <stddef.h>
#include <stdint.h>
#include <tenure.h>

#ifdef LOX_MARKSWEEP
typedef struct lox_visitor lox_visitor;
void lox_visit(lox_visitor *visitor, void **slot);
#else
typedef tenure_visitor lox_visitor;
#define lox_visit tenure_visit
#endif

/* Visits every reference slot of obj (for types whose references are not at fixed offsets). */
typedef void (*lox_trace_fn)(void *obj, lox_visitor *visitor);
/* Visits every root slot of the VM. */
typedef void (*lox_scan_fn)(void *context, lox_visitor *visitor);

typedef struct LoxTypeDesc {
    const char *name;
    size_t size;        /* fixed objects: sizeof the struct; arrays: the offset of the first
                           element (0: right after the tenure_array_header) */
    size_t elem_size;   /* arrays: bytes per element (0: a fixed object, or elem_refs) */
    const size_t *refs; /* offsets of the reference fields (of an array: its fixed fields) ... */
    size_t ref_count;
    int elem_refs;      /* arrays: every element is a reference */
    lox_trace_fn trace; /* ... or a callback (for other arrays with references) */
} LoxTypeDesc;

typedef struct LoxType LoxType;
typedef struct LoxGc LoxGc;

typedef struct LoxGcStats {
    uint64_t collections;
    uint64_t pause_ns;
} LoxGcStats;

/* The weak reference of the string-interning table: cleared when its object dies. */
typedef struct LoxWeak LoxWeak;

LoxGc *lox_gc_new(lox_scan_fn scan, void *context);
void lox_gc_free(LoxGc *gc);
const LoxType *lox_gc_type(LoxGc *gc, const LoxTypeDesc *desc);
void lox_gc_stats(LoxGc *gc, LoxGcStats *stats);
void lox_gc_collect(LoxGc *gc);

LoxWeak *lox_weak_new(LoxGc *gc, void *obj);
void *lox_weak_get(LoxGc *gc, LoxWeak *weak);
void lox_weak_free(LoxGc *gc, LoxWeak *weak);

/* The type of an object: both collectors keep it in the object's header word. */
static inline const LoxType *lox_type_of(const void *obj) {
    return (const LoxType *)(((const tenure_header *)obj)->tenure__word & ~(uintptr_t)7);
}

#ifdef LOX_MARKSWEEP
void *lox_gc_alloc(LoxGc *gc, const LoxType *type);
void *lox_gc_alloc_array(LoxGc *gc, const LoxType *type, size_t length);
/* A non-incremental, non-generational collector needs no barrier. */
static inline void lox_gc_write(LoxGc *gc, void *holder, void *slot, void *value) {
    (void)gc, (void)holder;
    *(void **)slot = value;
}
#else
struct LoxGc {
    tenure_runtime *rt; /* first: the inline paths below read it */
};
static inline void *lox_gc_alloc(LoxGc *gc, const LoxType *type) {
    return tenure_alloc(gc->rt, (const tenure_type *)type);
}
static inline void *lox_gc_alloc_array(LoxGc *gc, const LoxType *type, size_t length) {
    return tenure_alloc_array(gc->rt, (const tenure_type *)type, length);
}
static inline void lox_gc_write(LoxGc *gc, void *holder, void *slot, void *value) {
    tenure_write_ref(gc->rt, holder, slot, value);
}
#endif

#endif
