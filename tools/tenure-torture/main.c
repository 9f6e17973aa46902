/*
 * tenure-torture: the command line
 * Options, the programs run (in parallel with --jobs), the summary.
 */
#include "torture.h"
#include <errno.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t parse_size(const char *s) {
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k':
    case 'K': v *= 1024; break;
    case 'm':
    case 'M': v *= 1024 * 1024; break;
    case 'g':
    case 'G': v *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return (uint64_t)v;
}

static void usage(FILE *f) {
    fprintf(f, "usage: tenure-torture [options]\n"
               "  --seed N          the first program's seed (default: from the clock; always printed)\n"
               "  --ops N           operations per program (default 300)\n"
               "  --programs N      run N programs with consecutive seeds (default 1; TENURE_TORTURE_SCALE=0.1:\n"
               "                    a tenth of them, at least 30)\n"
               "  --minutes M       soak: run programs until M minutes have passed\n"
               "  --verify-every N  a full check every N allocations (default 200; 0: only after induced GCs)\n"
               "  --hard-limit B    GCHeapHardLimit (k/m/g suffixes): allocations may fail with NOMEM\n"
               "  --drop LIST       skip these op kinds (comma separated):");
    for (int k = 0; k < OP_COUNT; k++)
        fprintf(f, " %s", op_names[k]);
    fprintf(f, "\n"
               "  --reduce          on failure, find a short reproduction and print its command line\n"
               "  --jobs N          run N programs at a time (default 1)\n"
               "  --timeout S       seconds one program may take (default 120)\n"
               "  --no-fork         run in this process (for a debugger; stops at the first failure)\n"
               "  --verbose         a line per program\n"
               "  --trace           print every op and GC (with --seed, to study one program)\n"
               "  --paranoid        a full check after every op (slow; finds the op that broke the heap)\n"
               "  --inject N        self-test of the checks: 1 stores without the write barrier, 2 weak long\n"
               "                    handles are made strong, 3 weak short handles to finalizable objects are\n"
               "                    made weak long (the model does not know): each must fail\n"
               "  --bgc             background GC (gcConcurrent=1): the model learns each final pause\n"
               "                    (a gen0 GC after a full mark) from the stats and lets what the roots do\n"
               "                    not reach stay as floating garbage until the next blocking gen2 GC;\n"
               "                    finalization ops are dropped (their exact queue order cannot be\n"
               "                    predicted beside floating garbage)\n"
               "The environment's TENURE_* options apply (e.g. TENURE_HeapVerify=1 TENURE_GCStress=97).\n");
}

/* what the command line asks for */
typedef struct cli {
    params P; /* the first program's; program i has seed P.seed + i */
    long programs;
    double minutes; /* > 0: a soak of this long instead of a number of programs */
    int do_reduce, jobs, have_seed;
    driver drv;
} cli;

enum { PARSE_OK = -1 }; /* or the exit status */

/* --drop: op kind names into a mask */
static int parse_drop(const char *list, uint32_t *mask) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int k;
        for (k = 0; k < OP_COUNT && strcmp(tok, op_names[k]); k++) {
        }
        if (k == OP_COUNT) {
            fprintf(stderr, "tenure-torture: unknown op kind '%s'\n", tok);
            return 2;
        }
        *mask |= 1u << k;
    }
    return PARSE_OK;
}

/* an option that takes a value: 0 if a is none of them */
static int parse_valued(cli *c, const char *a, const char *v) {
    if (!strcmp(a, "--seed")) {
        c->P.seed = strtoull(v, NULL, 0);
        c->have_seed = 1;
    } else if (!strcmp(a, "--ops")) {
        c->P.ops = strtol(v, NULL, 0);
    } else if (!strcmp(a, "--programs")) {
        c->programs = strtol(v, NULL, 0);
    } else if (!strcmp(a, "--minutes")) {
        c->minutes = strtod(v, NULL);
    } else if (!strcmp(a, "--verify-every")) {
        c->P.verify_every = strtol(v, NULL, 0);
    } else if (!strcmp(a, "--hard-limit")) {
        c->P.hard_limit = parse_size(v);
    } else if (!strcmp(a, "--drop")) {
        return parse_drop(v, &c->P.drop_mask);
    } else if (!strcmp(a, "--jobs")) {
        c->jobs = (int)strtol(v, NULL, 0);
        if (c->jobs < 1)
            c->jobs = 1;
        if (c->jobs > 64)
            c->jobs = 64;
    } else if (!strcmp(a, "--timeout")) {
        c->drv.timeout = (int)strtol(v, NULL, 0);
    } else if (!strcmp(a, "--inject")) {
        c->P.inject = (int)strtol(v, NULL, 0);
    } else {
        return 0;
    }
    return PARSE_OK;
}

