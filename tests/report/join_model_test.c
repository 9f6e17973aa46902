/*
 * model.c's server GC rules on made-up event orders a real trace rarely shows (check_joins.py
 * checks real traces): a helper's join end written after the GC's restart, joins without their
 * start or end, a join outside any GC, heap numbers past TR_JOIN_HEAPS and TR_HEAPS_SHOWN, more
 * join ids than TR_JOIN_IDS, restarts (never a GC thread), Steal per heap, joins before GCStart
 * (.NET's generation_determined); GCPerHeapHistory per heap: a workstation GC keeps no per-heap
 * figures, a GC of several heaps keeps each (the first recovered from the sums), a HeapIndex past
 * TR_MAX_HEAPS or repeated is left out and counted. Run under ASan by the sanitizer build.
 */
#include "report.h"
#include "unit_check.h"

#include <stdio.h>
#include <string.h>


static void feed(tr_model *m, tr_event ev) {
    if (model_event(m, &ev) != 0) {
        fprintf(stderr, "FAIL: model_event ran out of memory\n");
        failures++;
    }
}

/* tid 1 collects: suspension, GCStart number n */
static void gc_begin(tr_model *m, int64_t t, uint64_t n) {
    feed(m, (tr_event){.kind = TR_EV_SUSPEND_EE_BEGIN, .ts_ns = t, .tid = 1, .reason = 1, .count = n});
    feed(m, (tr_event){.kind = TR_EV_SUSPEND_EE_END, .ts_ns = t + 1, .tid = 1});
    feed(m, (tr_event){.kind = TR_EV_GC_START, .ts_ns = t + 2, .tid = 1, .count = n});
}

static void gc_end(tr_model *m, int64_t t, uint64_t n) {
    feed(m, (tr_event){.kind = TR_EV_GC_END, .ts_ns = t, .tid = 1, .count = n});
    feed(m, (tr_event){.kind = TR_EV_HEAP_STATS, .ts_ns = t + 1, .tid = 1});
    feed(m, (tr_event){.kind = TR_EV_RESTART_EE_END, .ts_ns = t + 2, .tid = 1});
}

static void join(tr_model *m, int64_t t, uint64_t heap, uint64_t time, uint64_t type, uint64_t id) {
    feed(m, (tr_event){.kind = TR_EV_JOIN,
                       .ts_ns = t,
                       .tid = 10 + heap,
                       .join_heap = heap,
                       .join_time = time,
                       .join_type = type,
                       .join_id = id});
}

static void steal(tr_model *m, int64_t t, uint64_t heap, uint64_t bytes) {
    feed(m, (tr_event){.kind = TR_EV_MARK_WITH_TYPE,
                       .ts_ns = t,
                       .tid = 1,
                       .mark_heap = heap,
                       .mark_type = 8,
                       .mark_bytes = bytes});
}

static const tr_gc_detail *detail(const tr_model *m, size_t i) {
    return m->gcs[i].detail ? &m->details[m->gcs[i].detail - 1] : NULL;
}

/* GC 1: thread 0 waits 15 ns at join 3; heap 1 waits 40 ns at join 4 and writes its end after
 * the restart: the wait is GC 1's. Steal 1000 and 500 bytes; a root kind that is not Steal. */
static void helper_ends_after_restart(tr_model *m) {
    gc_begin(m, 100, 1);
    join(m, 120, 0, 0, TR_JOIN_WAIT, 3);
    join(m, 130, 1, 0, TR_JOIN_LAST, 3);
    join(m, 135, 0, 1, TR_JOIN_WAIT, 3);
    join(m, 136, 100, 0, TR_JOIN_RESTART, UINT32_MAX);
    join(m, 137, 100, 1, TR_JOIN_RESTART, UINT32_MAX);
    join(m, 140, 1, 0, TR_JOIN_WAIT, 4);
    join(m, 150, 0, 0, TR_JOIN_LAST, 4);
    steal(m, 151, 0, 1000);
    steal(m, 152, 1, 500);
    feed(m, (tr_event){.kind = TR_EV_MARK_WITH_TYPE, .ts_ns = 153, .mark_type = 0, .mark_bytes = 77});
    gc_end(m, 160, 1);
    join(m, 180, 1, 1, TR_JOIN_WAIT, 4);
}

