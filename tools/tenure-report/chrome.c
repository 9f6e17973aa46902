/*
 * --chrome FILE: the GCs as Chrome trace-event JSON ({"traceEvents": [...]}), which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open.
 *
 * Per trace (one "process", pid = 1, 2, ... in argument order):
 *   - each GC a complete slice ("ph":"X") named "GC#n genG Reason", from the suspension's begin to
 *     the restart (a background GC: from its start to its GCHeapStats), on thread 1 ("GC") or,
 *     for background GCs, thread 2 ("background GC") so that foreground GCs inside them nest;
 *   - inside it, "suspend" (SuspendEEBegin .. SuspendEEEnd) and the GCGlobalHeapHistory_V4 phase
 *     times (the .NET runtime's: mark steps, plan, relocate and compact, or sweep; named by
 *     tr_phase_name) laid out one after the other from
 *     GCStart (scaled down when they add up to more than the time left in the slice);
 *   - after each GC, a counter ("ph":"C") "heap size after GC (MB)" with one value per
 *     generation (gen0, gen1, gen2, LOH, POH), the same numbers as --json's size_after_mb.
 * ts and dur are microseconds since the trace's first event, printed exactly (ns / 1000).
 */
#include "report.h"

#include <math.h>
#include <string.h>

#define MB 1000000.0

static int chrome_first;

static void sep(FILE *out) {
    fputs(chrome_first ? "\n" : ",\n", out);
    chrome_first = 0;
}

