/*
 * tenure-report [--full | --json] [--out DIR] [--chrome FILE] [--html FILE] [--timeout S]
 *               [--max-memory M] TRACE...
 * tenure-report --compare [--json] TRACE_A TRACE_B
 *
 * Each argument is a CTF trace directory (it holds `metadata`), a directory holding trace
 * directories (tenure-<pid>-<instance>/ of TENURE_TRACE=<dir>, an unzipped perfcollect trace),
 * or a perfcollect .trace.zip: each trace is reported, one report per process and runtime
 * instance (LTTng traces of .NET processes).
 *
 * Exit status: 0 every trace fully reported; 3 a partial report (the trace is cut short or
 * damaged, GCs that did not complete are left out, or events were discarded); 2 some input
 * could not be read at all (or bad usage). 2 wins over 3.
 */
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: tenure-report [--full | --json] [--out DIR] [--chrome FILE] [--html FILE] [--verbose]\n"
            "                     [--timeout S] [--max-memory M] TRACE...\n"
            "       tenure-report --compare [--json] [--verbose] TRACE_A TRACE_B\n"
            "  Rebuild the GCs of tenure CTF traces (the .NET GC events) and print PerfView's GCStats.\n"
            "  TRACE is a trace directory (with a `metadata` file), a directory holding trace\n"
            "  directories (tenure-*/ of TENURE_TRACE=<dir>, an unzipped perfcollect trace), or a\n"
            "  perfcollect .trace.zip; one report per trace, process (vpid) and ClrInstanceID.\n"
            "  By default a screen a trace: the summary, the rollup by generation, pause percentiles\n"
            "  and the ten longest pauses.\n"
            "  --full         the full report: also one row per GC (and server GC's heaps)\n"
            "  --json         the summary, rollup and per-GC records as JSON on stdout\n"
            "  --out DIR      also write the full report to DIR/gc-report.txt and the HTML report to\n"
            "                 DIR/gc-report.html (when built with --html), and say where\n"
            "  --chrome FILE  also write the GCs as Chrome trace-event JSON (Perfetto, chrome://tracing)\n"
            "  --html FILE    also write a self-contained HTML report with interactive charts%s\n"
            "  --compare A B  two traces side by side (GC counts, pause percentiles, total pause, peak\n"
            "                 heap, allocated), the difference B vs A in %%; text, or JSON with --json\n"
            "  --verbose      babeltrace2's own diagnostics on stderr (where a damaged trace is damaged)\n"
            "  --timeout S    give up a trace whose decoding takes more than S seconds (default %g; 0: never)\n"
            "  --max-memory M the decoding process's memory limit in MiB (default %d; 0: none)\n"
            "  FILE - is stdout (then the text/JSON report is not printed)\n"
            "exit status: 0 full report, 3 partial report, 2 unreadable input or bad usage\n",
            html_available() ? "" : " (not in this build: npm was missing or TENURE_REPORT_HTML=OFF)",
            TR_DEFAULT_TIMEOUT_S, TR_DEFAULT_MAX_MEMORY_MB);
}

static int has_metadata(const char *dir) {
    char p[4096];
    struct stat st;
    if (snprintf(p, sizeof p, "%s/metadata", dir) >= (int)sizeof p)
        return 0;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

typedef struct strlist {
    char **v;
    size_t n, cap;
} strlist;

static int push(strlist *l, const char *s) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    char *d = strdup(s);
    if (!d)
        return -1;
    l->v[l->n++] = d;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* 1 when the trace's metadata says it is an LTTng kernel trace (no runtime events in it) */
static int kernel_trace(const char *dir) {
    char p[4096];
    if (snprintf(p, sizeof p, "%s/metadata", dir) >= (int)sizeof p)
        return 0;
    FILE *f = fopen(p, "rb");
    if (!f)
        return 0;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    static const char needle[] = "domain = \"kernel\";";
    for (size_t i = 0; i + sizeof needle - 1 <= n; i++)
        if (memcmp(buf + i, needle, sizeof needle - 1) == 0)
            return 1;
    return 0;
}

/* Trace directories (holding `metadata`) under dir, depth-first, at most 16 levels down, never
 * through a symbolic link; LTTng's index/ folders and kernel traces are left out. */
static int walk_traces(const char *dir, int depth, strlist *found, size_t *kernel) {
    if (has_metadata(dir)) {
        if (kernel_trace(dir))
            ++*kernel;
        else if (push(found, dir) != 0)
            return -1;
        return 0;
    }
    if (depth >= 16 || found->n >= TR_MAX_FILES)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    strlist subs = {0};
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || strcmp(de->d_name, "index") == 0)
            continue;
        char p[4096];
        struct stat st;
        if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p)
            continue;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            rc = push(&subs, p);
    }
    closedir(d);
    if (subs.n)
        qsort(subs.v, subs.n, sizeof *subs.v, cmp_str);
    for (size_t i = 0; i < subs.n; i++) {
        if (rc == 0)
            rc = walk_traces(subs.v[i], depth + 1, found, kernel);
        free(subs.v[i]);
    }
    free(subs.v);
    return rc;
}

