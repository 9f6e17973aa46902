/*
 * --chrome FILE: the GCs as Chrome trace-event JSON ({"traceEvents": [...]}), which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open.
 *
 * Per trace (one "process", pid = 1, 2, ... in argument order):
 *   - each GC a complete slice ("ph":"X") named "GC#n genG Reason", from the suspension's begin to
 *     the restart (a background GC: from its start to its GCHeapStats), on thread 1 ("GC") or,
 *     for background GCs, thread 2 ("background GC") so that foreground GCs inside them nest;
 *     its args: "gc" (the GC's number) and the GC's --json record (json.c);
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

/* One GC's slice, from its suspension (a background GC: its start) to its end; its args are the
 * GC's --json record. Returns the slice's end. */
static int64_t gc_slice(FILE *out, const tr_model *m, const tr_gc *g, int pid, int64_t *begin_out) {
    const int tid = g->type == TR_GC_BACKGROUND ? 2 : 1;
    int64_t begin = g->type == TR_GC_BACKGROUND ? g->start_ns : g->suspend_begin_ns;
    if (g->has_suspend && g->suspend_begin_ns < begin)
        begin = g->suspend_begin_ns;
    int64_t end = g->restart_ns > begin ? g->restart_ns : begin;
    char reason[24], name[64];
    gc_reason_label(g, reason, sizeof reason);
    snprintf(name, sizeof name, "GC#%u gen%d %s", g->number, g->gen, reason);
    slice(out, name, "gc", pid, tid, begin - m->first_ns, end - begin);
    fprintf(out, ", \"args\": {\"gc\": %u, ", g->number);
    json_gc_fields(out, m, g);
    fputs("}}", out);
    *begin_out = begin;
    return end;
}

/* The GCGlobalHeapHistory_V4 phases, one after the other from `from`, inside the GC's slice
 * (scaled down when they add up to more than the time left). */
static void gc_phases(FILE *out, const tr_gc *g, int pid, int tid, int64_t t0, int64_t from, int64_t end) {
    double total_ns = 0;
    for (int k = 0; k < g->phase_count; k++)
        total_ns += (double)g->phase_us[k] * 1000.0;
    double room = (double)(end - from);
    double scale = total_ns > room && total_ns > 0 ? room / total_ns : 1.0;
    int64_t at = from;
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

/* The heap size by generation after the GC: a counter */
static void gc_counter(FILE *out, const tr_gc *g, int pid, int64_t at) {
    sep(out);
    fprintf(out,
            "{\"name\": \"heap size after GC (MB)\", \"cat\": \"gc.heap\", \"ph\": \"C\", \"pid\": %d, \"ts\": ", pid);
    us(out, at);
    fputs(", \"args\": {", out);
    for (int k = 0; k < TR_GENS; k++)
        fprintf(out, "%s\"%s\": %.6g", k ? ", " : "", tr_gen_names[k], (double)g->gen_size_after[k] / MB);
    fputs("}}", out);
}

static void chrome_gc(FILE *out, const tr_model *m, const tr_gc *g, int pid) {
    const int tid = g->type == TR_GC_BACKGROUND ? 2 : 1;
    const int64_t t0 = m->first_ns;
    int64_t begin;
    int64_t end = gc_slice(out, m, g, pid, &begin);
    int64_t phase_from = g->start_ns > begin ? g->start_ns : begin;
    if (g->has_suspend && g->has_suspend_end && g->suspend_end_ns >= g->suspend_begin_ns) {
        int64_t se = g->suspend_end_ns < end ? g->suspend_end_ns : end;
        slice(out, "suspend", "gc.suspend", pid, tid, g->suspend_begin_ns - t0, se - g->suspend_begin_ns);
        fprintf(out, ", \"args\": {\"gc\": %u}}", g->number);
        if (se > phase_from)
            phase_from = se;
    }
    if (g->phase_count && phase_from < end)
        gc_phases(out, g, pid, tid, t0, phase_from, end);
    gc_counter(out, g, pid, end - t0);
}

void chrome_trace(FILE *out, const char *path, const tr_model *m, int pid) {
    char name[4200];
    snprintf(name, sizeof name, "tenure %s", path);
    meta(out, "process_name", pid, 0, name);
    meta(out, "thread_name", pid, 1, "GC");
    meta(out, "thread_name", pid, 2, "background GC");
    for (size_t i = 0; i < m->n; i++)
        chrome_gc(out, m, &m->gcs[i], pid);
}