/* GC 2: an end without its start (heap 1), a start that never ends (heap 0), a heap past
 * TR_JOIN_HEAPS; then a join outside any GC. */
static void broken_pairs(tr_model *m) {
    gc_begin(m, 200, 2);
    join(m, 220, 0, 0, TR_JOIN_WAIT, 3);
    join(m, 230, 1, 1, TR_JOIN_WAIT, 3);
    join(m, 231, 5000, 0, TR_JOIN_WAIT, 3);
    gc_end(m, 240, 2);
    join(m, 300, 2, 0, TR_JOIN_WAIT, 3);
}

/* GC 3: heap 70 (past TR_HEAPS_SHOWN) waits 2 ns at each of 20 join ids (more than
 * TR_JOIN_IDS), heap 0 arrives last at each. */
static void many_ids(tr_model *m) {
    gc_begin(m, 400, 3);
    int64_t t = 410;
    for (uint64_t id = 0; id < 20; id++, t += 10) {
        join(m, t, 70, 0, TR_JOIN_WAIT, id);
        join(m, t + 1, 0, 0, TR_JOIN_LAST, id);
        join(m, t + 2, 70, 1, TR_JOIN_WAIT, id);
    }
    gc_end(m, t, 3);
}

/* GC 4 (.NET's order): the GC threads meet at generation_determined (2) between the suspension
 * and GCStart: held, then GC 4's. Then a suspension that starts no GC: its join is outside. */
static void joins_before_start(tr_model *m) {
    feed(m, (tr_event){.kind = TR_EV_SUSPEND_EE_BEGIN, .ts_ns = 600, .tid = 1, .reason = 1, .count = 4});
    join(m, 601, 0, 0, TR_JOIN_WAIT, 2);
    join(m, 602, 1, 0, TR_JOIN_LAST, 2);
    join(m, 605, 0, 1, TR_JOIN_WAIT, 2);
    feed(m, (tr_event){.kind = TR_EV_GC_START, .ts_ns = 610, .tid = 1, .count = 4});
    gc_end(m, 620, 4);
    feed(m, (tr_event){.kind = TR_EV_SUSPEND_EE_BEGIN, .ts_ns = 700, .tid = 1, .reason = 1, .count = 5});
    join(m, 701, 0, 0, TR_JOIN_LAST, 2);
    feed(m, (tr_event){.kind = TR_EV_RESTART_EE_END, .ts_ns = 710, .tid = 1});
}

/* A background GC (Type 1) that ends after 100 foreground GCs (a slow BGC thread, or one that
 * tenure_destroy finishes): its GCEnd still finds it (it was lost after 64). */
static void long_background_gc(void) {
    tr_model m;
    model_init(&m);
    feed(&m, (tr_event){.kind = TR_EV_SUSPEND_EE_BEGIN, .ts_ns = 10, .tid = 1, .reason = 1, .count = 1});
    feed(&m, (tr_event){.kind = TR_EV_SUSPEND_EE_END, .ts_ns = 11, .tid = 1});
    feed(&m, (tr_event){.kind = TR_EV_GC_START, .ts_ns = 12, .tid = 1, .count = 1, .depth = 2, .type = 1});
    feed(&m, (tr_event){.kind = TR_EV_RESTART_EE_END, .ts_ns = 13, .tid = 1});
    for (uint64_t n = 2; n <= 101; n++) {
        gc_begin(&m, (int64_t)n * 100, n);
        gc_end(&m, (int64_t)n * 100 + 50, n);
    }
    feed(&m, (tr_event){.kind = TR_EV_GC_END, .ts_ns = 20000, .tid = 2, .count = 1});
    feed(&m, (tr_event){.kind = TR_EV_HEAP_STATS, .ts_ns = 20001, .tid = 2});
    model_finish(&m);
    CHECK(m.n == 101 && m.incomplete == 0, "a BGC around 100 foreground GCs: %zu GCs, %zu incomplete", m.n,
          m.incomplete);
    model_free(&m);
}

