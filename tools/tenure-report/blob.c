/*
 * The .NET runtime's LTTng provider (dotnet/runtime src/coreclr/scripts/genLttngProvider.py,
 * MAX_LTTNG_ARGS = 9) writes an event with more than 9 fields, or with an array, as two fields:
 * `length` (u32) and `__data__` (a sequence of bytes): the ETW payload of the event, fields in
 * manifest order, little-endian, unpadded; pointers 8 bytes (64-bit traces), strings UTF-16
 * with a NUL unit. This file decodes those bytes with the manifest layout (ClrEtwAll.man) of
 * the event's version into the same tr_event as named fields give.
 *
 * The bytes are untrusted: every read is bounds-checked, a count is checked against the bytes
 * left before anything is read, and a blob shorter than its version's layout is refused (the
 * caller counts it and the report says so) rather than read as zeros.
 */
#include "report.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef enum bkind { B_U16, B_U32, B_I32, B_U64, B_PTR, B_WSTR, B_PHH_RECORDS, B_U32_ARRAY } bkind;

typedef struct bfield {
    const char *name;
    bkind kind;
} bfield;

/* One event's fields in its newest version; older versions are prefixes (nfields[version]). */
typedef struct blayout {
    tr_kind kind;
    const bfield *f;
    int nfields[6]; /* fields of version 0..5, 0: the version has another layout (not decoded) */
} blayout;

static const bfield heap_stats[] = {
    {"GenerationSize0", B_U64},
    {"TotalPromotedSize0", B_U64},
    {"GenerationSize1", B_U64},
    {"TotalPromotedSize1", B_U64},
    {"GenerationSize2", B_U64},
    {"TotalPromotedSize2", B_U64},
    {"GenerationSize3", B_U64},
    {"TotalPromotedSize3", B_U64},
    {"FinalizationPromotedSize", B_U64},
    {"FinalizationPromotedCount", B_U64},
    {"PinnedObjectCount", B_U32},
    {"SinkBlockCount", B_U32},
    {"GCHandleCount", B_U32},
    {"ClrInstanceID", B_U16},
    {"GenerationSize4", B_U64},
    {"TotalPromotedSize4", B_U64},
};

static const bfield per_heap_history_v3[] = {
    {"ClrInstanceID", B_U16},
    {"FreeListAllocated", B_PTR},
    {"FreeListRejected", B_PTR},
    {"EndOfSegAllocated", B_PTR},
    {"CondemnedAllocated", B_PTR},
    {"PinnedAllocated", B_PTR},
    {"PinnedAllocatedAdvance", B_PTR},
    {"RunningFreeListEfficiency", B_U32},
    {"CondemnReasons0", B_U32},
    {"CondemnReasons1", B_U32},
    {"CompactMechanisms", B_U32},
    {"ExpandMechanisms", B_U32},
    {"HeapIndex", B_U32},
    {"ExtraGen0Commit", B_PTR},
    {"Count", B_U32},
    {"Values", B_PHH_RECORDS},
};

static const bfield global_heap_history[] = {
    {"FinalYoungestDesired", B_U64}, {"NumHeaps", B_I32},        {"CondemnedGeneration", B_U32},
    {"Gen0ReductionCount", B_U32},   {"Reason", B_U32},          {"GlobalMechanisms", B_U32},
    {"ClrInstanceID", B_U16},        {"PauseMode", B_U32},       {"MemoryPressure", B_U32},
    {"CondemnReasons0", B_U32},      {"CondemnReasons1", B_U32}, {"Count", B_U32},
    {"Values", B_U32_ARRAY},
};

static const bfield allocation_tick[] = {
    {"AllocationAmount", B_U32},   {"AllocationKind", B_U32}, {"ClrInstanceID", B_U16},
    {"AllocationAmount64", B_U64}, {"TypeID", B_PTR},         {"TypeName", B_WSTR},
    {"HeapIndex", B_U32},          {"Address", B_PTR},        {"ObjectSize", B_U64},
};

