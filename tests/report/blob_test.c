/*
 * blob.c against payloads built here from the manifest layouts (ClrEtwAll.man) of the versions
 * the real traces in tests/data do not hold: GCHeapStats_V2, GCGlobalHeapHistory_V3/V4,
 * GCAllocationTick_V4 (a UTF-16 type name), GCPerHeapHistory_V3 with five generations; and
 * the malformed ones: every blob cut at every length short of its layout, a count past the
 * end, a string without its NUL, an unknown version. Run under ASan by the sanitizer build.
 */
#include "report.h"
#include "unit_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct buf {
    unsigned char b[1024];
    size_t n;
} buf;

static void put(buf *b, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++)
        b->b[b->n++] = (unsigned char)(v >> (8 * i));
}

static void put_wstr(buf *b, const char *s) {
    for (; *s; s++)
        put(b, (unsigned char)*s, 2);
    put(b, 0, 2);
}

static int decode(tr_kind kind, const char *name, const unsigned char *p, size_t n, tr_event *ev, char *why) {
    memset(ev, 0, sizeof *ev);
    ev->kind = kind;
    /* a private copy of exactly n bytes: ASan sees any read past it */
    unsigned char *copy = malloc(n ? n : 1);
    memcpy(copy, p, n);
    int rc = blob_decode(ev, name, copy, n, why, 160);
    free(copy);
    return rc;
}

/* every cut short of the whole blob is refused, with a reason */
static void check_cuts(tr_kind kind, const char *name, const buf *b) {
    tr_event ev;
    char why[160];
    for (size_t n = 0; n < b->n; n++) {
        why[0] = '\0';
        int rc = decode(kind, name, b->b, n, &ev, why);
        CHECK(rc == -1 && why[0], "%s cut to %zu of %zu bytes: rc %d", name, n, b->n, rc);
    }
}

static void heap_stats_v2(void) {
    buf b = {.n = 0};
    for (int g = 0; g < 4; g++) {
        put(&b, 1000 + g, 8); /* GenerationSize g */
        put(&b, 100 + g, 8);  /* TotalPromotedSize g */
    }
    put(&b, 77, 8); /* FinalizationPromotedSize */
    put(&b, 7, 8);  /* FinalizationPromotedCount */
    put(&b, 3, 4);  /* PinnedObjectCount */
    put(&b, 9, 4);  /* SinkBlockCount */
    put(&b, 42, 4); /* GCHandleCount */
    put(&b, 5, 2);  /* ClrInstanceID */
    size_t v1 = b.n;
    put(&b, 1004, 8); /* GenerationSize4 */
    put(&b, 104, 8);  /* TotalPromotedSize4 */
    CHECK(v1 == 94 && b.n == 110, "layout sizes %zu %zu", v1, b.n);
    tr_event ev;
    char why[160];
    CHECK(decode(TR_EV_HEAP_STATS, "DotNETRuntime:GCHeapStats_V2", b.b, b.n, &ev, why) == 0, "V2: %s", why);
    for (int g = 0; g < TR_GENS; g++)
        CHECK(ev.gen_size[g] == 1000u + g && ev.promoted[g] == 100u + g, "V2 gen %d: %llu %llu", g,
              (unsigned long long)ev.gen_size[g], (unsigned long long)ev.promoted[g]);
    CHECK(ev.fin_promoted_size == 77 && ev.fin_promoted_count == 7 && ev.pinned_objects == 3 && ev.handles == 42 &&
              ev.instance == 5,
          "V2 scalars");
    check_cuts(TR_EV_HEAP_STATS, "GCHeapStats_V2", &b);
    /* V1: the first 94 bytes, POH absent */
    CHECK(decode(TR_EV_HEAP_STATS, "GCHeapStats_V1", b.b, v1, &ev, why) == 0 && ev.gen_size[4] == 0 &&
              ev.gen_size[3] == 1003,
          "V1: %s", why);
}

