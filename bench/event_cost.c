/*
 * event_cost.c - the cost of one GC event written into the CTF sink, through the public API
 * only.
 *
 * A loop creates and frees a strong handle on one object: each pair emits SetGCHandle and
 * DestroyGCHandle (keyword GCHandle 0x2, level 4) when a session wants them. The loop runs
 *
 *   none       no session: the events cost one predictable branch each
 *   off        a CTF session that does not want them (keyword GC 0x1 only)
 *   ctf        a CTF session at level 5 with keyword GCHandle: both events are written
 *   listener   a listener session (GCHandle, level 5) whose callback only counts
 *
 * and reports ns per handle pair, and for ctf/listener the cost of one event:
 * (pair_ns(mode) - pair_ns(none)) / 2. The events the CTF sink wrote are 2 x pairs minus
 * tenure_session_discarded(); with --verify, babeltrace2 reads the trace back and counts them.
 * Every mode is measured --reps times (alternating); medians are reported.
 *
 * Usage: event_cost [--pairs N] [--reps N] [--dir DIR] [--verify] [--keep]
 * Output (one line per mode, then a summary):
 *   EVENT_COST mode=<m> pairs=<n> ns_per_pair=<median> [ns_per_event=<..>] [events=<written>
 *              discarded=<n>]
 *   EVENT_COST_SUMMARY ns_per_event_ctf=<..> ns_per_event_listener=<..> ns_per_event_off=<..>
 *              target_ns=50 met=<yes|no> [babeltrace2_events=<n>]
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tenure.h"
#include "tenure_events.h"

#include "bench_common.h"

typedef struct node {
    tenure_header header;
    struct node *next;
    long value;
} node;

static void die(const char *what) {
    fprintf(stderr, "event_cost: %s\n", what);
    exit(2);
}

static uint64_t counted;
static void count_listener(const tenure_event *e, void *ctx) {
    (void)e;
    (void)ctx;
    counted++;
}

static double loop_pairs(tenure_runtime *rt, void *obj, uint64_t pairs) {
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < pairs; i++) {
        tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, obj);
        if (!h)
            die("tenure_handle_new failed");
        tenure_handle_free(rt, h);
    }
    return (double)(bench_now_ns() - t0) / (double)pairs;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { M_NONE, M_OFF, M_CTF, M_LISTENER, M_COUNT };
static const char *const mode_names[M_COUNT] = {"none", "off", "ctf", "listener"};

int main(int argc, char **argv) {
    uint64_t pairs = 2000000;
    int reps = 5, verify = 0, keep = 0;
    const char *dir_arg = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pairs") && i + 1 < argc)
            pairs = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir_arg = argv[++i];
        else if (!strcmp(argv[i], "--verify"))
            verify = 1;
        else if (!strcmp(argv[i], "--keep"))
            keep = 1;
        else {
            fprintf(stderr, "usage: event_cost [--pairs N] [--reps N] [--dir DIR] [--verify] [--keep]\n");
            return 2;
        }
    }
    if (pairs == 0 || reps < 1 || reps > 100)
        die("--pairs must be > 0 and --reps 1..100");
    char base[4096];
    if (dir_arg) {
        snprintf(base, sizeof base, "%s", dir_arg);
        mkdir(base, 0777);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(base, sizeof base, "%s/event_cost.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(base))
            die("mkdtemp failed");
    }

    tenure_config cfg;
    tenure_config_init(&cfg);
    tenure_result r;
    tenure_runtime *rt = tenure_create(&cfg, &r);
    if (!rt)
        die(tenure_strerror(r));
    size_t offs[] = {offsetof(node, next)};
    tenure_type_desc d = {.name = "node", .size = sizeof(node), .ref_offsets = offs, .ref_count = 1};
    const tenure_type *t = tenure_type_register(rt, &d);
    node *obj = tenure_alloc(rt, t);
    tenure_handle *keep_alive = tenure_handle_new(rt, TENURE_HANDLE_STRONG, obj);
    if (!t || !obj || !keep_alive)
        die("setup failed");

    double ns[M_COUNT][100];
    uint64_t written[100] = {0}, discarded[100] = {0};
    char last_ctf_dir[4200] = "";
    loop_pairs(rt, obj, pairs / 10); /* warm-up */
    for (int rep = 0; rep < reps; rep++) {
        for (int m = 0; m < M_COUNT; m++) {
            tenure_session *s = NULL;
            char path[4200];
            if (m == M_OFF || m == M_CTF) {
                snprintf(path, sizeof path, "%s/%s-%d", base, mode_names[m], rep);
                s = tenure_session_start_ctf(rt, m == M_CTF ? TENURE_KW_GC_HANDLE : TENURE_KW_GC, TENURE_LEVEL_VERBOSE,
                                             path);
                if (!s)
                    die("tenure_session_start_ctf failed");
            } else if (m == M_LISTENER) {
                counted = 0;
                s = tenure_session_start_listener(rt, TENURE_KW_GC_HANDLE, TENURE_LEVEL_VERBOSE, count_listener, NULL);
                if (!s)
                    die("tenure_session_start_listener failed");
            }
            /* the rundown of a GC session happened at start, outside the measured loop */
            ns[m][rep] = loop_pairs(rt, obj, pairs);
            if (m == M_CTF) {
                discarded[rep] = tenure_session_discarded(s);
                written[rep] = 2 * pairs - discarded[rep];
                snprintf(last_ctf_dir, sizeof last_ctf_dir, "%s", path);
            }
            if (m == M_LISTENER && counted != 2 * pairs)
                fprintf(stderr, "event_cost: the listener counted %" PRIu64 " events, expected %" PRIu64 "\n", counted,
                        2 * pairs);
            if (s && tenure_session_stop(rt, s) != TENURE_OK)
                die("tenure_session_stop failed");
        }
    }
    double med[M_COUNT];
    for (int m = 0; m < M_COUNT; m++)
        med[m] = median(ns[m], reps);
    double per_event[M_COUNT];
    for (int m = 0; m < M_COUNT; m++)
        per_event[m] = (med[m] - med[M_NONE]) / 2;
    uint64_t disc_max = 0, written_min = UINT64_MAX;
    for (int rep = 0; rep < reps; rep++) {
        if (discarded[rep] > disc_max)
            disc_max = discarded[rep];
        if (written[rep] < written_min)
            written_min = written[rep];
    }
    for (int m = 0; m < M_COUNT; m++) {
        printf("EVENT_COST mode=%s pairs=%" PRIu64 " reps=%d ns_per_pair=%.2f", mode_names[m], pairs, reps, med[m]);
        if (m != M_NONE)
            printf(" ns_per_event=%.2f", per_event[m]);
        if (m == M_CTF)
            printf(" events=%" PRIu64 " discarded=%" PRIu64, written_min, disc_max);
        printf("\n");
    }
    long bt_events = -1;
    if (verify && last_ctf_dir[0]) {
        char cmd[4400];
        snprintf(cmd, sizeof cmd, "babeltrace2 '%s' 2>/dev/null | wc -l", last_ctf_dir);
        FILE *p = popen(cmd, "r");
        if (p) {
            if (fscanf(p, "%ld", &bt_events) != 1)
                bt_events = -1;
            if (pclose(p) != 0)
                bt_events = -1;
        }
    }
    printf("EVENT_COST_SUMMARY ns_per_event_ctf=%.2f ns_per_event_listener=%.2f ns_per_event_off=%.2f "
           "discarded_max=%" PRIu64 " target_ns=50 met=%s",
           per_event[M_CTF], per_event[M_LISTENER], per_event[M_OFF], disc_max, per_event[M_CTF] < 50 ? "yes" : "no");
    if (verify)
        printf(" babeltrace2_events=%ld expected=%" PRIu64 " verify=%s", bt_events, written[reps - 1],
               bt_events >= 0 && (uint64_t)bt_events == written[reps - 1] ? "ok" : "MISMATCH");
    printf("\n");
    tenure_handle_free(rt, keep_alive);
    tenure_destroy(rt);
    if (!keep && !dir_arg) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
        if (system(cmd) != 0)
            fprintf(stderr, "event_cost: could not remove %s\n", base);
    } else {
        fprintf(stderr, "event_cost: traces kept in %s\n", base);
    }
    return verify && bt_events >= 0 && (uint64_t)bt_events != written[reps - 1] ? 1 : 0;
}
