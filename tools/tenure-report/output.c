/* The text report (PerfView GCStats layout) and the JSON report. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MB 1000000.0


const char *const tr_gen_names[TR_GENS] = {"gen0", "gen1", "gen2", "LOH", "POH"};

/* .NET's gc_join_stage names (gc.cpp: numbers are never reused, so tools may keep them) */
static const char *const join_names[] = {
    "init_cpu_mapping",
    "done",
    "generation_determined",
    "begin_mark_phase",
    "scan_dependent_handles",
    "rescan_dependent_handles",
    "scan_sizedref_done",
    "null_dead_short_weak",
    "scan_finalization",
    "null_dead_long_weak",
    "null_dead_syncblk",
    "decide_on_compaction",
    "rearrange_segs_compaction",
    "adjust_handle_age_compact",
    "adjust_handle_age_sweep",
    "begin_relocate_phase",
    "relocate_phase_done",
    "verify_objects_done",
    "start_bgc",
    "restart_ee",
    "concurrent_overflow",
    "suspend_ee",
    "bgc_after_ephemeral",
    "allow_fgc",
    "bgc_sweep",
    "suspend_ee_verify",
    "restart_ee_verify",
    "set_state_free",
    "r_join_update_card_bundle",
};

/* NULL for an id this table does not name */
static const char *join_name(uint32_t id) {
    return id < sizeof join_names / sizeof join_names[0] ? join_names[id] : NULL;
}

/* A trace of server GC (it has GCJoin_V2 events): the join columns are shown. */
static int has_joins(const tr_model *m) { return m->join_events > 0; }