/* Traces under `arg`: itself, the trace directories below it (tenure-* folders of
 * TENURE_TRACE=<dir>, an unzipped perfcollect trace), or those of a perfcollect .trace.zip
 * unpacked into *tmp (the caller removes it). */
static int find_traces(const char *arg, strlist *out, char *tmp, size_t tmplen, char *err, size_t errlen) {
    struct stat st;
    tmp[0] = '\0';
    if (stat(arg, &st) != 0) {
        snprintf(err, errlen, "no such file or directory");
        return -1;
    }
    const char *dir = arg;
    if (S_ISREG(st.st_mode) && zip_is(arg)) {
        if (zip_extract(arg, tmp, tmplen, err, errlen) != 0)
            return -1;
        dir = tmp;
    } else if (nettrace_is(arg)) {
        snprintf(err, errlen,
                 "an EventPipe .nettrace file: tenure-report reads CTF traces only (TENURE_TRACE_FORMAT=ctf+nettrace "
                 "writes both; PerfView, dotnet-trace and TraceEvent read nettrace)");
        return -1;
    } else if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen,
                 "not a directory or a zip (give the trace directory, the one holding `metadata`, or a "
                 "perfcollect .trace.zip)");
        return -1;
    }
    if (has_metadata(dir))
        return push(out, dir);
    size_t kernel = 0;
    if (walk_traces(dir, 0, out, &kernel) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (out->n == 0) {
        snprintf(err, errlen, "no CTF trace here (no `metadata` file, no trace directories below it%s)",
                 kernel ? "; only LTTng kernel traces, which hold no runtime events" : "");
        return -1;
    }
    return 0;
}

/* The name a report gives a trace: a trace from a zip is named by the zip and its path inside. */
static void display_name(char *buf, size_t len, const char *arg, const char *tmp, const char *trace) {
    size_t tl = strlen(tmp);
    if (tl && strncmp(trace, tmp, tl) == 0)
        snprintf(buf, len, "%s:%s", arg, trace[tl] == '/' ? trace + tl + 1 : trace + tl);
    else
        snprintf(buf, len, "%s", trace);
}

/* Start ms counts from the trace's first event, whichever process wrote it (TraceEvent's
 * TimeStampRelativeMSec), not from each process's own first one. */
static void set_origin(tr_set *set) {
    int64_t origin = 0;
    int have_origin = 0;
    for (size_t i = 0; i < set->n; i++)
        if (set->m[i].have_time && (!have_origin || set->m[i].first_ns < origin)) {
            origin = set->m[i].first_ns;
            have_origin = 1;
        }
    for (size_t i = 0; i < set->n; i++) {
        set->m[i].origin_ns = origin;
        set->m[i].have_origin = have_origin;
    }
}

/* Read one trace directory: one model per process and runtime instance, each finished with
 * its own status (partial when its GCs are missing). */
static void load(const char *path, const char *name, tr_set *set, tr_result *res) {
    tr_result whole;
    read_trace(path, set, &whole);
    set_origin(set);
    for (size_t i = 0; i < set->n; i++) {
        tr_model *m = &set->m[i];
        tr_result *r = &res[i];
        *r = whole;
        model_finish(m);
        model_status(m, r);
        if (r->status == TR_FULL)
            continue;
        char who[64] = "";
        if (m->has_vpid)
            snprintf(who, sizeof who, " (vpid %lld, ClrInstanceID %u)", (long long)m->vpid, m->instance);
        fprintf(stderr, "tenure-report: %s%s: %s%s%s\n", name, who,
                r->status == TR_UNREADABLE ? "unreadable trace: " : "partial report: ", r->error,
                reader_verbose || !r->library ? "" : " (--verbose for details)");
    }
}

static int worse(int worst, tr_status st) {
    if (st == TR_UNREADABLE)
        return 2;
    if (st == TR_PARTIAL && worst == 0)
        return 3;
    return worst;
}

