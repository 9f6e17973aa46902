/*
 * tenure-report [--json] [--timeout S] [--max-memory M] [--chrome FILE] [--html FILE] TRACE_DIR...
 * tenure-report --compare [--json] TRACE_A TRACE_B
 *
 * Each argument is a CTF trace directory (it holds `metadata`) or a directory holding
 * tenure-<pid>-<instance> trace directories (what TENURE_TRACE=<dir> writes): each is reported.
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
            "                     TRACE_DIR...\n"
            "       tenure-report --compare [--json] [--verbose] TRACE_A TRACE_B\n"
            "  Rebuild the GCs of tenure CTF traces (the .NET GC events) and print PerfView's GCStats:\n"
            "  a summary, a rollup by generation and one row per GC.\n"
            "  TRACE_DIR is a trace directory (with a `metadata` file) or a directory holding\n"
            "  tenure-*/ trace directories (TENURE_TRACE=<dir>), each reported.\n"
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

/* Traces under `arg`: itself, or its tenure-* subdirectories that hold a trace. */
static int find_traces(const char *arg, strlist *out, char *err, size_t errlen) {
    struct stat st;
    if (stat(arg, &st) != 0) {
        snprintf(err, errlen, "no such file or directory");
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "not a directory (give the trace directory, the one holding `metadata`)");
        return -1;
    }
    if (has_metadata(arg))
        return push(out, arg);
    DIR *d = opendir(arg);
    if (!d) {
        snprintf(err, errlen, "cannot open the directory");
        return -1;
    }
    strlist found = {0};
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "tenure-", 7) != 0)
            continue;
        char p[4096];
        if (snprintf(p, sizeof p, "%s/%s", arg, de->d_name) >= (int)sizeof p)
            continue;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode) && has_metadata(p))
            push(&found, p);
    }
    closedir(d);
    if (found.n == 0) {
        free(found.v);
        snprintf(err, errlen, "no CTF trace here (no `metadata` file, no tenure-*/ trace directories)");
        return -1;
    }
    qsort(found.v, found.n, sizeof *found.v, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < found.n; i++) {
        if (rc == 0 && push(out, found.v[i]) != 0)
            rc = -1;
        free(found.v[i]);
    }
    free(found.v);
    return rc;
}

/* Read one trace into `m` (model_init'ed), status in `res`; partial when GCs are missing. */
static void load(const char *path, tr_model *m, tr_result *res) {
    read_trace(path, m, res);
    model_finish(m);
    model_status(m, res);
    if (res->status != TR_FULL)
        fprintf(stderr, "tenure-report: %s: %s%s%s\n", path,
                res->status == TR_UNREADABLE ? "unreadable trace: " : "partial report: ", res->error,
                reader_verbose || !res->library ? "" : " (--verbose for details)");
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

/* --compare A B */
static int compare(int json, const char *a, const char *b) {
    const char *arg[2] = {a, b};
    strlist traces[2] = {{0}, {0}};
    tr_model mm[2];
    tr_result rr[2];
    int worst = 0;
    char err[512];
    for (int s = 0; s < 2; s++) {
        model_init(&mm[s]);
        memset(&rr[s], 0, sizeof rr[s]);
        if (find_traces(arg[s], &traces[s], err, sizeof err) != 0) {
            rr[s].status = TR_UNREADABLE;
            snprintf(rr[s].error, sizeof rr[s].error, "%s", err);
            fprintf(stderr, "tenure-report: %s: %s\n", arg[s], err);
        } else if (traces[s].n != 1) {
            rr[s].status = TR_UNREADABLE;
            snprintf(rr[s].error, sizeof rr[s].error,
                     "holds %zu traces; --compare takes one trace directory on each side", traces[s].n);
            fprintf(stderr, "tenure-report: %s: %s\n", arg[s], rr[s].error);
        } else {
            load(traces[s].v[0], &mm[s], &rr[s]);
        }
        worst = worse(worst, rr[s].status);
    }
    const char *paths[2] = {traces[0].n == 1 ? traces[0].v[0] : a, traces[1].n == 1 ? traces[1].v[0] : b};
    const tr_model *mp[2] = {&mm[0], &mm[1]};
    const tr_result *rp[2] = {&rr[0], &rr[1]};
    compare_print(stdout, json, paths, mp, rp);
    for (int s = 0; s < 2; s++) {
        model_free(&mm[s]);
        for (size_t i = 0; i < traces[s].n; i++)
            free(traces[s].v[i]);
        free(traces[s].v);
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
    for (size_t a = 0; a < args.n; a++) {
        strlist traces = {0};
        if (find_traces(args.v[a], &traces, err, sizeof err) != 0) {
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
            tr_model m;
            tr_result res;
            model_init(&m);
            load(traces.v[t], &m, &res);
            if (report && json) {
                print_json_trace(report, traces.v[t], &m, &res, first_json);
                first_json = 0;
            } else if (report) {
                print_text(report, traces.v[t], &m, &res);
            }
            if (chrome && res.status != TR_UNREADABLE)
                chrome_trace(chrome, traces.v[t], &m, ++pid);
            if (html) {
                html_trace(html, traces.v[t], &m, &res, first_html);
                first_html = 0;
            }
            worst = worse(worst, res.status);
            model_free(&m);
            free(traces.v[t]);
        }
        free(traces.v);
    }
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