/* a flag: 0 if a is none of them */
static int parse_flag(cli *c, const char *a) {
    if (!strcmp(a, "--reduce"))
        c->do_reduce = 1;
    else if (!strcmp(a, "--no-fork"))
        c->drv.nofork = 1;
    else if (!strcmp(a, "--paranoid"))
        c->P.paranoid = 1;
    else if (!strcmp(a, "--trace"))
        c->P.trace = 1;
    else if (!strcmp(a, "--verbose"))
        c->P.verbose = 1;
    else if (!strcmp(a, "--bgc"))
        c->P.bgc = 1;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
        usage(stdout);
        return 0;
    } else
        return 2;
    return PARSE_OK;
}

static int is_valued(const char *a) {
    static const char *const valued[] = {"--seed",       "--ops",  "--programs", "--minutes", "--verify-every",
                                         "--hard-limit", "--drop", "--jobs",     "--timeout", "--inject"};
    for (size_t k = 0; k < sizeof valued / sizeof *valued; k++)
        if (!strcmp(a, valued[k]))
            return 1;
    return 0;
}

static int parse_args(cli *c, int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int st;
        if (is_valued(a)) {
            if (i + 1 >= argc) {
                fprintf(stderr, "tenure-torture: %s needs a value\n", a);
                return 2;
            }
            st = parse_valued(c, a, argv[++i]);
        } else {
            st = parse_flag(c, a);
            if (st == 2) {
                fprintf(stderr, "tenure-torture: unknown option %s\n", a);
                usage(stderr);
            }
        }
        if (st != PARSE_OK)
            return st;
    }
    return PARSE_OK;
}

/* the seed: --seed, TENURE_TEST_SEED, or the clock */
static void choose_seed(cli *c) {
    const char *env_seed = getenv("TENURE_TEST_SEED");
    if (!c->have_seed && env_seed && env_seed[0]) {
        c->P.seed = strtoull(env_seed, NULL, 0);
        c->have_seed = 1;
    }
    if (!c->have_seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        c->P.seed = mix64((uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32)) &
                    0xffffffffffull;
    }
}

static void print_banner(const cli *c) {
    const params *P = &c->P;
    char cmd[512];
    command_line(P, cmd, sizeof cmd);
    if (c->minutes > 0)
        printf("tenure-torture: seed %" PRIu64
               ", %ld ops per program, for %.1f minutes (replay program i: seed %" PRIu64 "+i)\n",
               P->seed, P->ops, c->minutes, P->seed);
    else
        printf("tenure-torture: seed %" PRIu64 ", %ld program%s of %ld ops (replay: %s)\n", P->seed, c->programs,
               c->programs == 1 ? "" : "s", P->ops, cmd);
}

#define MAX_REPORTED 5
/* the programs so far, and the first failures (to reduce) */
typedef struct tally {
    long started, finished, failures;
    uint64_t total_gcs, total_nomem;
    params failed_params[MAX_REPORTED];
    outcome failed_out[MAX_REPORTED];
    int nfailed_kept;
} tally;

/* a program running in a child process */
typedef struct slot {
    pid_t pid;
    params p;
    shres *sh;
} slot;

static int more_to_start(const cli *c, const tally *t, double deadline) {
    return c->minutes > 0 ? now_s() < deadline : t->started < c->programs;
}

