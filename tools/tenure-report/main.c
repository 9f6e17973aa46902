/*
 * tenure-report TRACE_DIR... [--json]
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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tenure-report [--json] [--verbose] TRACE_DIR...\n"
            "  Rebuild the GCs of tenure CTF traces (the .NET GC events) and print PerfView's GCStats:\n"
            "  a summary, a rollup by generation and one row per GC.\n"
            "  TRACE_DIR is a trace directory (with a `metadata` file) or a directory holding\n"
            "  tenure-*/ trace directories (TENURE_TRACE=<dir>), each reported.\n"
            "  --json     the summary, rollup and per-GC records as JSON on stdout\n"
            "  --verbose  babeltrace2's own diagnostics on stderr (where a damaged trace is damaged)\n"
            "exit status: 0 full report, 3 partial report, 2 unreadable input or bad usage\n");
}

static int has_metadata(const char *dir)
{
    char p[4096];
    struct stat st;
    if (snprintf(p, sizeof p, "%s/metadata", dir) >= (int)sizeof p) return 0;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

typedef struct strlist {
    char **v;
    size_t n, cap;
} strlist;

static int push(strlist *l, const char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    char *d = strdup(s);
    if (!d) return -1;
    l->v[l->n++] = d;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Traces under `arg`: itself, or its tenure-* subdirectories that hold a trace. */
static int find_traces(const char *arg, strlist *out, char *err, size_t errlen)
{
    struct stat st;
    if (stat(arg, &st) != 0) {
        snprintf(err, errlen, "no such file or directory");
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "not a directory (give the trace directory, the one holding `metadata`)");
        return -1;
    }
    if (has_metadata(arg)) return push(out, arg);
    DIR *d = opendir(arg);
    if (!d) {
        snprintf(err, errlen, "cannot open the directory");
        return -1;
    }
    strlist found = {0};
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "tenure-", 7) != 0) continue;
        char p[4096];
        if (snprintf(p, sizeof p, "%s/%s", arg, de->d_name) >= (int)sizeof p) continue;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode) && has_metadata(p)) push(&found, p);
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
        if (rc == 0 && push(out, found.v[i]) != 0) rc = -1;
        free(found.v[i]);
    }
    free(found.v);
    return rc;
}

int main(int argc, char **argv)
{
    int json = 0;
    strlist args = {0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
            reader_verbose = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            free(args.v);
            return 0;
        } else if (strcmp(argv[i], "--") == 0) {
            for (i++; i < argc; i++)
                if (push(&args, argv[i]) != 0) return 2;
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
    if (args.n == 0) {
        usage(stderr);
        free(args.v);
        return 2;
    }

    char err[512];
    if (reader_init(err, sizeof err) != 0) {
        fprintf(stderr, "tenure-report: %s\n", err);
        return 2;
    }

    int worst = 0; /* 0, 3 (partial) or 2 (unreadable) */
    int first_json = 1;
    if (json) fputs("{\"traces\": [", stdout);
    for (size_t a = 0; a < args.n; a++) {
        strlist traces = {0};
        if (find_traces(args.v[a], &traces, err, sizeof err) != 0) {
            fprintf(stderr, "tenure-report: %s: %s\n", args.v[a], err);
            if (json) {
                tr_result res = {.status = TR_UNREADABLE};
                snprintf(res.error, sizeof res.error, "%s", err);
                print_json_trace(stdout, args.v[a], NULL, &res, first_json);
                first_json = 0;
            }
            worst = 2;
        }
        for (size_t t = 0; t < traces.n; t++) {
            tr_model m;
            tr_result res;
            model_init(&m);
            read_trace(traces.v[t], &m, &res);
            model_finish(&m);
            if (res.status == TR_FULL && (m.incomplete || m.discarded_events || m.discarded_packets)) {
                res.status = TR_PARTIAL;
                if (m.incomplete)
                    snprintf(res.error, sizeof res.error, "%zu GC(s) did not complete in the trace", m.incomplete);
                else
                    snprintf(res.error, sizeof res.error, "events were discarded while tracing");
            }
            if (res.status != TR_FULL)
                fprintf(stderr, "tenure-report: %s: %s%s%s\n", traces.v[t],
                        res.status == TR_UNREADABLE ? "cannot read the trace: " : "partial report: ", res.error,
                        reader_verbose || m.incomplete || m.discarded_events ? "" : " (--verbose for details)");
            if (json) {
                print_json_trace(stdout, traces.v[t], &m, &res, first_json);
                first_json = 0;
            } else {
                print_text(stdout, traces.v[t], &m, &res);
            }
            if (res.status == TR_UNREADABLE)
                worst = 2;
            else if (res.status == TR_PARTIAL && worst == 0)
                worst = 3;
            model_free(&m);
            free(traces.v[t]);
        }
        free(traces.v);
    }
    if (json) fputs("\n]}\n", stdout);
    for (size_t a = 0; a < args.n; a++) free(args.v[a]);
    free(args.v);
    reader_fini();
    if (fflush(stdout) != 0) return 2;
    return worst;
}
