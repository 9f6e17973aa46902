/* The text reports: the full one (PerfView's GCStats layout: summary, rollup by generation, a
 * row per GC, server GC's heaps) and the screen (the summary, the rollup, pause percentiles and
 * the longest pauses, in 100 columns). */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MB 1000000.0

const char *const tr_gen_names[TR_GENS] = {"gen0", "gen1", "gen2", "LOH", "POH"};

/* A trace of server GC (it has GCJoin_V2 events): the join columns are shown. */
static int has_joins(const tr_model *m) { return m->join_events > 0; }

const char *tr_status_word(const tr_result *res) {
    return res->status == TR_FULL ? "full" : res->status == TR_PARTIAL ? "partial" : "unreadable";
}

/* a number, or "-" when unknown */
static void num(FILE *out, int width, int prec, double v) {
    if (isnan(v))
        fprintf(out, " %*s", width, "-");
    else
        fprintf(out, " %*.*f", width, prec, v);
}

static void print_notes(FILE *out, const tr_model *m) {
    if (m->incomplete)
        fprintf(out, "note: %zu GC(s) started but did not complete in the trace (left out)\n", m->incomplete);
    if (m->discarded_events)
        fprintf(out, "note: the tracer discarded %llu event(s)\n", (unsigned long long)m->discarded_events);
    if (m->discarded_packets)
        fprintf(out, "note: %llu packet(s) are missing from the trace\n", (unsigned long long)m->discarded_packets);
    if (m->bad_payloads)
        fprintf(out, "note: %llu GC event(s) with a malformed packed payload were left out, the first: %s\n",
                (unsigned long long)m->bad_payloads, m->bad_note);
    if (m->bad_heap_hist)
        fprintf(out,
                "note: %llu GCPerHeapHistory event(s) with a HeapIndex past 63 or repeated in a GC were left out\n",
                (unsigned long long)m->bad_heap_hist);
    if (m->joins_outside)
        fprintf(out, "note: %llu GCJoin event(s) outside any GC were left out\n", (unsigned long long)m->joins_outside);
    if (m->joins_unpaired)
        fprintf(out, "note: %llu waiting join(s) without their start or end were left out of the join wait\n",
                (unsigned long long)m->joins_unpaired);
    if (m->cut_packets)
        fprintf(out,
                "note: %llu packet(s) cut short (the writer was killed or a file-size limit cut it), "
                "reported up to the cut: %s\n",
                (unsigned long long)m->cut_packets, m->cut_note);
}

/* One heap's figures over the GCs that kept it apart (print_heaps). */
typedef struct heap_total {
    int gcs;
    uint64_t survived;
    double size_after, gen0_budget; /* summed, for the means */
} heap_total;

/* The GCs of several heaps, heap by heap (PerfView's per-heap view of server GC): how many of
 * them each heap took part in, what survived on it and its share of all survivors, its mean size
 * after and gen0 budget. Nothing for a trace whose GCs each had one heap. */
static void print_heaps(FILE *out, const tr_model *m) {
    heap_total t[TR_MAX_HEAPS];
    memset(t, 0, sizeof t);
    int heaps = 0;
    uint64_t survived = 0;
    for (size_t i = 0; i < m->n; i++) {
        const tr_gc *g = &m->gcs[i];
        const tr_gc_detail *d = gc_heap_hist(m, g);
        for (int h = 0; d && h < d->hist_heaps; h++) {
            if (!(g->phh_seen >> h & 1))
                continue;
            t[h].gcs++;
            t[h].survived += d->hist[h].survived;
            t[h].size_after += (double)d->hist[h].size_after;
            t[h].gen0_budget += (double)d->hist[h].gen0_budget;
            survived += d->hist[h].survived;
            if (h >= heaps)
                heaps = h + 1;
        }
    }
    if (!heaps)
        return;
    fprintf(out, "Server GC heaps (GCs of several heaps, from GCPerHeapHistory; Survived: condemned generations)\n");
    fprintf(out, "%5s %6s %12s %9s %14s %19s\n", "Heap", "GCs", "Survived MB", "Share %", "Mean After MB",
            "Mean Gen0 Budget MB");
    for (int h = 0; h < heaps; h++) {
        const heap_total *x = &t[h];
        fprintf(out, "%5d %6d %12.3f", h, x->gcs, (double)x->survived / MB);
        num(out, 9, 2, survived ? 100.0 * (double)x->survived / (double)survived : NAN);
        num(out, 14, 3, x->gcs ? x->size_after / x->gcs / MB : NAN);
        num(out, 19, 3, x->gcs ? x->gen0_budget / x->gcs / MB : NAN);
        fputc('\n', out);
    }
    fprintf(out, "\n");
}