static void global_heap_history_v4(void) {
    buf b = {.n = 0};
    put(&b, 123456, 8); /* FinalYoungestDesired */
    put(&b, 1, 4);      /* NumHeaps */
    put(&b, 2, 4);      /* CondemnedGeneration */
    put(&b, 0, 4);      /* Gen0ReductionCount */
    put(&b, 4, 4);      /* Reason */
    put(&b, 0, 4);      /* GlobalMechanisms */
    put(&b, 1, 2);      /* ClrInstanceID */
    put(&b, 1, 4);      /* PauseMode */
    put(&b, 0, 4);      /* MemoryPressure */
    put(&b, 0, 4);      /* CondemnReasons0 */
    put(&b, 0, 4);      /* CondemnReasons1 */
    size_t v3 = b.n;
    put(&b, 7, 4); /* Count */
    for (int i = 0; i < 7; i++)
        put(&b, 10u * (i + 1), 4);
    tr_event ev;
    char why[160];
    CHECK(decode(TR_EV_GLOBAL_HEAP_HISTORY, "GCGlobalHeapHistory_V4", b.b, b.n, &ev, why) == 0, "V4: %s", why);
    CHECK(ev.phase_count == 7 && ev.phase_us[0] == 10 && ev.phase_us[6] == 70 && ev.instance == 1,
          "V4 values: %d %u %u", ev.phase_count, ev.phase_us[0], ev.phase_us[6]);
    CHECK(strcmp(tr_phase_name(7, 6), "sweep") == 0 && strcmp(tr_phase_name(8, 6), "relocate") == 0 &&
              strcmp(tr_phase_name(8, 1), "mark roots") == 0 && strcmp(tr_phase_name(8, 7), "compact") == 0,
          "V4 phase names follow the runtime's etw_gc_time_info");
    CHECK(ev.reason == 0, "GlobalHeapHistory's Reason is not a GC reason");
    check_cuts(TR_EV_GLOBAL_HEAP_HISTORY, "GCGlobalHeapHistory_V4", &b);
    CHECK(decode(TR_EV_GLOBAL_HEAP_HISTORY, "GCGlobalHeapHistory_V3", b.b, v3, &ev, why) == 0 && ev.phase_count == 0,
          "V3: %s", why);
    /* a count past the end */
    b.b[v3] = 0xff;
    b.b[v3 + 1] = 0xff;
    b.b[v3 + 2] = 0xff;
    b.b[v3 + 3] = 0x7f;
    CHECK(decode(TR_EV_GLOBAL_HEAP_HISTORY, "GCGlobalHeapHistory_V4", b.b, b.n, &ev, why) == -1,
          "V4 with a count past the end accepted");
}

static void allocation_tick_v4(void) {
    buf b = {.n = 0};
    put(&b, 106736, 4);     /* AllocationAmount */
    put(&b, 1, 4);          /* AllocationKind */
    put(&b, 0, 2);          /* ClrInstanceID */
    put(&b, 5000000000, 8); /* AllocationAmount64 */
    put(&b, 0xdead, 8);     /* TypeID */
    put_wstr(&b, "System.Int32[]");
    put(&b, 0, 4);      /* HeapIndex */
    put(&b, 0xbeef, 8); /* Address */
    put(&b, 106736, 8); /* ObjectSize */
    tr_event ev;
    char why[160];
    CHECK(decode(TR_EV_ALLOCATION_TICK, "DotNETRuntime:GCAllocationTick_V4", b.b, b.n, &ev, why) == 0, "V4: %s", why);
    CHECK(ev.alloc_amount == 5000000000ull && ev.alloc_kind == 1, "V4: amount %llu kind %llu",
          (unsigned long long)ev.alloc_amount, (unsigned long long)ev.alloc_kind);
    check_cuts(TR_EV_ALLOCATION_TICK, "GCAllocationTick_V4", &b);
    /* V1: AllocationAmount, AllocationKind, ClrInstanceID only */
    CHECK(decode(TR_EV_ALLOCATION_TICK, "GCAllocationTick_V1", b.b, 10, &ev, why) == 0 && ev.alloc_amount == 106736,
          "V1: %s", why);
}

static void per_heap_history_v3(void) {
    buf b = {.n = 0};
    put(&b, 0, 2); /* ClrInstanceID */
    for (int i = 0; i < 6; i++)
        put(&b, 0, 8); /* FreeListAllocated .. PinnedAllocatedAdvance */
    for (int i = 0; i < 5; i++)
        put(&b, 0, 4); /* RunningFreeListEfficiency .. ExpandMechanisms */
    put(&b, 3, 4);     /* HeapIndex */
    put(&b, 0, 8);     /* ExtraGen0Commit */
    CHECK(b.n == 82, "fixed part %zu", b.n);
    put(&b, 5, 4); /* Count */
    for (int g = 0; g < 5; g++)
        for (int k = 0; k < 10; k++)
            put(&b, 1000u * (g + 1) + k, 8);
    tr_event ev;
    char why[160];
    CHECK(decode(TR_EV_PER_HEAP_HISTORY, "GCPerHeapHistory_V3", b.b, b.n, &ev, why) == 0, "V3: %s", why);
    CHECK(ev.phh_count == 5 && ev.heap_index == 3 && ev.phh[0].size_before == 1000 && ev.phh[0].size_after == 1003 &&
              ev.phh[4].pinned_surv == 5007 && ev.phh[4].non_pinned_surv == 5008,
          "V3 records");
    check_cuts(TR_EV_PER_HEAP_HISTORY, "GCPerHeapHistory_V3", &b);
    CHECK(decode(TR_EV_PER_HEAP_HISTORY, "GCPerHeapHistory_V2", b.b, b.n, &ev, why) == -1 && strstr(why, "no known"),
          "V2 (another layout) decoded as V3");
}

int main(void) {
    heap_stats_v2();
    global_heap_history_v4();
    allocation_tick_v4();
    per_heap_history_v3();
    tr_event ev;
    char why[160];
    unsigned char z[8] = {0};
    CHECK(decode(TR_EV_HEAP_STATS, "GCHeapStats_V9", z, sizeof z, &ev, why) == -1, "an unknown version decoded");
    CHECK(decode(TR_EV_OTHER, "Foo", z, sizeof z, &ev, why) == -1, "an unknown event decoded");
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