/* microseconds, exactly: ns / 1000 with three decimals */
static void us(FILE *out, int64_t ns) {
    if (ns < 0)
        ns = 0;
    fprintf(out, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

static void jval(FILE *out, const char *key, double v, int comma) {
    if (isnan(v) || isinf(v))
        fprintf(out, "\"%s\": null", key);
    else
        fprintf(out, "\"%s\": %.6g", key, v);
    if (comma)
        fputs(", ", out);
}

static void slice(FILE *out, const char *name, const char *cat, int pid, int tid, int64_t ts, int64_t dur) {
    sep(out);
    fputs("{\"name\": ", out);
    json_string(out, name);
    fprintf(out, ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"ts\": ", cat, pid, tid);
    us(out, ts);
    fputs(", \"dur\": ", out);
    us(out, dur < 0 ? 0 : dur);
}

static void meta(FILE *out, const char *what, int pid, int tid, const char *name) {
    sep(out);
    fprintf(out, "{\"name\": \"%s\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": ", what, pid, tid);
    json_string(out, name);
    fputs("}}", out);
}

void chrome_begin(FILE *out) {
    chrome_first = 1;
    fputs("{\"traceEvents\": [", out);
}

void chrome_end(FILE *out) {
    fputs("\n],\n \"displayTimeUnit\": \"ms\",\n \"otherData\": {\"tool\": \"tenure-report\", "
          "\"units\": \"ts/dur in microseconds since the trace's first event; sizes in MB of 10^6 bytes\"}}\n",
          out);
}

void chrome_trace(FILE *out, const char *path, const tr_model *m, int pid) {
    char name[4200];
    snprintf(name, sizeof name, "tenure %s", path);
    meta(out, "process_name", pid, 0, name);
    meta(out, "thread_name", pid, 1, "GC");
    meta(out, "thread_name", pid, 2, "background GC");
    const int64_t t0 = m->first_ns;

    for (size_t i = 0; i < m->n; i++) {
        const tr_gc *g = &m->gcs[i];
        const int tid = g->type == 1 ? 2 : 1;
        int64_t begin = g->type == 1 ? g->start_ns : g->suspend_begin_ns;
        if (g->has_suspend && g->suspend_begin_ns < begin)
            begin = g->suspend_begin_ns;
        int64_t end = g->restart_ns > begin ? g->restart_ns : begin;

        const char *rn = reason_name(g->reason);
        char rbuf[24];
        if (!rn) {
            snprintf(rbuf, sizeof rbuf, "Reason%u", g->reason);
            rn = rbuf;
        }
        char label[8];
        gc_gen_label(g, label, sizeof label);
        snprintf(name, sizeof name, "GC#%u gen%d %s", g->number, g->gen, rn);
        slice(out, name, "gc", pid, tid, begin - t0, end - begin);
        fprintf(out,
                ", \"args\": {\"gc\": %u, \"gen\": %d, \"label\": \"%s\", \"type\": \"%s\", \"reason\": ", g->number,
                g->gen, label,
                g->type == 1   ? "background"
                : g->type == 2 ? "foreground"
                               : "nonconcurrent");
        json_string(out, rn);
        fputs(", ", out);
        jval(out, "pause_ms", g->pause_ms, 1);
        jval(out, "suspend_ms", g->suspend_ms, 1);
        jval(out, "gen0_allocated_mb", g->alloc_gen0_mb, 1);
        jval(out, "peak_mb", g->peak_mb, 1);
        jval(out, "after_mb", g->after_mb, 1);
        jval(out, "promoted_mb", g->promoted_mb, 1);
        jval(out, "survival_pct", g->survival_pct, 1);
        jval(out, "fragmentation_pct", g->frag_pct, 1);
        fputs("\"size_after_mb\": {", out);
        for (int k = 0; k < TR_GENS; k++)
            fprintf(out, "%s\"%s\": %.6g", k ? ", " : "", tr_gen_names[k], (double)g->gen_size_after[k] / MB);
        fputs("}, \"promoted_by_gen_mb\": {", out);
        for (int k = 0; k < TR_GENS; k++)
            fprintf(out, "%s\"%s\": %.6g", k ? ", " : "", tr_gen_names[k], (double)g->promoted[k] / MB);
        fprintf(out, "}, \"pinned_objects\": %llu", (unsigned long long)g->pinned_objects);
        if (m->join_events) /* server GC (README "Server GC") */
            fprintf(out, ", \"gc_threads\": %d, \"join_wait_ms\": %.6f", g->gc_threads, g->join_wait_ms);
        fputs("}}", out);

        /* suspension */
        int64_t phase_from = g->start_ns > begin ? g->start_ns : begin;
        if (g->has_suspend && g->has_suspend_end && g->suspend_end_ns >= g->suspend_begin_ns) {
            int64_t se = g->suspend_end_ns < end ? g->suspend_end_ns : end;
            slice(out, "suspend", "gc.suspend", pid, tid, g->suspend_begin_ns - t0, se - g->suspend_begin_ns);
            fprintf(out, ", \"args\": {\"gc\": %u}}", g->number);
            if (se > phase_from)
                phase_from = se;
        }

        /* phases, one after the other from GCStart, inside the slice */
        if (g->phase_count && phase_from < end) {
            double total_ns = 0;
            for (int k = 0; k < g->phase_count; k++)
                total_ns += (double)g->phase_us[k] * 1000.0;
            double room = (double)(end - phase_from);
            double scale = total_ns > room && total_ns > 0 ? room / total_ns : 1.0;
            int64_t at = phase_from;
            for (int k = 0; k < g->phase_count; k++) {
                int64_t dur = (int64_t)((double)g->phase_us[k] * 1000.0 * scale);
                if (at + dur > end)
                    dur = end - at;
                if (dur <= 0)
                    continue;
                slice(out, tr_phase_name(g->phase_count, k), "gc.phase", pid, tid, at - t0, dur);
                fprintf(out, ", \"args\": {\"gc\": %u, \"phase_us\": %u%s}}", g->number, g->phase_us[k],
                        scale < 1.0 ? ", \"scaled\": true" : "");
                at += dur;
            }
        }

        /* heap size by generation after the GC */
        sep(out);
        fprintf(
            out,
            "{\"name\": \"heap size after GC (MB)\", \"cat\": \"gc.heap\", \"ph\": \"C\", \"pid\": %d, \"ts\": ", pid);
        us(out, end - t0);
        fputs(", \"args\": {", out);
        for (int k = 0; k < TR_GENS; k++)
            fprintf(out, "%s\"%s\": %.6g", k ? ", " : "", tr_gen_names[k], (double)g->gen_size_after[k] / MB);
        fputs("}}", out);
    }
}
