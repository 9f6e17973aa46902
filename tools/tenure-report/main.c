/*
 * tenure-report [--json] [--timeout S] [--max-memory M] [--chrome FILE] [--html FILE] TRACE_DIR...
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
            "usage: tenure-report [--json] [--verbose] [--timeout S] [--max-memory M] [--chrome FILE] [--html FILE]\n"
            "                     TRACE...\n"
            "       tenure-report --compare [--json] [--verbose] TRACE_A TRACE_B\n"
            "  Rebuild the GCs of tenure CTF traces (the .NET GC events) and print PerfView's GCStats:\n"
            "  a summary, a rollup by generation and one row per GC.\n"
            "  TRACE is a trace directory (with a `metadata` file), a directory holding trace\n"
            "  directories (tenure-*/ of TENURE_TRACE=<dir>, an unzipped perfcollect trace), or a\n"
            "  perfcollect .trace.zip; one report per trace, process (vpid) and ClrInstanceID.\n"
            "  --json         the summary, rollup and per-GC records as JSON on stdout\n"
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

/* Read one trace directory: one model per process and runtime instance, each finished with
 * its own status (partial when its GCs are missing). */
static void load(const char *path, const char *name, tr_set *set, tr_result *res) {
    tr_result whole;
    read_trace(path, set, &whole);
    /* Start ms counts from the trace's first event, whichever process wrote it (TraceEvent's
     * TimeStampRelativeMSec), not from each process's own first one */
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
    for (size_t i = 0; i < set->n; i++) {
        tr_model *m = &set->m[i];
        tr_result *r = &res[i];
        *r = whole;
        model_finish(m);
        model_status(m, r);
        if (r->status != TR_FULL) {
            char who[64] = "";
            if (m->has_vpid)
                snprintf(who, sizeof who, " (vpid %lld, ClrInstanceID %u)", (long long)m->vpid, m->instance);
            fprintf(stderr, "tenure-report: %s%s: %s%s%s\n", name, who,
                    r->status == TR_UNREADABLE ? "unreadable trace: " : "partial report: ", r->error,
                    reader_verbose || !r->library ? "" : " (--verbose for details)");
        }
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

static int close_out(FILE *f, const char *path) {
    int bad = ferror(f) != 0;
    if (f == stdout)
        bad |= fflush(f) != 0;
    else
        bad |= fclose(f) != 0;
    if (bad)
        fprintf(stderr, "tenure-report: %s: write error\n", path);
    return bad;
}

/* --compare A B: each side one trace of one process */
static int compare(int json, const char *a, const char *b) {
    const char *arg[2] = {a, b};
    strlist traces[2] = {{0}, {0}};
    tr_set sets[2] = {{0}, {0}};
    tr_model mm[2];
    tr_result rr[2];
    char tmp[2][4096];
    int worst = 0;
    char err[512];
    for (int s = 0; s < 2; s++) {
        model_init(&mm[s]);
        memset(&rr[s], 0, sizeof rr[s]);
        if (find_traces(arg[s], &traces[s], tmp[s], sizeof tmp[s], err, sizeof err) != 0) {
            rr[s].status = TR_UNREADABLE;
            snprintf(rr[s].error, sizeof rr[s].error, "%s", err);
            fprintf(stderr, "tenure-report: %s: %s\n", arg[s], err);
        } else if (traces[s].n != 1) {
            rr[s].status = TR_UNREADABLE;
            snprintf(rr[s].error, sizeof rr[s].error,
                     "holds %zu traces; --compare takes one trace directory on each side", traces[s].n);
            fprintf(stderr, "tenure-report: %s: %s\n", arg[s], rr[s].error);
        } else {
            tr_result *res = calloc(TR_MAX_PROCESSES, sizeof *res);
            if (!res) {
                rr[s].status = TR_UNREADABLE;
                snprintf(rr[s].error, sizeof rr[s].error, "out of memory");
            } else {
                load(traces[s].v[0], traces[s].v[0], &sets[s], res);
                if (sets[s].n == 1) {
                    mm[s] = sets[s].m[0];
                    rr[s] = res[0];
                    sets[s].m[0].gcs = NULL; /* now mm[s]'s */
                    sets[s].m[0].details = NULL;
                } else {
                    rr[s].status = TR_UNREADABLE;
                    snprintf(rr[s].error, sizeof rr[s].error,
                             "holds %zu processes; --compare takes a trace of one process on each side", sets[s].n);
                    fprintf(stderr, "tenure-report: %s: %s\n", arg[s], rr[s].error);
                }
                free(res);
            }
        }
        worst = worse(worst, rr[s].status);
    }
    const char *paths[2] = {traces[0].n == 1 ? traces[0].v[0] : a, traces[1].n == 1 ? traces[1].v[0] : b};
    const tr_model *mp[2] = {&mm[0], &mm[1]};
    const tr_result *rp[2] = {&rr[0], &rr[1]};
    compare_print(stdout, json, paths, mp, rp);
    for (int s = 0; s < 2; s++) {
        model_free(&mm[s]);
        set_free(&sets[s]);
        for (size_t i = 0; i < traces[s].n; i++)
            free(traces[s].v[i]);
        free(traces[s].v);
        zip_remove(tmp[s]);
    }
    return worst;
}

int main(int argc, char **argv) {
    int json = 0, cmp = 0;
    const char *chrome_path = NULL, *html_path = NULL;
    strlist args = {0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--compare") == 0) {
            cmp = 1;
        } else if (strcmp(argv[i], "--chrome") == 0 || strcmp(argv[i], "--html") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "tenure-report: %s needs a file name\n", argv[i]);
                return 2;
            }
            if (argv[i][2] == 'c')
                chrome_path = argv[++i];
            else
                html_path = argv[++i];
        } else if (strcmp(argv[i], "--timeout") == 0 || strcmp(argv[i], "--max-memory") == 0) {
            char *end = NULL;
            double v = i + 1 < argc ? strtod(argv[i + 1], &end) : -1;
            if (!end || *end || end == argv[i + 1] || !(v >= 0 && v <= 1e9) ||
                (argv[i][2] == 'm' && v != (double)(unsigned long)v)) {
                fprintf(stderr, "tenure-report: %s needs a number of %s (0: no limit)\n", argv[i],
                        argv[i][2] == 't' ? "seconds" : "MiB");
                return 2;
            }
            if (argv[i++][2] == 't')
                reader_timeout_s = v;
            else
                reader_max_memory_mb = (unsigned long)v;
        } else if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
            reader_verbose = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            for (size_t a = 0; a < args.n; a++)
                free(args.v[a]);
            free(args.v);
            return 0;
        } else if (strcmp(argv[i], "--") == 0) {
            for (i++; i < argc; i++)
                if (push(&args, argv[i]) != 0)
                    return 2;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "tenure-report: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            if (push(&args, argv[i]) != 0) {
                fprintf(stderr, "tenure-report: out of memory\n");
                return 2;
            }
        }
    }
    const char *bad = NULL;
    if (args.n == 0)
        bad = "no trace given";
    else if (cmp && args.n != 2)
        bad = "--compare takes two traces";
    else if (cmp && (chrome_path || html_path))
        bad = "--compare writes no --chrome or --html file";
    else if (chrome_path && html_path && strcmp(chrome_path, "-") == 0 && strcmp(html_path, "-") == 0)
        bad = "only one of --chrome and --html can go to stdout";
    if (bad) {
        fprintf(stderr, "tenure-report: %s\n", bad);
        usage(stderr);
        for (size_t a = 0; a < args.n; a++)
            free(args.v[a]);
        free(args.v);
        return 2;
    }
    if (html_path && !html_available()) {
        fprintf(stderr, "tenure-report: --html is not in this build (it was built without the chart bundle: npm was "
                        "missing, or TENURE_REPORT_HTML=OFF)\n");
        for (size_t a = 0; a < args.n; a++)
            free(args.v[a]);
        free(args.v);
        return 2;
    }

    char err[512];
    if (reader_init(err, sizeof err) != 0) {
        fprintf(stderr, "tenure-report: %s\n", err);
        return 2;
    }

    int worst = 0; /* 0, 3 (partial) or 2 (unreadable) */
    if (cmp) {
        worst = compare(json, args.v[0], args.v[1]);
        goto done;
    }

    FILE *chrome = NULL, *html = NULL;
    if (chrome_path && !(chrome = open_out(chrome_path, "Chrome trace"))) {
        worst = 2;
        goto done;
    }
    if (html_path && !(html = open_out(html_path, "HTML"))) {
        if (chrome && chrome != stdout)
            fclose(chrome);
        worst = 2;
        goto done;
    }
    /* the stdout report, unless a file goes to stdout */
    FILE *report = chrome == stdout || html == stdout ? NULL : stdout;

    int first_json = 1, first_html = 1, pid = 0;
    if (json && report)
        fputs("{\"traces\": [", report);
    if (chrome)
        chrome_begin(chrome);
    if (html)
        html_begin(html);
    tr_result *results = calloc(TR_MAX_PROCESSES, sizeof *results);
    if (!results) {
        fprintf(stderr, "tenure-report: out of memory\n");
        worst = 2;
        args.n = 0;
    }
    for (size_t a = 0; a < args.n; a++) {
        strlist traces = {0};
        char tmp[4096];
        if (find_traces(args.v[a], &traces, tmp, sizeof tmp, err, sizeof err) != 0) {
            fprintf(stderr, "tenure-report: %s: %s\n", args.v[a], err);
            tr_result res = {.status = TR_UNREADABLE};
            snprintf(res.error, sizeof res.error, "%s", err);
            if (json && report) {
                print_json_trace(report, args.v[a], NULL, &res, first_json);
                first_json = 0;
            }
            if (html) {
                html_trace(html, args.v[a], NULL, &res, first_html);
                first_html = 0;
            }
            worst = 2;
        }
        for (size_t t = 0; t < traces.n; t++) {
            char name[8192];
            display_name(name, sizeof name, args.v[a], tmp, traces.v[t]);
            tr_set set;
            load(traces.v[t], name, &set, results);
            for (size_t k = 0; k < set.n; k++) {
                tr_model *m = &set.m[k];
                tr_result *res = &results[k];
                if (report && json) {
                    print_json_trace(report, name, m, res, first_json);
                    first_json = 0;
                } else if (report) {
                    print_text(report, name, m, res);
                }
                /* --chrome and --html show one name per report: the process's with the trace's */
                char label[8400];
                if (m->has_vpid)
                    snprintf(label, sizeof label, "%s [vpid %lld %s, ClrInstanceID %u]", name, (long long)m->vpid,
                             m->procname, m->instance);
                else
                    snprintf(label, sizeof label, "%s", name);
                if (chrome && res->status != TR_UNREADABLE)
                    chrome_trace(chrome, label, m, ++pid);
                if (html) {
                    html_trace(html, label, m, res, first_html);
                    first_html = 0;
                }
                worst = worse(worst, res->status);
            }
            set_free(&set);
            free(traces.v[t]);
        }
        free(traces.v);
        zip_remove(tmp);
    }
    free(results);
    if (json && report)
        fputs("\n]}\n", report);
    if (chrome) {
        chrome_end(chrome);
        if (close_out(chrome, chrome_path))
            worst = 2;
    }
    if (html) {
        html_end(html);
        if (close_out(html, html_path))
            worst = 2;
    }

done:
    for (size_t a = 0; a < args.n; a++)
        free(args.v[a]);
    free(args.v);
    reader_fini();
    if (fflush(stdout) != 0)
        return 2;
    return worst;
}
