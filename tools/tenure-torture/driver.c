/*
 * tenure-torture: running programs
 * Child processes, their outcomes, the replay command line and reduction of a failure.
 */
#include "torture.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

shres *shres_new(void) {
    void *p = mmap(NULL, sizeof(shres), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return p;
}

pid_t spawn(const driver *d, const params *P, shres *sh, int quiet) {
    memset((void *)sh, 0, sizeof *sh);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        if (quiet) {
            int fd = open("/dev/null", O_WRONLY);
            if (fd >= 0)
                dup2(fd, 2);
        }
        alarm((unsigned)d->timeout);
        run_program(P, sh, 1);
        _exit(0);
    }
    return pid;
}

void collect_outcome(int status, const params *P, shres *sh, outcome *out) {
    memset(out, 0, sizeof *out);
    out->op = sh->op;
    out->gcs = sh->gcs;
    out->nomem = sh->nomem;
    snprintf(out->msg, sizeof out->msg, "%s", sh->msg);
    if (WIFSIGNALED(status)) {
        out->failed = 1;
        out->sig = WTERMSIG(status);
        char m[200];
        snprintf(m, sizeof m, "%.150s", (const char *)sh->msg);
        snprintf(out->msg, sizeof out->msg, "killed by signal %d (%s)%s%s%s", out->sig, strsignal(out->sig),
                 out->sig == SIGALRM ? " after the time limit" : "", m[0] ? ": " : "", m);
    } else if (WEXITSTATUS(status) != 0 || sh->failed || !sh->done) {
        out->failed = 1;
        if (!out->msg[0])
            snprintf(out->msg, sizeof out->msg, "exit status %d", WEXITSTATUS(status));
    }
    if (out->op > P->ops)
        out->op = P->ops;
}

void run_one(driver *d, const params *P, int quiet, outcome *out) {
    if (!d->sh)
        d->sh = shres_new();
    shres *sh = d->sh;
    if (d->nofork) {
        memset((void *)sh, 0, sizeof *sh);
        run_program(P, sh, 0);
        collect_outcome(0, P, sh, out);
        return;
    }
    pid_t pid = spawn(d, P, sh, quiet);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    collect_outcome(status, P, sh, out);
}

static void drop_list(uint32_t mask, char *buf, size_t n) {
    buf[0] = 0;
    for (int k = 0; k < OP_COUNT; k++)
        if (mask & (1u << k)) {
            size_t l = strlen(buf);
            snprintf(buf + l, n - l, "%s%s", l ? "," : "", op_names[k]);
        }
}

void command_line(const params *P, char *buf, size_t n) {
    char drops[256];
    drop_list(P->drop_mask, drops, sizeof drops);
    int l = snprintf(buf, n, "tenure-torture --seed %" PRIu64 " --ops %ld", P->seed, P->ops);
    if (P->verify_every != 200)
        l += snprintf(buf + l, n - (size_t)l, " --verify-every %ld", P->verify_every);
    if (P->hard_limit)
        l += snprintf(buf + l, n - (size_t)l, " --hard-limit %" PRIu64, P->hard_limit);
    if (P->inject)
        l += snprintf(buf + l, n - (size_t)l, " --inject %d", P->inject);
    if (P->bgc)
        l += snprintf(buf + l, n - (size_t)l, " --bgc");
    if (drops[0])
        snprintf(buf + l, n - (size_t)l, " --drop %s", drops);
}

/* the failure class, to keep reductions on the same bug: the message without numbers and
 * addresses, up to the first object description */
static void failure_class(const char *msg, char *out, size_t n) {
    size_t k = 0;
    for (const char *p = msg; *p && k + 1 < n && k < 48; p++) {
        if (*p == '#' || *p == '(')
            break;
        if (p[0] == '0' && p[1] == 'x') {
            p++;
            while (p[1] && ((p[1] >= '0' && p[1] <= '9') || (p[1] >= 'a' && p[1] <= 'f')))
                p++;
            continue;
        }
        if (*p >= '0' && *p <= '9')
            continue;
        out[k++] = *p;
    }
    out[k] = 0;
}

static int same_class(const outcome *a, const outcome *b) {
    if (a->sig || b->sig)
        return a->sig == b->sig;
    char x[64], y[64];
    failure_class(a->msg, x, sizeof x);
    failure_class(b->msg, y, sizeof y);
    return strcmp(x, y) == 0;
}

/* a reduction so far: the parameters and the failure they give */
typedef struct reduction {
    params P;
    outcome best;
} reduction;

/* keep Q if it fails the same way */
static void reduce_try(driver *d, reduction *red, const params *Q, const outcome *first, int shorten) {
    outcome o;
    run_one(d, Q, 1, &o);
    if (o.failed && same_class(&o, first)) {
        red->P = *Q;
        red->best = o;
        if (shorten && o.op >= 0 && o.op < red->P.ops)
            red->P.ops = o.op + 1;
    }
}

/* the ops up to the one that failed */
static void reduce_prefix(driver *d, reduction *red, const params *orig, const outcome *first) {
    if (first->op < 0 || first->op >= red->P.ops)
        return;
    outcome o;
    red->P.ops = first->op + 1;
    run_one(d, &red->P, 1, &o);
    if (!o.failed) {
        red->P.ops = orig->ops; /* not reproducible with a shorter prefix (or flaky) */
        printf("  (the prefix of %ld ops does not fail)\n", first->op + 1);
    } else
        red->best = o;
}

void reduce(driver *d, const params *orig, const outcome *first) {
    reduction red = {*orig, *first};
    const char *env_hv = getenv("TENURE_HeapVerify"), *env_gs = getenv("TENURE_GCStress");
    printf("reducing seed %" PRIu64 " (failed at op %ld: %s)\n", red.P.seed, first->op, first->msg);
    reduce_prefix(d, &red, orig, first);
    /* without each op kind in turn, twice */
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < OP_COUNT; k++) {
            if (red.P.drop_mask & (1u << k))
                continue;
            params Q = red.P;
            Q.drop_mask |= 1u << k;
            reduce_try(d, &red, &Q, first, 1);
        }
    /* shorter still: halve the ops while the failure persists (prefixes differ when ops drop
     * out of the middle, so retry a few lengths) */
    for (long step = red.P.ops / 2; step >= 1; step /= 2) {
        params Q = red.P;
        Q.ops = red.P.ops - step;
        if (Q.ops < 1)
            continue;
        reduce_try(d, &red, &Q, first, 0);
    }
    char cmd[512];
    command_line(&red.P, cmd, sizeof cmd);
    printf("  reduced: %s%s%s%s%s%s%s\n", env_hv ? "TENURE_HeapVerify=" : "", env_hv ? env_hv : "", env_hv ? " " : "",
           env_gs ? "TENURE_GCStress=" : "", env_gs ? env_gs : "", env_gs ? " " : "", cmd);
    printf("  (fails at op %ld of %ld: %s)\n", red.best.op, red.P.ops, red.best.msg);
}