static FILE *open_out(const char *path, const char *what) {
    if (strcmp(path, "-") == 0)
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "tenure-report: %s: cannot write the %s file: %s\n", path, what, strerror(errno));
    return f;
}

/* 1 on a write error (said on stderr) */
static int close_out(FILE *f, const char *path) {
    if (!f)
        return 0;
    int bad = ferror(f) != 0;
    if (f == stdout)
        bad |= fflush(f) != 0;
    else
        bad |= fclose(f) != 0;
    if (bad)
        fprintf(stderr, "tenure-report: %s: write error\n", path);
    return bad;
}

static void unreadable(tr_result *r, const char *arg, const char *why) {
    r->status = TR_UNREADABLE;
    snprintf(r->error, sizeof r->error, "%s", why);
    fprintf(stderr, "tenure-report: %s: %s\n", arg, why);
}

/* One side of --compare: the model of the one process of the one trace at arg (*m keeps it);
 * 0, or -1 with why set */
static int compare_load(const char *arg, strlist *traces, char *tmp, size_t tmplen, tr_model *m, tr_result *r,
                        char *why, size_t whylen) {
    if (find_traces(arg, traces, tmp, tmplen, why, whylen) != 0)
        return -1;
    if (traces->n != 1) {
        snprintf(why, whylen, "holds %zu traces; --compare takes one trace directory on each side", traces->n);
        return -1;
    }
    tr_result *res = calloc(TR_MAX_PROCESSES, sizeof *res);
    if (!res) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    tr_set set = {0};
    load(traces->v[0], traces->v[0], &set, res);
    int ok = set.n == 1;
    if (ok) {
        *m = set.m[0];
        *r = res[0];
        model_init(&set.m[0]); /* its arrays are now *m's */
    } else {
        snprintf(why, whylen, "holds %zu processes; --compare takes a trace of one process on each side", set.n);
    }
    set_free(&set);
    free(res);
    return ok ? 0 : -1;
}

static void strlist_free(strlist *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* --compare A B: each side one trace of one process */
static int compare(int json, const char *a, const char *b) {
    const char *arg[2] = {a, b};
    strlist traces[2] = {{0}, {0}};
    tr_model mm[2];
    tr_result rr[2];
    char tmp[2][4096];
    int worst = 0;
    for (int s = 0; s < 2; s++) {
        model_init(&mm[s]);
        memset(&rr[s], 0, sizeof rr[s]);
        char why[600];
        if (compare_load(arg[s], &traces[s], tmp[s], sizeof tmp[s], &mm[s], &rr[s], why, sizeof why) != 0)
            unreadable(&rr[s], arg[s], why);
        worst = worse(worst, rr[s].status);
    }
    const char *paths[2] = {traces[0].n == 1 ? traces[0].v[0] : a, traces[1].n == 1 ? traces[1].v[0] : b};
    const tr_model *mp[2] = {&mm[0], &mm[1]};
    const tr_result *rp[2] = {&rr[0], &rr[1]};
    compare_print(stdout, json, paths, mp, rp);
    for (int s = 0; s < 2; s++) {
        model_free(&mm[s]);
        strlist_free(&traces[s]);
        zip_remove(tmp[s]);
    }
    return worst;
}

/* ---- the command line ---------------------------------------------------------------------- */

typedef struct options {
    int json, cmp, full;
    const char *chrome_path, *html_path, *out_dir;
    strlist args;
} options;

/* A number option's value (--timeout, --max-memory); -1 if it is not one */
static double number_arg(const char *opt, const char *value) {
    char *end = NULL;
    double v = value ? strtod(value, &end) : -1;
    if (!end || *end || end == value || !(v >= 0 && v <= 1e9) || (opt[2] == 'm' && v != (double)(unsigned long)v)) {
        fprintf(stderr, "tenure-report: %s needs a number of %s (0: no limit)\n", opt,
                opt[2] == 't' ? "seconds" : "MiB");
        return -1;
    }
    return v;
}

/* An option that takes a value: 1 and *i past it, 0 if argv[*i] is none of them, -1 on error */
static int value_option(options *o, int argc, char **argv, int *i) {
    static const char *const names[] = {"--chrome", "--html", "--out", "--timeout", "--max-memory"};
    size_t k = 0;
    while (k < sizeof names / sizeof names[0] && strcmp(argv[*i], names[k]) != 0)
        k++;
    if (k == sizeof names / sizeof names[0])
        return 0;
    const char *value = *i + 1 < argc ? argv[++*i] : NULL;
    if (k < 3 && !value) {
        fprintf(stderr, "tenure-report: %s needs a %s\n", names[k], k == 2 ? "directory" : "file name");
        return -1;
    }
    const char **paths[3] = {&o->chrome_path, &o->html_path, &o->out_dir};
    if (k < 3) {
        *paths[k] = value;
        return 1;
    }
    double v = number_arg(names[k], value);
    if (v < 0)
        return -1;
    if (k == 3)
        reader_timeout_s = v;
    else
        reader_max_memory_mb = (unsigned long)v;
    return 1;
}

/* A flag: 1 (and set), 0 if a is none */
static int flag_option(options *o, const char *a) {
    if (strcmp(a, "--json") == 0)
        o->json = 1;
    else if (strcmp(a, "--compare") == 0)
        o->cmp = 1;
    else if (strcmp(a, "--full") == 0)
        o->full = 1;
    else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0)
        reader_verbose = 1;
    else
        return 0;
    return 1;
}