static void count_outcome(const cli *c, tally *t, const params *p, const outcome *o) {
    t->finished++;
    t->total_gcs += o->gcs;
    t->total_nomem += o->nomem;
    if (o->failed) {
        t->failures++;
        char cmd[512];
        command_line(p, cmd, sizeof cmd);
        printf("FAIL seed %" PRIu64 " at op %ld%s: %s\n  replay: %s\n", p->seed, o->op,
               o->op >= p->ops ? " (the final phase)" : "", o->msg, cmd);
        if (t->nfailed_kept < MAX_REPORTED) {
            t->failed_params[t->nfailed_kept] = *p;
            t->failed_out[t->nfailed_kept++] = *o;
        }
    }
    if (c->P.verbose && !o->failed)
        printf("seed %" PRIu64 ": ok, %" PRIu64 " GCs\n", p->seed, o->gcs);
}

/* start programs while fewer than --jobs run (--no-fork: run them here, one by one) */
static void start_programs(cli *c, tally *t, slot *slots, int *running, double deadline) {
    int more = more_to_start(c, t, deadline);
    while (more && *running < c->jobs) {
        int k;
        for (k = 0; k < c->jobs && slots[k].pid; k++) {
        }
        slots[k].p = c->P;
        slots[k].p.seed = c->P.seed + (uint64_t)t->started;
        t->started++;
        if (c->drv.nofork) {
            outcome o;
            run_one(&c->drv, &slots[k].p, 0, &o);
            t->finished++;
            t->total_gcs += o.gcs;
            t->total_nomem += o.nomem;
            more = more_to_start(c, t, deadline);
            continue;
        }
        if (!slots[k].sh)
            slots[k].sh = shres_new();
        slots[k].pid = spawn(&c->drv, &slots[k].p, slots[k].sh, 0);
        (*running)++;
        more = more_to_start(c, t, deadline);
    }
}

static void run_programs(cli *c, tally *t, double deadline) {
    slot *slots = xcalloc((size_t)c->jobs, sizeof *slots);
    int running = 0;
    for (;;) {
        start_programs(c, t, slots, &running, deadline);
        if (running == 0)
            break;
        int status;
        pid_t pid = wait(&status);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        int k;
        for (k = 0; k < c->jobs && slots[k].pid != pid; k++) {
        }
        if (k == c->jobs)
            continue;
        running--;
        slots[k].pid = 0;
        outcome o;
        collect_outcome(status, &slots[k].p, slots[k].sh, &o);
        count_outcome(c, t, &slots[k].p, &o);
    }
    free(slots);
}

/* TENURE_TORTURE_SCALE (0 < s <= 1): --programs scaled down, to no fewer than 30 (or the number
 * asked, if fewer): make test's release run has half of the programs, its slower builds
 * (debug, sanitizers) and its other GC modes a tenth (issue 39; Makefile FEWER). */
static void scale_programs(cli *c) {
    const char *s = getenv("TENURE_TORTURE_SCALE");
    double f = s ? strtod(s, NULL) : 1;
    if (!(f > 0 && f < 1) || c->programs <= 30)
        return;
    long n = (long)(c->programs * f);
    c->programs = n < 30 ? 30 : n;
}

int main(int argc, char **argv) {
    cli c;
    memset(&c, 0, sizeof c);
    c.P.ops = 300;
    c.P.verify_every = 200;
    c.drv.timeout = 120;
    c.programs = 1;
    c.jobs = 1;
    int st = parse_args(&c, argc, argv);
    if (st != PARSE_OK)
        return st;
    choose_seed(&c);
    scale_programs(&c);
    if (c.P.ops < 0)
        c.P.ops = 0;
    if (c.drv.nofork)
        c.jobs = 1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    print_banner(&c);
    double t0 = now_s(), deadline = c.minutes > 0 ? t0 + c.minutes * 60 : 0;
    tally t;
    memset(&t, 0, sizeof t);
    run_programs(&c, &t, deadline);
    if (c.do_reduce && !c.drv.nofork)
        for (int i = 0; i < t.nfailed_kept; i++)
            reduce(&c.drv, &t.failed_params[i], &t.failed_out[i]);
    printf("%ld programs, %" PRIu64 " GCs, %ld failures", t.finished, t.total_gcs, t.failures);
    if (c.P.hard_limit)
        printf(", %" PRIu64 " allocations refused with NOMEM", t.total_nomem);
    printf(" (%.1f s)\n", now_s() - t0);
    return t.failures ? 1 : 0;
}