/* Trace, process and status lines; 0 when the trace is unreadable (nothing more to say). */
static int print_header(FILE *out, const char *path, const tr_model *m, const tr_result *res) {
    fprintf(out, "Trace: %s\n", path);
    if (m && m->has_vpid)
        fprintf(out, "Process: vpid %lld (%s), ClrInstanceID %u\n", (long long)m->vpid,
                m->procname[0] ? m->procname : "?", m->instance);
    if (res->status == TR_UNREADABLE) {
        fprintf(out, "Status: unreadable: %s\n\n", res->error);
        return 0;
    }
    if (res->status == TR_PARTIAL)
        fprintf(out, "Status: partial report (GCs that completed only): %s\n", res->error);
    else
        fprintf(out, "Status: full\n");
    print_notes(out, m);
    return 1;
}

static void print_allocated(FILE *out, const tr_model *m) {
    if (m->alloc_source == TR_ALLOC_NONE) {
        fprintf(out, "  Total allocated      %12s MB (no GCAllocationTick or GCPerHeapHistory events)\n", "-");
        return;
    }
    fprintf(out, "  Total allocated      %12.3f MB (%s%s)\n", m->total_alloc_mb, tr_alloc_source_text(m->alloc_source),
            m->alloc_estimated ? "; estimated" : "");
}

static void print_join_summary(FILE *out, const tr_model *m) {
    fprintf(out, "  Join wait            %12.3f ms (summed over GC threads), up to %d GC threads\n",
            m->total_join_wait_ms, m->max_gc_threads);
    if (isnan(m->join_pct_pause) || isnan(m->join_pct_thread_time))
        fprintf(out, "                       (no GC pause time with GC threads)\n");
    else
        fprintf(out, "                       %.2f%% of the GC pause time, %.2f%% of the GC threads' time in pauses\n",
                m->join_pct_pause, m->join_pct_thread_time);
}

static void print_summary(FILE *out, const tr_model *m) {
    fprintf(out, "\nSummary (MB = 10^6 bytes)\n");
    fprintf(out, "  Trace duration       %12.3f ms (first to last event, %llu events)\n", m->duration_ms,
            (unsigned long long)m->events);
    print_allocated(out, m);
    fprintf(out, "  GCs                  %12zu (gen0 %d, gen1 %d, gen2 %d), induced %d\n", m->n, m->gc_by_gen[0],
            m->gc_by_gen[1], m->gc_by_gen[2], m->rollup[TR_ROLLUP_ALL].induced);
    fprintf(out, "  Total pause          %12.3f ms = %.2f%% of the trace duration\n", m->total_pause_ms, m->pause_pct);
    fprintf(out, "                       (a pause: GCSuspendEEBegin to GCRestartEEEnd, as PerfView; the trace:\n"
                 "                       its first event to its last, at the default level the first GC's\n"
                 "                       suspension to the last GC's restart)\n");
    fprintf(out, "  Max heap size        %12.3f MB (largest after a GC %.3f MB)\n", m->max_heap_mb, m->max_after_mb);
    if (has_joins(m))
        print_join_summary(out, m);
}

