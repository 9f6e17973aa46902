/* crossing.c - the crossing table's lookups (crossing.h; docs/design/heap.md). */
#include "heap/crossing.h"

char *tn_crossing_object_start(const tenure_runtime *rt, const tn_region *r, const char *p) {
    char *o = tn_crossing_object(rt, p);
    if (o < r->start)
        o = r->start;
    while (o + tn_obj_size(o) <= p)
        o += tn_obj_size(o);
    return o;
}

void tn_crossing_note_object(tenure_runtime *rt, char *o, size_t size) { tn_crossing_set(rt, o, size); }
