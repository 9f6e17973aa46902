/*
 * team.h - server GC's threads (gcServer=1, docs/design/collector.md "Server GC"): the state
 * gc/team.c owns (rt->team) and the joins the phases meet at.
 *
 * A team has n GC threads, one per heap: thread 0 is the thread that collects (it holds
 * rt->threads.lock), threads 1..n-1 are helpers the instance creates before its first GC's
 * pause (and a forked child before its first) and parks between GCs. Every GC of a team of more than one wakes the helpers; each
 * runs the collection's helper function (the parallel parts of the phases) and meets the
 * others at joins, as .NET's t_join: a thread that reaches a join waits for the others
 * (GCJoin_V2 JoinTime 0 / 1, JoinType 1 "join"); the last to arrive writes JoinType 0
 * ("last_join") and does not wait; thread 0, which does the serial work between the
 * parallel parts, restarts the helpers (JoinType 2 "restart", Heap 100). Join ids are .NET's
 * gc_join_stage numbers (TN_JOIN_*).
 *
 * Invariants (checked by tn_gc_team_check):
 *  J1 Between GCs every helper is parked (waiting for the next GC's epoch) and no join is
 *     half full: join_arrived == 0.
 *  J2 During a GC, helpers touch the heap only inside the parallel parts (between a restart
 *     and the next join); the serial parts run on thread 0 alone.
 *  J3 A helper neither reads nor writes rt after it has parked: the GC's end waits for every
 *     helper to park (tn_gc_team_finish) before it goes on, so the trace sessions a helper
 *     wrote to are still there when it writes its last event.
 *  J4 In a parallel part of the phases after marking (gc/parts.c), each item (a region, a
 *     run of card slots, a large heap) is taken by one GC thread (cursor), which alone writes
 *     that region's objects, fields, side bits, crossing entries, cards and bundles; a card
 *     that two items may write (a plug's destination, a card slot's card) is written with
 *     atomics. Checked: every thread took an item past the last before its join (cursor), and
 *     regions cover whole side-bit words and card bundles (gc/parts.c).
 *
 * Joins of a GC whose phases after marking run on the team: 3 (begin_mark_phase), 4
 * (scan_dependent_handles), 15 (begin_relocate_phase: the plan done), 16
 * (relocate_phase_done), 14 or 13 (adjust_handle_age_sweep / _compact: compacted and swept), 1
 * (done). Otherwise (little kept, gc/collect.c) only 3 and 4, and thread 0 does the rest.
 */
#ifndef TENURE_GC_TEAM_H
#define TENURE_GC_TEAM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "os/os.h"

#define TN_MAX_GC_THREADS 64

/* .NET's gc_join_stage ids (gcinternal.h) for the joins tenure has */
enum {
    TN_JOIN_DONE = 1,
    TN_JOIN_BEGIN_MARK_PHASE = 3,
    TN_JOIN_SCAN_DEPENDENT_HANDLES = 4,
    TN_JOIN_DECIDE_ON_COMPACTION = 11,      /* after the plugs are found, before they are placed */
    TN_JOIN_ADJUST_HANDLE_AGE_COMPACT = 13, /* after compaction (nothing swept) */
    TN_JOIN_ADJUST_HANDLE_AGE_SWEEP = 14,   /* after sweeping (and compaction) */
    TN_JOIN_BEGIN_RELOCATE_PHASE = 15,      /* after the plan */
    TN_JOIN_RELOCATE_PHASE_DONE = 16,
};
#define TN_JOIN_HEAP_RESTART 100 /* the Heap of restart events */

struct tenure_runtime;
typedef void (*tn_team_fn)(struct tenure_runtime *rt, unsigned heap);