/* One heap's GCPerHeapHistory: gen0 of `before` bytes, `surv` survived, `after` left. */
static void heap_hist(tr_model *m, int64_t t, uint64_t heap, uint64_t before, uint64_t surv, uint64_t after) {
    tr_event ev = {.kind = TR_EV_PER_HEAP_HISTORY, .ts_ns = t, .tid = 1, .heap_index = heap, .phh_count = TR_GENS};
    ev.phh[0] = (tr_phh_gen){.size_before = before, .size_after = after, .non_pinned_surv = surv, .new_allocation = 7};
    feed(m, ev);
}

/* GC 1: one heap (no per-heap figures); GC 2: heaps 1 and 0, a repeated heap 1, heap 64 and a
 * HeapIndex of 2^32 - 1 (left out); GC 3: NumHeaps 2 before its one heap's history. */
static void heap_histories(void) {
    tr_model m;
    model_init(&m);
    gc_begin(&m, 100, 1);
    heap_hist(&m, 110, 0, 1000, 100, 100);
    gc_end(&m, 120, 1);
    gc_begin(&m, 200, 2);
    heap_hist(&m, 210, 1, 2000, 200, 250);
    heap_hist(&m, 211, 0, 3000, 300, 350);
    heap_hist(&m, 212, 1, 9000, 900, 900);
    heap_hist(&m, 213, TR_MAX_HEAPS, 9000, 900, 900);
    heap_hist(&m, 214, UINT32_MAX, 9000, 900, 900);
    gc_end(&m, 220, 2);
    gc_begin(&m, 300, 3);
    feed(&m, (tr_event){.kind = TR_EV_GLOBAL_HEAP_HISTORY, .ts_ns = 305, .tid = 1, .num_heaps = 2});
    heap_hist(&m, 310, 1, 500, 50, 60);
    gc_end(&m, 320, 3);
    model_finish(&m);
    tr_result res = {0};
    model_status(&m, &res);
    CHECK(m.n == 3, "%zu GCs, want 3", m.n);
    if (m.n != 3)
        return;
    CHECK(m.gcs[0].detail == 0 && !gc_heap_hist(&m, &m.gcs[0]), "GC 1 (one heap) has per-heap figures");
    const tr_gc *g = &m.gcs[1];
    const tr_gc_detail *d = gc_heap_hist(&m, g);
    CHECK(g->phh_heaps == 2 && g->phh[0].size_before == 5000 && g->phh[0].non_pinned_surv == 500,
          "GC 2: %d heaps summed, %llu before, want 2 and 5000 (the damaged ones left out)", g->phh_heaps,
          (unsigned long long)g->phh[0].size_before);
    CHECK(d && d->hist_heaps == 2 && d->hist[0].survived == 300 && d->hist[1].survived == 200 &&
              d->hist[1].gen0_before == 2000 && d->hist[0].size_after == 350 && d->hist[1].gen0_budget == 7,
          "GC 2: per-heap figures");
    d = gc_heap_hist(&m, &m.gcs[2]);
    CHECK(d && d->hist_heaps == 2 && m.gcs[2].phh_seen == 2 && d->hist[1].survived == 50,
          "GC 3 (NumHeaps 2): heap 1 kept apart");
    CHECK(m.bad_heap_hist == 3, "%llu damaged heap histories, want 3", (unsigned long long)m.bad_heap_hist);
    CHECK(res.status == TR_PARTIAL && strstr(res.error, "GCPerHeapHistory"), "status %d: %s", res.status, res.error);
    model_free(&m);
}