static const char *const rollup_labels[TR_ROLLUP_ALL + 1] = {"0", "1", "2", "ALL"};
static const int rollup_order[TR_ROLLUP_ALL + 1] = {TR_ROLLUP_ALL, TR_GEN0, TR_GEN1,
                                                    TR_GEN2}; /* ALL first, as PerfView */

static void print_rollup(FILE *out, const tr_model *m) {
    fprintf(out, "\nGC rollup by generation (Alloc MB: allocated since the GC before, every object heap)\n");
    fprintf(out, "%-4s %6s %13s %14s %15s %9s %10s %12s %8s\n", "Gen", "Count", "Max Pause ms", "Mean Pause ms",
            "Total Pause ms", "Peak MB", "Alloc MB", "Promoted MB", "Induced");
    for (int k = 0; k <= TR_ROLLUP_ALL; k++) {
        const tr_gen_rollup *ru = &m->rollup[rollup_order[k]];
        fprintf(out, "%-4s %6d %13.3f %14.3f %15.3f %9.3f %10.3f %12.3f %8d\n", rollup_labels[rollup_order[k]],
                ru->count, ru->max_pause_ms, ru->mean_pause_ms, ru->total_pause_ms, ru->peak_mb, ru->alloc_mb,
                ru->promoted_mb, ru->induced);
    }
}

static void print_gc_header(FILE *out, const tr_model *m) {
    fprintf(out, "\nGC events (Gen: N non-concurrent, B background, F foreground, I induced; MB = 10^6 bytes)\n");
    fprintf(out, "%6s %10s %-17s %-4s %10s %9s %7s %13s %9s %9s %9s %8s %8s %8s %8s %8s %9s %9s %10s %7s", "GC#",
            "Start ms", "Reason", "Gen", "Suspend ms", "Pause ms", "%Pause", "Gen0 Alloc MB", "Peak MB", "After MB",
            "Promo MB", "Gen0 MB", "Gen1 MB", "Gen2 MB", "LOH MB", "POH MB", "Gen0Surv%", "Gen0Frag%", "FinSurv MB",
            "Pinned");
    if (has_joins(m))
        fprintf(out, " %6s %9s", "GC Thr", "Join ms");
    fputc('\n', out);
}

static void print_gc_row(FILE *out, const tr_model *m, const tr_gc *g) {
    char gen[8], reason[24];
    gc_gen_label(g, gen, sizeof gen);
    gc_reason_label(g, reason, sizeof reason);
    fprintf(out, "%6u %10.3f %-17s %-4s", g->number, g->start_ms, reason, gen);
    num(out, 10, 3, g->suspend_ms);
    num(out, 9, 3, g->pause_ms);
    num(out, 7, 2, g->pause_pct);
    num(out, 13, 3, g->alloc_gen0_mb);
    num(out, 9, 3, g->peak_mb);
    num(out, 9, 3, g->after_mb);
    num(out, 9, 3, g->promoted_mb);
    for (int k = 0; k < TR_GENS; k++)
        num(out, 8, 3, (double)g->gen_size_after[k] / MB);
    num(out, 9, 0, g->survival_pct);
    num(out, 9, 2, g->frag_pct);
    num(out, 10, 3, g->fin_surv_mb);
    fprintf(out, " %7llu", (unsigned long long)g->pinned_objects);
    if (has_joins(m))
        fprintf(out, " %6d %9.3f", g->gc_threads, g->join_wait_ms);
    fputc('\n', out);
}

void print_text(FILE *out, const char *path, const tr_model *m, const tr_result *res) {
    if (!print_header(out, path, m, res))
        return;
    print_summary(out, m);
    print_rollup(out, m);
    print_gc_header(out, m);
    for (size_t i = 0; i < m->n; i++)
        print_gc_row(out, m, &m->gcs[i]);
    fprintf(out, "\n");
    print_heaps(out, m);
}

/* ---- the screen ---------------------------------------------------------------------------- */