static const char *status_word(const tr_result *res) {
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

void print_text(FILE *out, const char *path, const tr_model *m, const tr_result *res) {
    fprintf(out, "Trace: %s\n", path);
    if (m && m->has_vpid)
        fprintf(out, "Process: vpid %lld (%s), ClrInstanceID %u\n", (long long)m->vpid,
                m->procname[0] ? m->procname : "?", m->instance);
    if (res->status == TR_UNREADABLE) {
        fprintf(out, "Status: unreadable: %s\n\n", res->error);
        return;
    }
    if (res->status == TR_PARTIAL)
        fprintf(out, "Status: partial report (GCs that completed only): %s\n", res->error[0] ? res->error : "");
    else
        fprintf(out, "Status: full\n");
    print_notes(out, m);

    int induced = m->rollup[3].induced;
    fprintf(out, "\nSummary\n");
    fprintf(out, "  Trace duration       %12.3f ms (%llu events)\n", m->duration_ms, (unsigned long long)m->events);
    if (strcmp(m->alloc_source, "none") == 0)
        fprintf(out, "  Total allocated      %12s MB (no GCAllocationTick or GCPerHeapHistory events)\n", "-");
    else
        fprintf(out, "  Total allocated      %12.3f MB (from %s)\n", m->total_alloc_mb,
                strcmp(m->alloc_source, "ticks") == 0 ? "GCAllocationTick" : "gen0 sizes");
    fprintf(out, "  GCs                  %12zu (gen0 %d, gen1 %d, gen2 %d), induced %d\n", m->n, m->gc_by_gen[0],
            m->gc_by_gen[1], m->gc_by_gen[2], induced);
    fprintf(out, "  Total pause          %12.3f ms (%.2f%% of the trace)\n", m->total_pause_ms, m->pause_pct);
    fprintf(out, "  Max heap size        %12.3f MB (largest after a GC %.3f MB)\n", m->max_heap_mb, m->max_after_mb);
    if (has_joins(m)) {
        fprintf(out, "  Join wait            %12.3f ms (summed over GC threads: ", m->total_join_wait_ms);
        if (isnan(m->join_pct_pause) || isnan(m->join_pct_thread_time))
            fprintf(out, "no GC pause time with GC threads");
        else
            fprintf(out, "%.2f%% of the GC pause time, %.2f%% of the GC threads' time in pauses", m->join_pct_pause,
                    m->join_pct_thread_time);
        fprintf(out, "), up to %d GC threads\n", m->max_gc_threads);
    }

    fprintf(out, "\nGC rollup by generation\n");
    fprintf(out, "%-5s %6s %13s %14s %15s %10s %10s %12s %8s\n", "Gen", "Count", "Max Pause ms", "Mean Pause ms",
            "Total Pause ms", "Peak MB", "Alloc MB", "Promoted MB", "Induced");
    static const char *labels[4] = {"0", "1", "2", "ALL"};
    static const int order[4] = {3, 0, 1, 2}; /* ALL first, as PerfView */
    for (int k = 0; k < 4; k++) {
        int r = order[k];
        const tr_gen_rollup *ru = &m->rollup[r];
        fprintf(out, "%-5s %6d %13.3f %14.3f %15.3f %10.3f %10.3f %12.3f %8d\n", labels[r], ru->count, ru->max_pause_ms,
                ru->mean_pause_ms, ru->total_pause_ms, ru->peak_mb, ru->alloc_mb, ru->promoted_mb, ru->induced);
    }

    fprintf(out, "\nGC events (Gen: N non-concurrent, B background, F foreground, I induced; MB = 10^6 bytes)\n");
    fprintf(out, "%6s %10s %-17s %-4s %10s %9s %7s %13s %9s %9s %9s %8s %8s %8s %8s %8s %9s %9s %10s %7s", "GC#",
            "Start ms", "Reason", "Gen", "Suspend ms", "Pause ms", "%Pause", "Gen0 Alloc MB", "Peak MB", "After MB",
            "Promo MB", "Gen0 MB", "Gen1 MB", "Gen2 MB", "LOH MB", "POH MB", "Gen0Surv%", "Gen0Frag%", "FinSurv MB",
            "Pinned");
    if (has_joins(m))
        fprintf(out, " %6s %9s", "GC Thr", "Join ms");
    fputc('\n', out);
    for (size_t i = 0; i < m->n; i++) {
        const tr_gc *g = &m->gcs[i];
        char gen[8], rbuf[24];
        gc_gen_label(g, gen, sizeof gen);
        const char *rn = reason_name(g->reason);
        if (!rn) {
            snprintf(rbuf, sizeof rbuf, "Reason%u", g->reason);
            rn = rbuf;
        }
        fprintf(out, "%6u %10.3f %-17s %-4s", g->number, g->start_ms, rn, gen);
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
    fprintf(out, "\n");
    print_heaps(out, m);
}

/* ---- JSON ------------------------------------------------------------------------------ */

void json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

static void jnum(FILE *out, const char *key, double v, int comma) {
    if (isnan(v) || isinf(v))
        fprintf(out, "\"%s\": null", key);
    else
        fprintf(out, "\"%s\": %.6g", key, v);
    if (comma)
        fputs(", ", out);
}

static void jnum3(FILE *out, const char *key, double v, int comma) {
    if (isnan(v) || isinf(v))
        fprintf(out, "\"%s\": null", key);
    else
        fprintf(out, "\"%s\": %.3f", key, v);
    if (comma)
        fputs(", ", out);
}

/* ns as ms with every digit (the wait is a sum of ns; tests compare it exactly) */
static void jms_exact(FILE *out, const char *key, int64_t ns) {
    fprintf(out, "\"%s\": %s%lld.%06lld", key, ns < 0 ? "-" : "", llabs(ns / 1000000), llabs(ns % 1000000));
}

static void json_join_summary(FILE *out, const tr_model *m) {
    fprintf(out, ", \"join_events\": %llu, \"max_gc_threads\": %d, ", (unsigned long long)m->join_events,
            m->max_gc_threads);
    jnum3(out, "total_join_wait_ms", m->total_join_wait_ms, 1);
    jnum(out, "join_wait_pct_pause", m->join_pct_pause, 1);
    jnum(out, "join_wait_pct_thread_time", m->join_pct_thread_time, 1);
    fprintf(out, "\"joins_outside_gcs\": %llu, \"joins_unpaired\": %llu", (unsigned long long)m->joins_outside,
            (unsigned long long)m->joins_unpaired);
}

/* A heap's GCPerHeapHistory figures in bytes (null where its event did not come). */
static void json_heap_hist(FILE *out, const tr_gc *g, const tr_gc_detail *d, int h) {
    const tr_heap_hist *x = h < d->hist_heaps && (g->phh_seen >> h & 1) ? &d->hist[h] : NULL;
    static const char *const keys[] = {"size_before_bytes", "gen0_size_before_bytes", "object_bytes_before",
                                       "survived_bytes",    "size_after_bytes",       "fragmentation_bytes",
                                       "gen0_budget_bytes"};
    uint64_t v[] = {0, 0, 0, 0, 0, 0, 0};
    if (x) {
        uint64_t got[] = {x->size_before, x->gen0_before, x->obj_before, x->survived,
                          x->size_after,  x->free_after,  x->gen0_budget};
        memcpy(v, got, sizeof v);
    }
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        if (x)
            fprintf(out, ", \"%s\": %llu", keys[k], (unsigned long long)v[k]);
        else
            fprintf(out, ", \"%s\": null", keys[k]);
    }
}

/* A GC's "heaps": one entry a heap, 0 up to the largest heap seen, with its join figures (a
 * trace with joins) and its GCPerHeapHistory figures (a GC of several heaps). */
static void json_heaps(FILE *out, const tr_model *m, const tr_gc *g, int joins) {
    const tr_gc_detail *d = g->detail ? &m->details[g->detail - 1] : NULL;
    const tr_gc_detail *hist = gc_heap_hist(m, g);
    int n = d && joins ? d->heaps : 0;
    if (hist && hist->hist_heaps > n)
        n = hist->hist_heaps;
    fputs(", \"heaps\": [", out);
    for (int h = 0; h < n; h++) {
        fprintf(out, "%s{\"heap\": %d", h ? ", " : "", h);
        if (joins) {
            fputs(", ", out);
            jms_exact(out, "join_wait_ms", d->wait_ns[h]);
            fprintf(out, ", \"steal_bytes\": %llu", (unsigned long long)d->steal_bytes[h]);
        }
        if (hist)
            json_heap_hist(out, g, hist, h);
        fputc('}', out);
    }
    fputc(']', out);
}

/* A server GC's join figures: its GC threads, the wait at joins (in all, per heap, per join
 * id) and the Steal bytes per heap. */
static void json_gc_joins(FILE *out, const tr_model *m, const tr_gc *g) {
    fprintf(out, ", \"gc_threads\": %d, ", g->gc_threads);
    jms_exact(out, "join_wait_ms", g->join_wait_ns);
    fprintf(out, ", \"steal_bytes\": %llu", (unsigned long long)g->steal_bytes);
    json_heaps(out, m, g, 1);
    const tr_gc_detail *d = g->detail ? &m->details[g->detail - 1] : NULL;
    fputs(", \"join_ids\": [", out);
    for (int k = 0; d && k < d->nids; k++) {
        const char *name = join_name(d->ids[k].id);
        fprintf(out, "%s{\"id\": %u, \"name\": ", k ? ", " : "", d->ids[k].id);
        if (name)
            json_string(out, name);
        else
            fputs("null", out);
        fprintf(out, ", \"waits\": %u, ", d->ids[k].waits);
        jms_exact(out, "wait_ms", d->ids[k].wait_ns);
        fputc('}', out);
    }
    fputc(']', out);
}

void print_json_trace(FILE *out, const char *path, const tr_model *m, const tr_result *res, int first) {
    fprintf(out, "%s\n    {\"path\": ", first ? "" : ",");
    json_string(out, path);
    if (m && m->has_vpid) {
        fprintf(out, ", \"process\": {\"vpid\": %lld, \"name\": ", (long long)m->vpid);
        json_string(out, m->procname);
        fprintf(out, ", \"clr_instance\": %u}", m->instance);
    } else {
        fputs(", \"process\": null", out);
    }
    fprintf(out, ", \"status\": \"%s\", \"error\": ", status_word(res));
    if (res->error[0])
        json_string(out, res->error);
    else
        fputs("null", out);
    if (res->status == TR_UNREADABLE) {
        fputs("}", out);
        return;
    }
    fprintf(out, ",\n     \"summary\": {\"events\": %llu, ", (unsigned long long)m->events);
    jnum3(out, "duration_ms", m->duration_ms, 1);
    fprintf(out, "\"alloc_source\": \"%s\", ", m->alloc_source);
    jnum3(out, "total_allocated_mb", strcmp(m->alloc_source, "none") ? m->total_alloc_mb : NAN, 1);
    fprintf(out, "\"allocation_ticks\": %llu, ", (unsigned long long)m->tick_events);
    fprintf(out, "\"gc_count\": %zu, \"gc_by_gen\": [%d, %d, %d], \"induced\": %d, ", m->n, m->gc_by_gen[0],
            m->gc_by_gen[1], m->gc_by_gen[2], m->rollup[3].induced);
    jnum3(out, "total_pause_ms", m->total_pause_ms, 1);
    jnum(out, "pause_pct", m->pause_pct, 1);
    jnum3(out, "max_heap_mb", m->max_heap_mb, 1);
    jnum3(out, "max_after_gc_mb", m->max_after_mb, 1);
    jnum3(out, "total_promoted_mb", m->rollup[3].promoted_mb, 1);
    fprintf(out,
            "\"incomplete_gcs\": %zu, \"discarded_events\": %llu, \"discarded_packets\": %llu, "
            "\"cut_packets\": %llu, \"malformed_payloads\": %llu, \"damaged_heap_histories\": %llu",
            m->incomplete, (unsigned long long)m->discarded_events, (unsigned long long)m->discarded_packets,
            (unsigned long long)m->cut_packets, (unsigned long long)m->bad_payloads,
            (unsigned long long)m->bad_heap_hist);
    if (has_joins(m))
        json_join_summary(out, m);
    fputs("},\n", out);

    fputs("     \"generations\": [", out);
    static const char *labels[4] = {"0", "1", "2", "all"};
    for (int r = 0; r < 4; r++) {
        const tr_gen_rollup *ru = &m->rollup[r];
        fprintf(out, "%s\n       {\"gen\": \"%s\", \"count\": %d, \"induced\": %d, ", r ? "," : "", labels[r],
                ru->count, ru->induced);
        jnum3(out, "max_pause_ms", ru->max_pause_ms, 1);
        jnum3(out, "mean_pause_ms", ru->mean_pause_ms, 1);
        jnum3(out, "total_pause_ms", ru->total_pause_ms, 1);
        jnum3(out, "peak_mb", ru->peak_mb, 1);
        jnum3(out, "allocated_mb", ru->alloc_mb, 1);
        jnum3(out, "promoted_mb", ru->promoted_mb, 0);
        fputs("}", out);
    }
    fputs("],\n     \"gcs\": [", out);
    for (size_t i = 0; i < m->n; i++) {
        const tr_gc *g = &m->gcs[i];
        char gen[8];
        gc_gen_label(g, gen, sizeof gen);
        const char *rn = reason_name(g->reason);
        fprintf(out, "%s\n       {\"number\": %u, ", i ? "," : "", g->number);
        jnum3(out, "start_ms", g->start_ms, 1);
        jnum3(out, "end_ms", g->end_ms, 1);
        fprintf(out, "\"reason\": %u, \"reason_name\": ", g->reason);
        if (rn)
            json_string(out, rn);
        else
            fputs("null", out);
        fprintf(out, ", \"gen\": %d, \"type\": \"%s\", \"induced\": %s, \"label\": \"%s\", ", g->gen,
                g->type == 1   ? "background"
                : g->type == 2 ? "foreground"
                               : "nonconcurrent",
                reason_is_induced(g->reason) ? "true" : "false", gen);
        jnum(out, "suspend_ms", g->suspend_ms, 1);
        jnum(out, "pause_ms", g->pause_ms, 1);
        jnum(out, "pause_pct", g->pause_pct, 1);
        jnum(out, "gen0_allocated_mb", g->alloc_gen0_mb, 1);
        jnum(out, "peak_mb", g->peak_mb, 1);
        jnum(out, "after_mb", g->after_mb, 1);
        jnum(out, "promoted_mb", g->promoted_mb, 1);
        fputs("\"size_after_mb\": [", out);
        for (int k = 0; k < TR_GENS; k++)
            fprintf(out, "%s%.6g", k ? ", " : "", (double)g->gen_size_after[k] / MB);
        fputs("], ", out);
        jnum(out, "survival_pct", g->survival_pct, 1);
        jnum(out, "fragmentation_pct", g->frag_pct, 1);
        jnum(out, "condemned_survival_pct", g->condemned_surv_pct, 1);
        fputs("\"phases_us\": ", out);
        if (g->phase_count) {
            for (int k = 0; k < g->phase_count; k++)
                fprintf(out, "%s%u", k ? ", " : "[", g->phase_us[k]);
            fputs("], ", out);
        } else {
            fputs("null, ", out);
        }
        jnum(out, "finalizable_surv_mb", g->fin_surv_mb, 1);
        fprintf(out, "\"finalizable_survivors\": %llu, \"pinned_objects\": %llu, \"handles\": %llu",
                (unsigned long long)g->fin_promoted_count, (unsigned long long)g->pinned_objects,
                (unsigned long long)g->handles);
        if (has_joins(m))
            json_gc_joins(out, m, g);
        else if (gc_heap_hist(m, g))
            json_heaps(out, m, g, 0);
        fputc('}', out);
    }
    fputs("]}", out);
}
