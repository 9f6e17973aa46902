/*
 * tenure-torture: failure reporting
 * The first difference goes to the parent (shres), the first 25 to stderr; die ends the
 * program with its seed, op and configuration. The error hook counts the errors an op expects.
 */
#include "torture.h"
#include <stdarg.h>
#include <unistd.h>

static void print_config(program_state *s, FILE *f) {
    const tenure_config *c = &s->cfg;
    fprintf(f,
            "  config: GCRegionSize=%" PRIu64 " GCgen0size=%" PRIu64 " GCgen1size=%" PRIu64 " GCgen0MaxBudget=%" PRIu64
            " GCCompactMode=%u GCLOHCompact=%u GCMarkStackSize=%" PRIu64 " GCRetainRegions=%u GCHeapHardLimit=%" PRIu64
            " HeapVerify=%u GCStress=%u\n",
            c->GCRegionSize, c->GCgen0size, c->GCgen1size, c->GCgen0MaxBudget, c->GCCompactMode, c->GCLOHCompact,
            c->GCMarkStackSize, c->GCRetainRegions, c->GCHeapHardLimit, c->HeapVerify, c->GCStress);
}

void diff(program_state *s, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (s->diffs == 0 && s->sh) {
        snprintf(s->sh->msg, sizeof s->sh->msg, "%s", buf);
        s->sh->failed = 1;
    }
    if (s->diffs < 25)
        fprintf(stderr, "seed %" PRIu64 " op %ld: %s\n", s->P->seed, s->op, buf);
    else if (s->diffs == 25)
        fprintf(stderr, "seed %" PRIu64 " op %ld: (more differences not shown)\n", s->P->seed, s->op);
    s->diffs++;
}

void die(program_state *s, const char *where) {
    fprintf(stderr, "seed %" PRIu64 " op %ld: FAILED %s (%d differences, %" PRIu64 " GCs)\n", s->P->seed, s->op, where,
            s->diffs, s->gcs);
    print_config(s, stderr);
    fflush(stderr);
    if (s->sh) {
        s->sh->gcs = s->gcs;
        s->sh->failed = 1;
    }
    if (s->in_fork)
        _exit(1);
    exit(1);
}

void check_end(program_state *s, const char *where) {
    if (s->diffs)
        die(s, where);
}

/* the calls that follow may report err (and only err) to the error hook, which counts it in
 * s->got_err; expect_done ends that */
void expect_error(program_state *s, tenure_result err) {
    s->expect_err = err;
    s->got_err = 0;
}

void expect_done(program_state *s) { s->expect_err = TENURE_OK; }

void hook(tenure_runtime *rt, tenure_result r, const char *fn, const char *msg, void *ctx) {
    (void)rt;
    program_state *s = ctx;
    if (s->expect_err != TENURE_OK && r == s->expect_err) {
        s->got_err++;
        return;
    }
    diff(s, "unexpected error %d (%s) from %s: %s", (int)r, tenure_strerror(r), fn ? fn : "?", msg ? msg : "?");
}

void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz);
    if (!p) {
        fprintf(stderr, "tenure-torture: out of memory (model)\n");
        exit(2);
    }
    return p;
}

void *xrealloc(void *p, size_t sz) {
    p = realloc(p, sz ? sz : 1);
    if (!p) {
        fprintf(stderr, "tenure-torture: out of memory (model)\n");
        exit(2);
    }
    return p;
}