struct tn_gc_team {
    unsigned n;                  /* GC threads this instance runs (1: workstation GC) */
    unsigned created;            /* helpers created and not gone (n - 1 once the first GC prepared them) */
    unsigned active;             /* helpers taking part in the GC in progress (0 outside one) */
    bool forked_without_helpers; /* a forked child under ThreadSanitizer: one GC thread */
    pthread_t threads[TN_MAX_GC_THREADS];
    pthread_mutex_t mx;
    pthread_cond_t helpers_cv; /* helpers wait here for a GC and for restarts */
    pthread_cond_t lead_cv;    /* thread 0 waits here for joins to fill and helpers to park */
    uint64_t epoch;            /* GCs given to the helpers; a parked helper waits for it to change */
    tn_team_fn fn;             /* what the helpers run in this GC */
    unsigned running;          /* helpers that have not parked since the epoch changed */
    unsigned join_arrived;     /* threads at the join in progress (atomic) */
    unsigned join_reported;    /* of those, the ones that wrote their join event (atomic) */
    uint64_t restarts;         /* a helper at a join waits for it to change (atomic) */
    unsigned sleepers;         /* threads asleep in a join or in the GC's end (atomic; changed under mx) */
    bool spin;                 /* GC threads <= CPUs: waits spin before they sleep (tn_gc_spin_until) */
    bool helper_cpus_set;      /* the helpers were given helper_cpus (keep_helpers_beside, team.c) */
    tn_cpu_set helper_cpus;    /* where the helpers may run: beside thread 0's CPU at the last wake */
    bool stop;                 /* the instance is being destroyed: helpers exit */
    /* The next work item of the parallel part in progress (gc/parts.c): every GC thread
     * takes items with an atomic add; thread 0 sets it to 0 before it restarts the others. */
    size_t cursor;
};

/* ---- functions (team.c) ---- */
/* Heaps (GC threads and allocation heaps) the configuration asks for: 1 under workstation GC;
 * GCHeapCount, or one per CPU the process may run on, under server GC (at most 64). */
unsigned tn_gc_heaps_wanted(const struct tenure_runtime *rt);
/* Before a GC's pause (scratch.c): the helpers exist (created the first time, again in a
 * forked child). A helper that cannot be created leaves the team smaller (the GC still runs
 * on the threads there are). */
void tn_gc_team_prepare(struct tenure_runtime *rt);
/* In the child of fork() (api/fork.c): the helpers stayed in the parent; the child's next GC
 * creates its own (under ThreadSanitizer, which cannot start threads there, it collects on
 * one thread). */
void tn_gc_team_forked_child(struct tenure_runtime *rt);
/* GC threads available for the next GC (1 under workstation GC). */
static inline unsigned tn_gc_team_threads(const struct tn_gc_team *t) { return t->created + 1; }
/* Thread 0, in the pause: `threads` - 1 helpers (at most those created) run fn(rt, heap)
 * (heap 1..threads-1), which must end at a join that tn_gc_team_finish releases. */
void tn_gc_team_wake(struct tenure_runtime *rt, tn_team_fn fn, unsigned threads);
/* Meet the other GC threads at join `id`. A helper waits until thread 0 restarts it; thread 0
 * waits until every helper has arrived (then it does the serial work and restarts them). */
void tn_gc_join(struct tenure_runtime *rt, unsigned heap, uint32_t id);
/* Thread 0, after a join: release the helpers (restart events). */
void tn_gc_restart(struct tenure_runtime *rt);
/* Thread 0, at the GC's end: release the helpers from their last join and wait until each
 * has parked (J3). */
void tn_gc_team_finish(struct tenure_runtime *rt);
/* tenure_destroy: the helpers exit and are joined. */
void tn_gc_team_destroy(struct tenure_runtime *rt);
/* J1 (base/assert.h). */
void tn_gc_team_check(struct tenure_runtime *rt);

/* ---- waiting inside a pause ----
 *
 * A GC thread that waits for another (at a join, for the end of a GC, for a mark packet)
 * first spins for up to TN_GC_SPIN_NS, when the team has no more threads than the process
 * has CPUs (t->spin), and sleeps on a condition variable only after that. In a short GC the
 * other threads come within microseconds; sleeping costs a futex wake per wait and, when the
 * woken thread is put on the waker's CPU, a preemption of the thread that does the work
 * (measured: docs/design/collector.md "Waiting inside a pause").
 *
 * Spinning is only worth it if the threads spin on CPUs of their own. Linux often queues a
 * woken thread on the CPU of the thread that woke it, even with another CPU idle; there a
 * helper waits behind thread 0, which spins for it. So, before each GC wakes its helpers,
 * thread 0 lets them run on the CPUs it may run on except the one it runs on now
 * (keep_helpers_beside, team.c; one system call per helper when that CPU changed). Not with
 * GCHeapAffinitizeMask (the helpers are bound) or GCNoAffinitize (the program asked for no
 * CPU affinity), nor when waits do not spin. */
#define TN_GC_SPIN_NS 50000u

/* Spin until ready(arg) or TN_GC_SPIN_NS have passed; whether ready(arg) came true. */
bool tn_gc_spin_until(bool (*ready)(const void *arg), const void *arg);

#endif
