/* The JSON report: the tool's one JSON writer. --json prints it, --html embeds it, --chrome
 * gives each GC slice the same GC record as its args, --compare writes its numbers with it. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MB 1000000.0

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

/* ---- values ------------------------------------------------------------------------------ */

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

/* 10 significant digits: a join wait of seconds keeps its microseconds (--compare against the
 * summary's 3 decimals) */
void json_number(FILE *out, double v) {
    if (isnan(v) || isinf(v))
        fputs("null", out);
    else
        fprintf(out, "%.10g", v);
}

/* "key": v (10 significant digits, null when unknown), then ", " when comma */
void json_num(FILE *out, const char *key, double v, int comma) {
    fprintf(out, "\"%s\": ", key);
    json_number(out, v);
    if (comma)
        fputs(", ", out);
}

/* "key": v with 3 decimals (ms and MB of the summary), null when unknown */
static void json_num3(FILE *out, const char *key, double v, int comma) {
    if (isnan(v) || isinf(v))
        fprintf(out, "\"%s\": null", key);
    else
        fprintf(out, "\"%s\": %.3f", key, v);
    if (comma)
        fputs(", ", out);
}

static void json_u64(FILE *out, const char *key, uint64_t v) {
    fprintf(out, "\"%s\": %llu, ", key, (unsigned long long)v);
}

/* "key": "s", or null for NULL or "" */
static void json_str_or_null(FILE *out, const char *key, const char *s) {
    fprintf(out, "\"%s\": ", key);
    if (s && s[0])
        json_string(out, s);
    else
        fputs("null", out);
}

/* ns as ms with every digit (the wait is a sum of ns; tests compare it exactly) */
static void json_ms_exact(FILE *out, const char *key, int64_t ns) {
    fprintf(out, "\"%s\": %s%lld.%06lld", key, ns < 0 ? "-" : "", llabs(ns / 1000000), llabs(ns % 1000000));
}

/* "key": [v0, ..., v4]: bytes by generation as MB */
static void json_gen_mb(FILE *out, const char *key, const uint64_t v[TR_GENS]) {
    fprintf(out, "\"%s\": [", key);
    for (int k = 0; k < TR_GENS; k++)
        fprintf(out, "%s%.6g", k ? ", " : "", (double)v[k] / MB);
    fputs("], ", out);
}

/* ---- server GC: joins and per-heap sizes -------------------------------------------------- */

static void json_join_summary(FILE *out, const tr_model *m) {
    fprintf(out, ", \"join_events\": %llu, \"max_gc_threads\": %d, ", (unsigned long long)m->join_events,
            m->max_gc_threads);
    json_num3(out, "total_join_wait_ms", m->total_join_wait_ms, 1);
    json_num(out, "join_wait_pct_pause", m->join_pct_pause, 1);
    json_num(out, "join_wait_pct_thread_time", m->join_pct_thread_time, 1);
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
            json_ms_exact(out, "join_wait_ms", d->wait_ns[h]);
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
    json_ms_exact(out, "join_wait_ms", g->join_wait_ns);
    fprintf(out, ", \"steal_bytes\": %llu", (unsigned long long)g->steal_bytes);
    json_heaps(out, m, g, 1);
    const tr_gc_detail *d = g->detail ? &m->details[g->detail - 1] : NULL;
    fputs(", \"join_ids\": [", out);
    for (int k = 0; d && k < d->nids; k++) {
        fprintf(out, "%s{\"id\": %u, ", k ? ", " : "", d->ids[k].id);
        json_str_or_null(out, "name", join_name(d->ids[k].id));
        fprintf(out, ", \"waits\": %u, ", d->ids[k].waits);
        json_ms_exact(out, "wait_ms", d->ids[k].wait_ns);
        fputc('}', out);
    }
    fputc(']', out);
}

/* ---- the GC record ------------------------------------------------------------------------ */

static const char *gc_type_name(const tr_gc *g) {
    return g->type == TR_GC_BACKGROUND ? "background" : g->type == TR_GC_FOREGROUND ? "foreground" : "nonconcurrent";
}

static void json_gc_what(FILE *out, const tr_gc *g) {
    char gen[8];
    gc_gen_label(g, gen, sizeof gen);
    fprintf(out, "\"number\": %u, ", g->number);
    json_num3(out, "start_ms", g->start_ms, 1);
    json_num3(out, "end_ms", g->end_ms, 1);
    fprintf(out, "\"reason\": %u, ", g->reason);
    json_str_or_null(out, "reason_name", reason_name(g->reason));
    fprintf(out, ", \"gen\": %d, \"type\": \"%s\", \"induced\": %s, \"label\": \"%s\", ", g->gen, gc_type_name(g),
            reason_is_induced(g->reason) ? "true" : "false", gen);
}

static void json_gc_sizes(FILE *out, const tr_gc *g) {
    json_num(out, "suspend_ms", g->suspend_ms, 1);
    json_num(out, "pause_ms", g->pause_ms, 1);
    json_num(out, "pause_pct", g->pause_pct, 1);
    json_num(out, "gen0_allocated_mb", g->alloc_gen0_mb, 1);
    json_num(out, "allocated_mb", g->alloc_mb, 1);
    fprintf(out, "\"allocated_source\": \"%s\", ", tr_alloc_source_name(g->alloc_source));
    json_num(out, "peak_mb", g->peak_mb, 1);
    json_num(out, "after_mb", g->after_mb, 1);
    json_num(out, "promoted_mb", g->promoted_mb, 1);
    json_gen_mb(out, "size_after_mb", g->gen_size_after);
    json_gen_mb(out, "promoted_by_gen_mb", g->promoted);
    json_num(out, "survival_pct", g->survival_pct, 1);
    json_num(out, "fragmentation_pct", g->frag_pct, 1);
    json_num(out, "condemned_survival_pct", g->condemned_surv_pct, 1);
}