static void print_percentile_row(FILE *out, const tr_model *m, int r) {
    size_t n = 0;
    double *p = model_sorted_pauses(m, r == TR_ROLLUP_ALL ? -1 : r, &n);
    fprintf(out, "%-4s %6zu", rollup_labels[r], n);
    static const double at[] = {0.5, 0.9, 0.95, 0.99};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++)
        num(out, 10, 3, p ? pause_percentile(p, n, at[k]) : NAN);
    num(out, 10, 3, p ? p[n - 1] : NAN);
    fputc('\n', out);
    free(p);
}

static void print_percentiles(FILE *out, const tr_model *m) {
    fprintf(out, "\nPause percentiles (ms; the sorted pauses' element at round((n - 1) p))\n");
    fprintf(out, "%-4s %6s %10s %10s %10s %10s %10s\n", "Gen", "Count", "Median", "p90", "p95", "p99", "Max");
    for (int k = 0; k <= TR_ROLLUP_ALL; k++)
        print_percentile_row(out, m, rollup_order[k]);
}

/* A GC's GCGlobalHeapHistory_V4 phase times in ms: mark (its steps summed), plan, relocate,
 * compact, sweep (NaN for a phase it does not have). */
enum { SHOWN_MARK, SHOWN_PLAN, SHOWN_RELOCATE, SHOWN_COMPACT, SHOWN_SWEEP, SHOWN_PHASES };
static const char *const shown_phase[SHOWN_PHASES] = {"mark", "plan", "relocate", "compact", "sweep"};

static void gc_phases_ms(const tr_gc *g, double ms[SHOWN_PHASES]) {
    for (int s = 0; s < SHOWN_PHASES; s++)
        ms[s] = NAN;
    for (int k = 0; k < g->phase_count; k++) {
        const char *name = tr_phase_name(g->phase_count, k);
        int s = 0;
        while (s < SHOWN_PHASES && strncmp(name, shown_phase[s], strlen(shown_phase[s])) != 0)
            s++;
        if (s < SHOWN_PHASES)
            ms[s] = (isnan(ms[s]) ? 0 : ms[s]) + g->phase_us[k] / 1000.0;
    }
}

static void print_long_pause(FILE *out, const tr_gc *g) {
    char gen[8], reason[24];
    double ms[SHOWN_PHASES];
    gc_gen_label(g, gen, sizeof gen);
    gc_reason_label(g, reason, sizeof reason);
    gc_phases_ms(g, ms);
    fprintf(out, "%6u %10.3f %-4s %-13s", g->number, g->start_ms, gen, reason);
    num(out, 9, 3, g->pause_ms);
    num(out, 8, 3, g->promoted_mb);
    for (int s = 0; s < SHOWN_PHASES; s++)
        num(out, 7, 2, ms[s]);
    fputc('\n', out);
}

#define LONGEST_SHOWN 10

static void print_longest(FILE *out, const tr_model *m) {
    size_t idx[LONGEST_SHOWN];
    size_t n = model_longest_pauses(m, idx, LONGEST_SHOWN);
    fprintf(out, "\nThe %zu longest pauses (Surv MB: what survived, promoted; phases in ms, GCGlobalHeapHistory)\n", n);
    fprintf(out, "%6s %10s %-4s %-13s %9s %8s %7s %7s %7s %7s %7s\n", "GC#", "Start ms", "Gen", "Reason", "Pause ms",
            "Surv MB", "Mark", "Plan", "Reloc", "Compact", "Sweep");
    for (size_t k = 0; k < n; k++)
        print_long_pause(out, &m->gcs[idx[k]]);
}

void print_screen(FILE *out, const char *path, const tr_model *m, const tr_result *res) {
    if (!print_header(out, path, m, res))
        return;
    print_summary(out, m);
    print_rollup(out, m);
    print_percentiles(out, m);
    print_longest(out, m);
    fputc('\n', out);
}
