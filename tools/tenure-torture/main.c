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
    case 'k': case 'K': v *= 1024; break;
    case 'm': case 'M': v *= 1024 * 1024; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return (uint64_t)v;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: tenure-torture [options]\n"
            "  --seed N          the first program's seed (default: from the clock; always printed)\n"
            "  --ops N           operations per program (default 300)\n"
            "  --programs N      run N programs with consecutive seeds (default 1)\n"
            "  --minutes M       soak: run programs until M minutes have passed\n"
            "  --verify-every N  a full check every N allocations (default 200; 0: only after induced GCs)\n"
            "  --hard-limit B    GCHeapHardLimit (k/m/g suffixes): allocations may fail with NOMEM\n"
            "  --drop LIST       skip these op kinds (comma separated):");
    for (int k = 0; k < OP_COUNT; k++) fprintf(f, " %s", op_names[k]);
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
               "The environment's TENURE_* options apply (e.g. TENURE_HeapVerify=1 TENURE_GCStress=97).\n");
}

int main(int argc, char **argv) {
    params P;
    memset(&P, 0, sizeof P);
    P.ops = 300;
    P.verify_every = 200;
    driver drv = {.timeout = 120};
    long programs = 1;
    double minutes = 0;
    int do_reduce = 0, jobs = 1, have_seed = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV()                                                                                \
    do {                                                                                       \
        if (!v) {                                                                              \
            fprintf(stderr, "tenure-torture: %s needs a value\n", a);                          \
            return 2;                                                                          \
        }                                                                                      \
        i++;                                                                                   \
    } while (0)
        if (!strcmp(a, "--seed")) {
            NEEDV();
            P.seed = strtoull(v, NULL, 0);
            have_seed = 1;
        } else if (!strcmp(a, "--ops")) {
            NEEDV();
            P.ops = strtol(v, NULL, 0);
        } else if (!strcmp(a, "--programs")) {
            NEEDV();
            programs = strtol(v, NULL, 0);
        } else if (!strcmp(a, "--minutes")) {
            NEEDV();
            minutes = strtod(v, NULL);
        } else if (!strcmp(a, "--verify-every")) {
            NEEDV();
            P.verify_every = strtol(v, NULL, 0);
        } else if (!strcmp(a, "--hard-limit")) {
            NEEDV();
            P.hard_limit = parse_size(v);
        } else if (!strcmp(a, "--drop")) {
            NEEDV();
            char buf[512];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                int k;
                for (k = 0; k < OP_COUNT && strcmp(tok, op_names[k]); k++) {
                }
                if (k == OP_COUNT) {
                    fprintf(stderr, "tenure-torture: unknown op kind '%s'\n", tok);
                    return 2;
                }
                P.drop_mask |= 1u << k;
            }
        } else if (!strcmp(a, "--reduce")) {
            do_reduce = 1;
        } else if (!strcmp(a, "--jobs")) {
            NEEDV();
            jobs = (int)strtol(v, NULL, 0);
            if (jobs < 1) jobs = 1;
            if (jobs > 64) jobs = 64;
        } else if (!strcmp(a, "--timeout")) {
            NEEDV();
            drv.timeout = (int)strtol(v, NULL, 0);
        } else if (!strcmp(a, "--no-fork")) {
            drv.nofork = 1;
        } else if (!strcmp(a, "--inject")) {
            NEEDV();
            P.inject = (int)strtol(v, NULL, 0);
        } else if (!strcmp(a, "--paranoid")) {
            P.paranoid = 1;
        } else if (!strcmp(a, "--trace")) {
            P.trace = 1;
        } else if (!strcmp(a, "--verbose")) {
            P.verbose = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "tenure-torture: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    const char *env_seed = getenv("TENURE_TEST_SEED");
    if (!have_seed && env_seed && env_seed[0]) {
        P.seed = strtoull(env_seed, NULL, 0);
        have_seed = 1;
    }
    if (!have_seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        P.seed = mix64((uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32)) &
                 0xffffffffffull;
    }
    if (P.ops < 0)
        P.ops = 0;
    if (drv.nofork)
        jobs = 1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    char cmd[512];
    command_line(&P, cmd, sizeof cmd);
    if (minutes > 0)
        printf("tenure-torture: seed %" PRIu64 ", %ld ops per program, for %.1f minutes (replay program i: seed %" PRIu64
               "+i)\n",
               P.seed, P.ops, minutes, P.seed);
    else
        printf("tenure-torture: seed %" PRIu64 ", %ld program%s of %ld ops (replay: %s)\n", P.seed, programs,
               programs == 1 ? "" : "s", P.ops, cmd);

    double t0 = now_s(), deadline = minutes > 0 ? t0 + minutes * 60 : 0;
    long started = 0, finished = 0, failures = 0;
    uint64_t total_gcs = 0, total_nomem = 0;
#define MAX_REPORTED 5
    params failed_params[MAX_REPORTED];
    outcome failed_out[MAX_REPORTED];
    int nfailed_kept = 0;

    typedef struct slot { pid_t pid; params p; shres *sh; } slot;
    slot *slots = xcalloc((size_t)jobs, sizeof *slots);
    int running = 0;
    for (;;) {
        int more = minutes > 0 ? now_s() < deadline : started < programs;
        while (more && running < jobs) {
            int s;
            for (s = 0; s < jobs && slots[s].pid; s++) {
            }
            slots[s].p = P;
            slots[s].p.seed = P.seed + (uint64_t)started;
            started++;
            if (drv.nofork) {
                outcome o;
                run_one(&drv, &slots[s].p, 0, &o);
                finished++;
                total_gcs += o.gcs;
                total_nomem += o.nomem;
                more = minutes > 0 ? now_s() < deadline : started < programs;
                continue;
            }
            if (!slots[s].sh)
                slots[s].sh = shres_new();
            slots[s].pid = spawn(&drv, &slots[s].p, slots[s].sh, 0);
            running++;
            more = minutes > 0 ? now_s() < deadline : started < programs;
        }
        if (running == 0)
            break;
        int status;
        pid_t pid = wait(&status);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        int s;
        for (s = 0; s < jobs && slots[s].pid != pid; s++) {
        }
        if (s == jobs)
            continue;
        running--;
        slots[s].pid = 0;
        outcome o;
        collect_outcome(status, &slots[s].p, slots[s].sh, &o);
        finished++;
        total_gcs += o.gcs;
        total_nomem += o.nomem;
        if (o.failed) {
            failures++;
            char c[512];
            command_line(&slots[s].p, c, sizeof c);
            printf("FAIL seed %" PRIu64 " at op %ld%s: %s\n  replay: %s\n", slots[s].p.seed, o.op,
                   o.op >= slots[s].p.ops ? " (the final phase)" : "", o.msg, c);
            if (nfailed_kept < MAX_REPORTED) {
                failed_params[nfailed_kept] = slots[s].p;
                failed_out[nfailed_kept++] = o;
            }
        }
        if (P.verbose && !o.failed)
            printf("seed %" PRIu64 ": ok, %" PRIu64 " GCs\n", slots[s].p.seed, o.gcs);
    }
    if (do_reduce && !drv.nofork)
        for (int i = 0; i < nfailed_kept; i++) reduce(&drv, &failed_params[i], &failed_out[i]);
    printf("%ld programs, %" PRIu64 " GCs, %ld failures", finished, total_gcs, failures);
    if (P.hard_limit)
        printf(", %" PRIu64 " allocations refused with NOMEM", total_nomem);
    printf(" (%.1f s)\n", now_s() - t0);
    return failures ? 1 : 0;
}
