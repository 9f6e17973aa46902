/* debug.c - a stale pointer explained (issue 38): under GCPoisonFreed (TENURE_DEBUG=1 sets it)
 * the space objects moved out of or died in is filled with 0xcc and the regions left empty are
 * inaccessible, so that a pointer the program kept outside every root faults at its first use.
 * A bare "Segmentation fault" would not say why: the first instance created with GCPoisonFreed
 * installs a SIGSEGV handler (os/: tn_os_catch_faults) that, before the fault goes on as it
 * would have (the program's own handler, or death by SIGSEGV), says so when the address lies in
 * an instance's heap or carries the poison:
 *
 *   tenure: SIGSEGV at 0x7f3a40000010: the address lies in the heap of tenure instance 1, in
 *   space the collector freed (GCPoisonFreed made it inaccessible): ...
 *
 * The handler reads the watched instances without a lock (it runs in a signal handler): an
 * instance is watched from the end of its creation until the start of its destruction, and a
 * slot is cleared before the instance's memory goes. */
#include "runtime.h"
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define TN_WATCHED_MAX 64

static _Atomic(tenure_runtime *) watched[TN_WATCHED_MAX];

/* The poison, TN_POISON_WORD, plus an offset under 64 KiB: a reference read out of freed
 * space, then used to reach a field. AArch64's top byte may be ignored by the CPU. */
static bool poisoned(uintptr_t v) {
    return (v & ~(uintptr_t)0xffff) == ((uintptr_t)0xccccccccccccccccull & ~(uintptr_t)0xffff) ||
           (v & ~(uintptr_t)0xff0000000000ffffull) == ((uintptr_t)0x00cccccccccc0000ull);
}

static const tenure_runtime *instance_of(const void *addr) {
    for (int i = 0; i < TN_WATCHED_MAX; i++) {
        const tenure_runtime *rt = atomic_load_explicit(&watched[i], memory_order_acquire);
        if (rt && tn_in_range(rt, addr))
            return rt;
    }
    return NULL;
}

static const char stale_advice[] =
    "the program used a pointer to an object that a collection moved or freed: a pointer held across an "
    "allocation (or any call that may collect) outside every root. Root it (TENURE_FRAME, a root area, a "
    "handle) or reload it after the call; docs: \"Debugging an embedding\" in README.md.\n";

/* What the fault has to do with a tenure heap, if anything, into buf; false if nothing. */
static bool explain(const tn_os_fault *f, char *buf, size_t len) {
    const tenure_runtime *rt = f->addr_known ? instance_of(f->addr) : NULL;
    if (rt) {
        snprintf(buf, len,
                 "tenure: SIGSEGV at %p (instruction %p): the address lies in the heap of tenure instance %u, in "
                 "space the collector freed (GCPoisonFreed made it inaccessible): %s",
                 f->addr, f->pc, (unsigned)rt->instance_id, stale_advice);
        return true;
    }
    if (f->addr_known && poisoned((uintptr_t)f->addr)) {
        snprintf(buf, len,
                 "tenure: SIGSEGV at %p (instruction %p): the address is GCPoisonFreed's pattern 0xcccc... (plus an "
                 "offset), a word read out of freed GC space: %s",
                 f->addr, f->pc, stale_advice);
        return true;
    }
    for (size_t r = 0; !f->addr_known && r < f->nregs; r++) {
        if (!poisoned(f->regs[r]))
            continue;
        snprintf(buf, len,
                 "tenure: SIGSEGV (instruction %p) with a register holding %#lx, GCPoisonFreed's pattern 0xcccc... "
                 "(plus an offset), a word read out of freed GC space: most likely %s",
                 f->pc, (unsigned long)f->regs[r], stale_advice);
        return true;
    }
    return false;
}

static void on_fault(const tn_os_fault *f) {
    char msg[1024];
    if (explain(f, msg, sizeof msg))
        tn_os_write_stderr(msg, strlen(msg));
}

void tn_debug_watch(tenure_runtime *rt) {
    if (!rt->config.GCPoisonFreed)
        return;
    for (int i = 0; i < TN_WATCHED_MAX; i++) {
        tenure_runtime *none = NULL;
        if (atomic_compare_exchange_strong(&watched[i], &none, rt))
            break; /* (more than 64 instances at once: the others fault unexplained) */
    }
    if (!tn_os_catch_faults(on_fault))
        fprintf(stderr,
                "tenure: GCPoisonFreed: the SIGSEGV handler that explains stale pointers could not be "
                "installed (%s): such a fault will not be explained\n",
                tn_os_last_error());
}

void tn_debug_unwatch(tenure_runtime *rt) {
    for (int i = 0; i < TN_WATCHED_MAX; i++) {
        tenure_runtime *mine = rt;
        atomic_compare_exchange_strong(&watched[i], &mine, NULL);
    }
}