static const bfield gc_start[] = {
    {"Count", B_U32}, {"Depth", B_U32},         {"Reason", B_U32},
    {"Type", B_U32},  {"ClrInstanceID", B_U16}, {"ClientSequenceNumber", B_U64},
};

static const bfield gc_end[] = {{"Count", B_U32}, {"Depth", B_U32}, {"ClrInstanceID", B_U16}};
static const bfield suspend_begin[] = {{"Reason", B_U32}, {"Count", B_U32}, {"ClrInstanceID", B_U16}};

static const blayout layouts[] = {
    {TR_EV_HEAP_STATS, heap_stats, {13, 14, 16, 0, 0, 0}},
    {TR_EV_PER_HEAP_HISTORY, per_heap_history_v3, {0, 0, 0, 16, 0, 0}},
    {TR_EV_GLOBAL_HEAP_HISTORY, global_heap_history, {6, 7, 9, 11, 13, 0}},
    {TR_EV_ALLOCATION_TICK, allocation_tick, {2, 3, 7, 8, 9, 0}},
    {TR_EV_GC_START, gc_start, {0, 5, 6, 0, 0, 0}}, /* V0 is Count, Reason: never packed */
    {TR_EV_GC_END, gc_end, {0, 3, 0, 0, 0, 0}},
    {TR_EV_SUSPEND_EE_BEGIN, suspend_begin, {0, 3, 0, 0, 0, 0}},
};

#define PHH_RECORD_BYTES 80 /* 10 pointers */

typedef struct cursor {
    const unsigned char *p;
    size_t len, off;
} cursor;

static int take(cursor *c, size_t n, uint64_t *v) {
    if (c->len - c->off < n)
        return -1;
    uint64_t x = 0;
    for (size_t i = n; i-- > 0;)
        x = x << 8 | c->p[c->off + i];
    c->off += n;
    *v = x;
    return 0;
}

static void set_scalar(tr_event *ev, const char *name, uint64_t v) {
    static const char *const sizes[TR_GENS] = {"GenerationSize0", "GenerationSize1", "GenerationSize2",
                                               "GenerationSize3", "GenerationSize4"};
    static const char *const promoted[TR_GENS] = {"TotalPromotedSize0", "TotalPromotedSize1", "TotalPromotedSize2",
                                                  "TotalPromotedSize3", "TotalPromotedSize4"};
    for (int g = 0; g < TR_GENS; g++) {
        if (strcmp(name, sizes[g]) == 0)
            ev->gen_size[g] = v;
        else if (strcmp(name, promoted[g]) == 0)
            ev->promoted[g] = v;
    }
    if (strcmp(name, "ClrInstanceID") == 0)
        ev->instance = (uint32_t)v;
    else if (strcmp(name, "FinalizationPromotedSize") == 0)
        ev->fin_promoted_size = v;
    else if (strcmp(name, "FinalizationPromotedCount") == 0)
        ev->fin_promoted_count = v;
    else if (strcmp(name, "PinnedObjectCount") == 0)
        ev->pinned_objects = v;
    else if (strcmp(name, "GCHandleCount") == 0)
        ev->handles = v;
    else if (strcmp(name, "HeapIndex") == 0)
        ev->heap_index = v;
    else if (strcmp(name, "NumHeaps") == 0)
        ev->num_heaps = v;
    else if (strcmp(name, "Count") == 0 &&
             (ev->kind == TR_EV_GC_START || ev->kind == TR_EV_GC_END || ev->kind == TR_EV_SUSPEND_EE_BEGIN))
        ev->count = v;
    else if (strcmp(name, "Depth") == 0)
        ev->depth = v;
    else if (strcmp(name, "Reason") == 0 && ev->kind != TR_EV_GLOBAL_HEAP_HISTORY)
        ev->reason = v;
    else if (strcmp(name, "Type") == 0)
        ev->type = v;
    else if (strcmp(name, "AllocationKind") == 0)
        ev->alloc_kind = v;
    else if (strcmp(name, "AllocationAmount") == 0 && ev->alloc_amount == 0)
        ev->alloc_amount = v;
    else if (strcmp(name, "AllocationAmount64") == 0)
        ev->alloc_amount = v;
}