int main(void) {
    tr_model m;
    model_init(&m);
    helper_ends_after_restart(&m);
    broken_pairs(&m);
    many_ids(&m);
    joins_before_start(&m);
    model_finish(&m);

    CHECK(m.n == 4 && m.incomplete == 0, "%zu GCs, %zu incomplete", m.n, m.incomplete);
    if (m.n != 4)
        return 1;
    const tr_gc *g = &m.gcs[0];
    const tr_gc_detail *d = detail(&m, 0);
    CHECK(g->gc_threads == 2, "GC 1: %d GC threads, want 2 (the restart is no thread)", g->gc_threads);
    CHECK(g->join_wait_ns == 55, "GC 1: join wait %lld ns, want 15 + 40", (long long)g->join_wait_ns);
    CHECK(g->joins == 8, "GC 1: %u join events, want 8", g->joins);
    CHECK(g->steal_bytes == 1500, "GC 1: Steal %llu bytes, want 1500", (unsigned long long)g->steal_bytes);
    if (d) {
        CHECK(d->heaps == 2 && d->wait_ns[0] == 15 && d->wait_ns[1] == 40, "GC 1: %d heaps, waits %lld %lld", d->heaps,
              (long long)d->wait_ns[0], (long long)d->wait_ns[1]);
        CHECK(d->steal_bytes[0] == 1000 && d->steal_bytes[1] == 500, "GC 1: Steal per heap");
        CHECK(d->nids == 2 && d->ids[0].id == 3 && d->ids[0].waits == 1 && d->ids[0].wait_ns == 15 &&
                  d->ids[1].id == 4 && d->ids[1].wait_ns == 40,
              "GC 1: waits per join id");
    } else {
        CHECK(0, "GC 1 has no per-heap figures");
    }

    g = &m.gcs[1];
    CHECK(g->gc_threads == 1, "GC 2: %d GC threads, want 1 (heap 0's start)", g->gc_threads);
    CHECK(g->join_wait_ns == 0, "GC 2: join wait %lld ns, want 0", (long long)g->join_wait_ns);
    CHECK(m.joins_unpaired == 3, "%llu unpaired joins, want 3 (an end alone, heap 5000, a start never ended)",
          (unsigned long long)m.joins_unpaired);
    CHECK(m.joins_outside == 2, "%llu joins outside GCs, want 2 (after GC 2, in a pause without a GC)",
          (unsigned long long)m.joins_outside);

    g = &m.gcs[2];
    d = detail(&m, 2);
    CHECK(g->gc_threads == 2, "GC 3: %d GC threads, want 2", g->gc_threads);
    CHECK(g->join_wait_ns == 40, "GC 3: join wait %lld ns, want 20 x 2", (long long)g->join_wait_ns);
    if (d) {
        CHECK(d->heaps == 1 && d->nids == TR_JOIN_IDS, "GC 3: %d heaps shown (heap 70 is past them), %d ids", d->heaps,
              d->nids);
        CHECK(d->ids[TR_JOIN_IDS - 1].id == TR_JOIN_IDS - 1 && d->ids[0].wait_ns == 2, "GC 3: ids in order");
    } else {
        CHECK(0, "GC 3 has no per-heap figures");
    }

    g = &m.gcs[3];
    CHECK(g->gc_threads == 2 && g->join_wait_ns == 4 && g->joins == 3,
          "GC 4: %d GC threads, wait %lld ns, %u joins; want 2, 4 (held until GCStart), 3", g->gc_threads,
          (long long)g->join_wait_ns, g->joins);

    CHECK(m.join_events == 8 + 4 + 60 + 4, "%llu join events", (unsigned long long)m.join_events);
    CHECK(m.max_gc_threads == 2, "max GC threads %d", m.max_gc_threads);
    CHECK(m.total_join_wait_ms * 1e6 > 98.999 && m.total_join_wait_ms * 1e6 < 99.001, "total join wait %g ms",
          m.total_join_wait_ms);
    CHECK(m.join_open == NULL && m.held == NULL, "the reading state is freed once read");
    model_free(&m);
    long_background_gc();
    heap_histories();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