/* A GC's fields, without the braces around them: the --json record and --chrome's args. */
void json_gc_fields(FILE *out, const tr_model *m, const tr_gc *g) {
    json_gc_what(out, g);
    json_gc_sizes(out, g);
    fputs("\"phases_us\": ", out);
    for (int k = 0; k < g->phase_count; k++)
        fprintf(out, "%s%u", k ? ", " : "[", g->phase_us[k]);
    fputs(g->phase_count ? "], " : "null, ", out);
    json_num(out, "finalizable_surv_mb", g->fin_surv_mb, 1);
    fprintf(out, "\"finalizable_survivors\": %llu, \"pinned_objects\": %llu, \"handles\": %llu",
            (unsigned long long)g->fin_promoted_count, (unsigned long long)g->pinned_objects,
            (unsigned long long)g->handles);
    if (m->join_events) /* a trace of server GC (README "Server GC") */
        json_gc_joins(out, m, g);
    else if (gc_heap_hist(m, g))
        json_heaps(out, m, g, 0);
}

/* ---- a trace's report --------------------------------------------------------------------- */

static void json_head(FILE *out, const char *path, const tr_model *m, const tr_result *res) {
    fputs("{\"path\": ", out);
    json_string(out, path);
    if (m && m->has_vpid) {
        fprintf(out, ", \"process\": {\"vpid\": %lld, \"name\": ", (long long)m->vpid);
        json_string(out, m->procname);
        fprintf(out, ", \"clr_instance\": %u}", m->instance);
    } else {
        fputs(", \"process\": null", out);
    }
    fprintf(out, ", \"status\": \"%s\", ", tr_status_word(res));
    json_str_or_null(out, "error", res->error);
}

static void json_summary(FILE *out, const tr_model *m) {
    fprintf(out, ",\n     \"summary\": {\"events\": %llu, ", (unsigned long long)m->events);
    json_num3(out, "duration_ms", m->duration_ms, 1);
    fprintf(out, "\"alloc_source\": \"%s\", ", tr_alloc_source_name(m->alloc_source));
    json_num3(out, "total_allocated_mb", m->alloc_source != TR_ALLOC_NONE ? m->total_alloc_mb : NAN, 1);
    fprintf(out, "\"allocated_estimated\": %s, ", m->alloc_estimated ? "true" : "false");
    json_u64(out, "allocation_ticks", m->tick_events);
    fprintf(out, "\"gc_count\": %zu, \"gc_by_gen\": [%d, %d, %d], \"induced\": %d, ", m->n, m->gc_by_gen[0],
            m->gc_by_gen[1], m->gc_by_gen[2], m->rollup[TR_ROLLUP_ALL].induced);
    json_num3(out, "total_pause_ms", m->total_pause_ms, 1);
    json_num(out, "pause_pct", m->pause_pct, 1);
    json_num3(out, "max_heap_mb", m->max_heap_mb, 1);
    json_num3(out, "max_after_gc_mb", m->max_after_mb, 1);
    json_num3(out, "total_promoted_mb", m->rollup[TR_ROLLUP_ALL].promoted_mb, 1);
    fprintf(out, "\"incomplete_gcs\": %zu, ", m->incomplete);
    json_u64(out, "discarded_events", m->discarded_events);
    json_u64(out, "discarded_packets", m->discarded_packets);
    json_u64(out, "cut_packets", m->cut_packets);
    json_u64(out, "malformed_payloads", m->bad_payloads);
    fprintf(out, "\"damaged_heap_histories\": %llu", (unsigned long long)m->bad_heap_hist);
    if (m->join_events)
        json_join_summary(out, m);
    fputs("},\n", out);
}

static void json_rollup(FILE *out, const tr_model *m) {
    static const char *labels[TR_ROLLUP_ALL + 1] = {"0", "1", "2", "all"};
    fputs("     \"generations\": [", out);
    for (int r = 0; r <= TR_ROLLUP_ALL; r++) {
        const tr_gen_rollup *ru = &m->rollup[r];
        fprintf(out, "%s\n       {\"gen\": \"%s\", \"count\": %d, \"induced\": %d, ", r ? "," : "", labels[r],
                ru->count, ru->induced);
        json_num3(out, "max_pause_ms", ru->max_pause_ms, 1);
        json_num3(out, "mean_pause_ms", ru->mean_pause_ms, 1);
        json_num3(out, "total_pause_ms", ru->total_pause_ms, 1);
        json_num3(out, "peak_mb", ru->peak_mb, 1);
        json_num3(out, "allocated_mb", ru->alloc_mb, 1);
        json_num3(out, "promoted_mb", ru->promoted_mb, 0);
        fputs("}", out);
    }
    fputs("],\n", out);
}

void print_json_trace(FILE *out, const char *path, const tr_model *m, const tr_result *res, int first) {
    fputs(first ? "\n    " : ",\n    ", out);
    json_head(out, path, m, res);
    if (res->status == TR_UNREADABLE) {
        fputs("}", out);
        return;
    }
    json_summary(out, m);
    json_rollup(out, m);
    fputs("     \"gcs\": [", out);
    for (size_t i = 0; i < m->n; i++) {
        fputs(i ? ",\n       {" : "\n       {", out);
        json_gc_fields(out, m, &m->gcs[i]);
        fputc('}', out);
    }
    fputs("]}", out);
}