static int why_fail(char *why, size_t whylen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    return -1;
}

/* the generation records of GCPerHeapHistory_V3: `count` of them, the first TR_GENS kept */
static int phh_records(tr_event *ev, cursor *c, uint64_t count) {
    if (count > (c->len - c->off) / PHH_RECORD_BYTES)
        return -1;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t v[10] = {0};
        for (int k = 0; k < 10; k++)
            take(c, 8, &v[k]); /* cannot fail: checked above */
        if (i >= TR_GENS)
            continue;
        tr_phh_gen *d = &ev->phh[i];
        d->size_before = v[0];
        d->free_list_before = v[1];
        d->free_obj_before = v[2];
        d->size_after = v[3];
        d->free_list_after = v[4];
        d->free_obj_after = v[5];
        /* v[6] In */
        d->pinned_surv = v[7];
        d->non_pinned_surv = v[8];
        d->new_allocation = v[9];
    }
    ev->phh_count = count < TR_GENS ? (int)count : TR_GENS;
    return 0;
}

/* The runtime's order: its mark steps, plan, then relocate and compact (8 values: a compacting
 * GC) or sweep (7 values: a sweeping one); 5 values are a background GC's mark steps. */
static const char *const phase_names[TR_PHASES] = {"mark sizedref",     "mark roots",     "mark short weak",
                                                   "mark finalization", "mark long weak", "plan",
                                                   "relocate",          "compact"};

const char *tr_phase_name(int count, int k) {
    if (k < 0 || k >= TR_PHASES)
        return "?";
    if (k == 6 && count == 7)
        return "sweep";
    return phase_names[k];
}

static int u32_array(tr_event *ev, cursor *c, uint64_t count) {
    if (count > (c->len - c->off) / 4)
        return -1;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t v = 0;
        take(c, 4, &v);
        if (i < TR_PHASES)
            ev->phase_us[i] = (uint32_t)v;
    }
    ev->phase_count = count < TR_PHASES ? (int)count : TR_PHASES;
    return 0;
}

static int skip_wstr(cursor *c) {
    for (;;) {
        uint64_t unit;
        if (take(c, 2, &unit) != 0)
            return -1;
        if (unit == 0)
            return 0;
    }
}

static int version_of(const char *name) {
    const char *v = strrchr(name, '_');
    if (!v || v[1] != 'V' || v[2] < '0' || v[2] > '9' || v[3] != '\0')
        return 0;
    return v[2] - '0';
}

int blob_decode(tr_event *ev, const char *event_name, const unsigned char *data, size_t len, char *why, size_t whylen) {
    const char *colon = strchr(event_name, ':');
    const char *short_name = colon ? colon + 1 : event_name;
    int version = version_of(short_name);
    const blayout *l = NULL;
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        if (layouts[i].kind == ev->kind)
            l = &layouts[i];
    if (!l || version > 5 || l->nfields[version] == 0)
        return why_fail(why, whylen, "%s: no known layout for a packed payload of this version", short_name);

    cursor c = {data, len, 0};
    uint64_t count = 0;
    for (int i = 0; i < l->nfields[version]; i++) {
        const bfield *f = &l->f[i];
        uint64_t v = 0;
        int rc = 0;
        switch (f->kind) {
        case B_U16: rc = take(&c, 2, &v); break;
        case B_U32:
        case B_I32: rc = take(&c, 4, &v); break;
        case B_U64:
        case B_PTR: rc = take(&c, 8, &v); break;
        case B_WSTR: rc = skip_wstr(&c); break;
        case B_PHH_RECORDS: rc = phh_records(ev, &c, count); break;
        case B_U32_ARRAY: rc = u32_array(ev, &c, count); break;
        }
        if (rc != 0)
            return why_fail(why, whylen, "%s: a payload of %zu bytes ends inside field %s (offset %zu)", short_name,
                            len, f->name, c.off);
        if (strcmp(f->name, "Count") == 0)
            count = v;
        if (f->kind != B_WSTR && f->kind != B_PHH_RECORDS && f->kind != B_U32_ARRAY)
            set_scalar(ev, f->name, v);
    }
    return 0;
}