static int out_of_memory(void) {
    fprintf(stderr, "tenure-report: out of memory\n");
    return 2;
}

/* -1: go on; else the exit status (--help: 0, bad usage: 2) */
static int parse_args(options *o, int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int v = value_option(o, argc, argv, &i);
        if (v != 0 || flag_option(o, a)) {
            if (v < 0)
                return 2;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--") == 0) {
            for (i++; i < argc; i++)
                if (push(&o->args, argv[i]) != 0)
                    return out_of_memory();
            break;
        }
        if (a[0] == '-' && a[1]) {
            fprintf(stderr, "tenure-report: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
        if (push(&o->args, a) != 0)
            return out_of_memory();
    }
    return -1;
}

/* An unknown option, or options that do not go together: the message, 2; else 0 */
static int check_usage(const options *o) {
    const char *bad = NULL;
    if (o->args.n == 0)
        bad = "no trace given";
    else if (o->cmp && o->args.n != 2)
        bad = "--compare takes two traces";
    else if (o->cmp && (o->chrome_path || o->html_path || o->out_dir || o->full))
        bad = "--compare writes no --chrome, --html or --out file and has no --full";
    else if (o->chrome_path && o->html_path && strcmp(o->chrome_path, "-") == 0 && strcmp(o->html_path, "-") == 0)
        bad = "only one of --chrome and --html can go to stdout";
    if (bad) {
        fprintf(stderr, "tenure-report: %s\n", bad);
        usage(stderr);
        return 2;
    }
    if (o->html_path && !html_available()) {
        fprintf(stderr, "tenure-report: --html is not in this build (it was built without the chart bundle: npm was "
                        "missing, or TENURE_REPORT_HTML=OFF)\n");
        return 2;
    }
    return 0;
}

/* ---- the reports -------------------------------------------------------------------------- */

/* Where the reports go: stdout (the screen, the full report or JSON; NULL when a file goes to
 * stdout), --chrome, --html, and --out's files (the full report, the HTML report). */
typedef struct outputs {
    FILE *report, *chrome, *html, *table;
    char table_path[4096], html_path[4096];
    int first_json, first_html, pid;
} outputs;

/* --out DIR: the directory (made if missing), its full report and, when built, its HTML report */
static int open_out_dir(const options *o, outputs *w) {
    if (mkdir(o->out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "tenure-report: %s: cannot make the directory: %s\n", o->out_dir, strerror(errno));
        return 2;
    }
    snprintf(w->table_path, sizeof w->table_path, "%s/gc-report.txt", o->out_dir);
    if (!(w->table = open_out(w->table_path, "report")))
        return 2;
    if (o->html_path || !html_available())
        return 0;
    snprintf(w->html_path, sizeof w->html_path, "%s/gc-report.html", o->out_dir);
    return (w->html = open_out(w->html_path, "HTML")) ? 0 : 2;
}

static int open_outputs(const options *o, outputs *w) {
    memset(w, 0, sizeof *w);
    w->first_json = w->first_html = 1;
    if (o->chrome_path && !(w->chrome = open_out(o->chrome_path, "Chrome trace")))
        return 2;
    if (o->html_path && !(w->html = open_out(o->html_path, "HTML")))
        return 2;
    if (o->html_path)
        snprintf(w->html_path, sizeof w->html_path, "%s", o->html_path);
    if (o->out_dir && open_out_dir(o, w) != 0)
        return 2;
    w->report = w->chrome == stdout || w->html == stdout ? NULL : stdout;
    if (o->json && w->report)
        fputs("{\"traces\": [", w->report);
    if (w->chrome)
        chrome_begin(w->chrome);
    if (w->html)
        html_begin(w->html);
    return 0;
}

/* The closing of every output; 2 on a write error */
static int close_outputs(const options *o, outputs *w) {
    int bad = 0;
    if (o->json && w->report)
        fputs("\n]}\n", w->report);
    if (w->chrome)
        chrome_end(w->chrome);
    if (w->html)
        html_end(w->html);
    bad |= close_out(w->chrome, o->chrome_path);
    bad |= close_out(w->html, w->html_path);
    bad |= close_out(w->table, w->table_path);
    return bad ? 2 : 0;
}

/* What --out wrote, at the end of the text report */
static void print_written(const options *o, const outputs *w) {
    if (!w->report || o->json || !w->table)
        return;
    fprintf(w->report, "Every GC (the --full report): %s\n", w->table_path);
    if (w->html_path[0])
        fprintf(w->report, "HTML report: %s\n", w->html_path);
    else
        fprintf(w->report, "No HTML report: this tenure-report was built without --html (no npm)\n");
}

/* One report (a process of a trace) to every output */
static void report_one(const options *o, outputs *w, const char *name, const tr_model *m, const tr_result *res) {
    if (w->report && o->json) {
        print_json_trace(w->report, name, m, res, w->first_json);
        w->first_json = 0;
    } else if (w->report && o->full)
        print_text(w->report, name, m, res);
    else if (w->report)
        print_screen(w->report, name, m, res);
    if (w->table)
        print_text(w->table, name, m, res);
    /* --chrome and --html show one name per report: the process's with the trace's */
    char label[8400];
    if (m && m->has_vpid)
        snprintf(label, sizeof label, "%s [vpid %lld %s, ClrInstanceID %u]", name, (long long)m->vpid, m->procname,
                 m->instance);
    else
        snprintf(label, sizeof label, "%s", name);
    if (w->chrome && m && res->status != TR_UNREADABLE)
        chrome_trace(w->chrome, label, m, ++w->pid);
    if (w->html) {
        html_trace(w->html, label, m, res, w->first_html);
        w->first_html = 0;
    }
}

/* Every trace found at one argument; returns the worst status */
static int report_arg(const options *o, outputs *w, const char *arg, tr_result *results) {
    strlist traces = {0};
    char tmp[4096], err[512];
    int worst = 0;
    if (find_traces(arg, &traces, tmp, sizeof tmp, err, sizeof err) != 0) {
        tr_result res = {.status = TR_UNREADABLE};
        unreadable(&res, arg, err);
        if (w->report && o->json) {
            print_json_trace(w->report, arg, NULL, &res, w->first_json);
            w->first_json = 0;
        }
        if (w->html) {
            html_trace(w->html, arg, NULL, &res, w->first_html);
            w->first_html = 0;
        }
        worst = 2;
    }
    for (size_t t = 0; t < traces.n; t++) {
        char name[8192];
        display_name(name, sizeof name, arg, tmp, traces.v[t]);
        tr_set set;
        load(traces.v[t], name, &set, results);
        for (size_t k = 0; k < set.n; k++) {
            report_one(o, w, name, &set.m[k], &results[k]);
            worst = worse(worst, results[k].status);
        }
        set_free(&set);
    }
    strlist_free(&traces);
    zip_remove(tmp);
    return worst;
}

static int report_all(const options *o) {
    outputs w;
    int worst = open_outputs(o, &w);
    tr_result *results = worst ? NULL : calloc(TR_MAX_PROCESSES, sizeof *results);
    if (!worst && !results)
        worst = out_of_memory();
    for (size_t a = 0; results && a < o->args.n; a++) {
        int st = report_arg(o, &w, o->args.v[a], results);
        worst = st == 2 || (st == 3 && worst == 0) ? st : worst;
    }
    free(results);
    print_written(o, &w);
    int closed = close_outputs(o, &w);
    return closed ? closed : worst;
}

int main(int argc, char **argv) {
    options o = {0};
    int status = parse_args(&o, argc, argv);
    if (status < 0)
        status = check_usage(&o);
    else if (status == 0) {
        strlist_free(&o.args);
        return 0;
    }
    char err[512];
    if (status == 0 && reader_init(err, sizeof err) != 0) {
        fprintf(stderr, "tenure-report: %s\n", err);
        status = 2;
    } else if (status == 0) {
        status = o.cmp ? compare(o.json, o.args.v[0], o.args.v[1]) : report_all(&o);
        reader_fini();
    }
    strlist_free(&o.args);
    if (fflush(stdout) != 0)
        return 2;
    return status;
}
