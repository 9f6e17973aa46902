/*
 * --compare A B: two traces side by side, with the difference B vs A in % ((B - A) / A).
 *
 * Percentiles of the GC pauses are taken as tenure-sim does: the sorted pauses' element at
 * index round((n - 1) * p) (p = 0.5, 0.9, 0.95, 0.99); max is the largest pause.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    M_GCS,
    M_GEN0,
    M_GEN1,
    M_GEN2,
    M_INDUCED,
    M_P50,
    M_P90,
    M_P95,
    M_P99,
    M_MAX,
    M_MEAN,
    M_TOTAL,
    M_PCT,
    M_PEAK,
    M_ALLOC,
    M_PROMOTED,
    M_DURATION,
    M_JOIN_WAIT, /* server GC: shown when a side has joins (README "Server GC") */
    M_GC_THREADS,
    M_COUNT
};

static const struct {
    const char *key, *label, *unit;
    int integer;
} metrics[M_COUNT] = {
    {"gc_count", "GCs", "", 1},
    {"gen0_gcs", "  gen0 GCs", "", 1},
    {"gen1_gcs", "  gen1 GCs", "", 1},
    {"gen2_gcs", "  gen2 GCs", "", 1},
    {"induced_gcs", "  induced GCs", "", 1},
    {"pause_median_ms", "Pause median", "ms", 0},
    {"pause_p90_ms", "Pause p90", "ms", 0},
    {"pause_p95_ms", "Pause p95", "ms", 0},
    {"pause_p99_ms", "Pause p99", "ms", 0},
    {"pause_max_ms", "Pause max", "ms", 0},
    {"pause_mean_ms", "Pause mean", "ms", 0},
    {"total_pause_ms", "Total pause", "ms", 0},
    {"pause_pct", "Pause % of time", "%", 0},
    {"peak_heap_mb", "Peak heap", "MB", 0},
    {"allocated_mb", "Allocated", "MB", 0},
    {"promoted_mb", "Promoted", "MB", 0},
    {"duration_ms", "Trace duration", "ms", 0},
    {"join_wait_ms", "Join wait", "ms", 0},
    {"max_gc_threads", "GC threads (max)", "", 1},
};

static void values(const tr_model *m, double v[M_COUNT]) {
    for (int k = 0; k < M_COUNT; k++)
        v[k] = NAN;
    if (!m)
        return;
    size_t n = 0;
    double *p = model_sorted_pauses(m, -1, &n);
    v[M_GCS] = (double)m->n;
    v[M_GEN0] = m->gc_by_gen[0];
    v[M_GEN1] = m->gc_by_gen[1];
    v[M_GEN2] = m->gc_by_gen[2];
    v[M_INDUCED] = m->rollup[TR_ROLLUP_ALL].induced;
    if (p || !m->n) { /* (no GC: every percentile 0) */
        v[M_P50] = p ? pause_percentile(p, n, 0.5) : 0;
        v[M_P90] = p ? pause_percentile(p, n, 0.9) : 0;
        v[M_P95] = p ? pause_percentile(p, n, 0.95) : 0;
        v[M_P99] = p ? pause_percentile(p, n, 0.99) : 0;
        v[M_MAX] = p ? p[n - 1] : 0;
    }
    v[M_MEAN] = m->n ? m->total_pause_ms / (double)m->n : 0;
    v[M_TOTAL] = m->total_pause_ms;
    v[M_PCT] = m->pause_pct;
    v[M_PEAK] = m->max_heap_mb;
    v[M_ALLOC] = m->alloc_source != TR_ALLOC_NONE ? m->total_alloc_mb : NAN;
    v[M_PROMOTED] = m->rollup[TR_ROLLUP_ALL].promoted_mb;
    v[M_DURATION] = m->duration_ms;
    /* a trace without joins is workstation GC: one GC thread, which never waits at a join */
    v[M_JOIN_WAIT] = m->join_events ? m->total_join_wait_ms : 0;
    v[M_GC_THREADS] = m->join_events ? m->max_gc_threads : 1;
    free(p);
}

/* (b - a) / a in %; NaN when it has no meaning (a unknown, or a = 0 and b != 0) */
static double diff_pct(double a, double b) {
    if (isnan(a) || isnan(b))
        return NAN;
    if (a == 0)
        return b == 0 ? 0 : NAN;
    return 100.0 * (b - a) / fabs(a);
}

static void cell(FILE *out, double v, int integer) {
    if (isnan(v))
        fprintf(out, " %14s", "-");
    else if (integer)
        fprintf(out, " %14.0f", v);
    else
        fprintf(out, " %14.3f", v);
}

static void compare_json(FILE *out, const char *const path[2], const tr_result *const res[2], double v[2][M_COUNT],
                         int count) {
    fputs("{\"compare\": {", out);
    for (int s = 0; s < 2; s++) {
        fprintf(out, "\"%s\": {\"path\": ", s ? "b" : "a");
        json_string(out, path[s]);
        fprintf(out, ", \"status\": \"%s\", \"error\": ", tr_status_word(res[s]));
        if (res[s]->error[0])
            json_string(out, res[s]->error);
        else
            fputs("null", out);
        fputs("}, ", out);
    }
    fputs("\n  \"metrics\": [", out);
    for (int k = 0; k < count; k++) {
        fprintf(out, "%s\n    {\"name\": \"%s\", \"unit\": \"%s\", ", k ? "," : "", metrics[k].key, metrics[k].unit);
        json_num(out, "a", v[0][k], 1);
        json_num(out, "b", v[1][k], 1);
        json_num(out, "diff_pct", diff_pct(v[0][k], v[1][k]), 0);
        fputs("}", out);
    }
    fputs("\n]}}\n", out);
}

static void compare_text(FILE *out, const char *const path[2], const tr_result *const res[2], double v[2][M_COUNT],
                         int count) {
    fprintf(out, "A: %s (%s)\nB: %s (%s)\n", path[0], tr_status_word(res[0]), path[1], tr_status_word(res[1]));
    for (int s = 0; s < 2; s++)
        if (res[s]->status != TR_FULL)
            fprintf(out, "note: %c: %s\n", s ? 'B' : 'A', res[s]->error);
    fprintf(out, "\n%-22s %14s %14s %10s\n", "", "A", "B", "B vs A");
    for (int k = 0; k < count; k++) {
        char label[40];
        snprintf(label, sizeof label, metrics[k].unit[0] && strcmp(metrics[k].unit, "%") ? "%s %s" : "%s",
                 metrics[k].label, metrics[k].unit);
        fprintf(out, "%-22s", label);
        cell(out, v[0][k], metrics[k].integer);
        cell(out, v[1][k], metrics[k].integer);
        double d = diff_pct(v[0][k], v[1][k]);
        if (isnan(d))
            fprintf(out, " %10s\n", "-");
        else
            fprintf(out, " %+9.1f%%\n", d);
    }
    fputs("\n(pause percentiles: the sorted pauses' element at round((n-1) p); MB = 10^6 bytes)\n", out);
}

void compare_print(FILE *out, int json, const char *const path[2], const tr_model *const m[2],
                   const tr_result *const res[2]) {
    double v[2][M_COUNT];
    int count = M_JOIN_WAIT; /* the join rows only when a side has joins: other reports stay as they were */
    for (int s = 0; s < 2; s++) {
        values(res[s]->status == TR_UNREADABLE ? NULL : m[s], v[s]);
        if (res[s]->status != TR_UNREADABLE && m[s] && m[s]->join_events)
            count = M_COUNT;
    }
    if (json)
        compare_json(out, path, res, v, count);
    else
        compare_text(out, path, res, v, count);
}
