/* callbacks.c - the callback frames and the table of what each kind of callback may call (see
 * "callbacks.c" in base/base.h and "Callbacks" in tenure.h). Entering and leaving a frame
 * (tn_cb_enter, tn_cb_leave) is inline after struct tenure_runtime in runtime.h; closing the
 * calling thread's allocation context there is heap/'s (tn_alloc_close_for_callback), reached
 * through rt->services.calls: base/ calls nothing above it by name.
 *
 * Why these rules (those of a serious collector: .NET's finalizers, profiler callbacks and
 * event listeners have the same shape):
 *  - A finalizer runs like ordinary program code (no instance lock, objects valid), so it may
 *    allocate, collect, take handles. It may not destroy the instance that runs it, wait for
 *    the finalizers (it is one of them), or detach the thread running it.
 *  - Every other callback runs with the instance lock held, in the middle of an operation of
 *    the instance (an allocation, a handle change, a failing call, a heap walk, a collection).
 *    It may read (queries) and remove (deferred), nothing more: an allocation there recursed
 *    (object_allocated) or walked a moved heap (heap walk), tenure_destroy deadlocked or freed
 *    the instance under the caller's feet. Adding roots, handles, sessions or profilers there
 *    would change the lists being walked. Rules that are strict now can be relaxed later
 *    without breaking a program; the reverse cannot.
 *  - Callbacks of a collection (root scanners, type trace, refcount, GC callback, profiler GC
 *    callbacks) also may not walk or verify the heap: it is being moved.
 *  - Removals are allowed (but from a type's trace callback): a callback that stops its own
 *    session or detaches its own profiler is natural, and is made safe by deferring the free
 *    to the end of the walk. A trace callback may run on a server GC helper thread, beside
 *    thread 0 walking the root lists and sessions without the helpers' lock (threads/threads.c
 *    "the GC team borrows the lock"): a removal there would race with that walk. */
#include "runtime.h" /* struct tenure_runtime: only rt->services is read here */

__thread tn_cb_frame *tn_cb_top __attribute__((tls_model("initial-exec")));

#define TN_CB_READ_ONLY (TN_OP_ALLOC | TN_OP_COLLECT | TN_OP_WAIT_FIN | TN_OP_CHANGE | TN_OP_DETACH | TN_OP_DESTROY)
#define TN_CB_GC_TIME (TN_CB_READ_ONLY | TN_OP_WALK)
/* callbacks that may run while objects are half moved (relocation) read no object's references */
#define TN_CB_MID_GC (TN_CB_GC_TIME | TN_OP_READ_REFS)
#define TN_CB_FINALIZING (TN_OP_WAIT_FIN | TN_OP_DETACH | TN_OP_DESTROY)

static const struct tn_cb_rule {
    const char *name;   /* for messages: "called from <name>" */
    unsigned forbidden; /* TN_OP_* */
} rules[TN_CB_KINDS] = {
    [TN_CB_ERROR_HOOK] = {"the error hook", TN_CB_READ_ONLY},
    [TN_CB_LISTENER] = {"an event listener", TN_CB_READ_ONLY},
    [TN_CB_PROF_ALLOC] = {"the profiler's object_allocated callback", TN_CB_READ_ONLY},
    [TN_CB_PROF_HANDLE] = {"a profiler's handle callback", TN_CB_READ_ONLY},
    [TN_CB_PROF_GC] = {"a profiler's GC callback", TN_CB_GC_TIME},
    [TN_CB_PROF_SHUTDOWN] = {"a profiler's shutdown callback", TN_CB_READ_ONLY},
    [TN_CB_ROOT_SCANNER] = {"a root scanner", TN_CB_MID_GC},
    [TN_CB_TRACE] = {"a type's trace callback", TN_CB_MID_GC | TN_OP_REMOVE},
    [TN_CB_REFCOUNT] = {"the refcount callback", TN_CB_MID_GC},
    [TN_CB_GC_CALLBACK] = {"the GC callback", TN_CB_GC_TIME},
    [TN_CB_HEAP_VISITOR] = {"a heap-walk visitor", TN_CB_READ_ONLY},
    [TN_CB_FINALIZER] = {"a finalizer", TN_CB_FINALIZING},
    [TN_CB_REFERENCE_FN] = {"a tenure_object_references callback", TN_CB_READ_ONLY},
    [TN_CB_PROF_SAMPLE] = {"the profiler's object_allocated_sampled callback", TN_CB_READ_ONLY},
};

static const char *op_text(unsigned op) {
    if (op & TN_OP_DESTROY)
        return "destroy the instance";
    if (op & TN_OP_DETACH)
        return "detach the thread";
    if (op & TN_OP_WAIT_FIN)
        return "wait for the finalizers";
    if (op & TN_OP_ALLOC)
        return "allocate";
    if (op & TN_OP_COLLECT)
        return "collect or run finalizers";
    if (op & TN_OP_WALK)
        return "walk or verify the heap while it is collected";
    if (op & TN_OP_READ_REFS)
        return "read an object's references while the heap may be half moved";
    if (op & TN_OP_REMOVE)
        return "remove (it may run on a GC helper thread while the collecting thread walks the lists)";
    return "change the instance (handles, roots, types, sessions, profilers, finalization, threads)";
}

bool tn_cb_inside(const tenure_runtime *rt, tn_cb_kind kind) {
    for (const tn_cb_frame *f = tn_cb_top; f; f = f->prev)
        if (f->rt == rt && f->kind == kind)
            return true;
    return false;
}

static bool collecting(const tenure_runtime *rt) { return rt->services.calls && rt->services.calls->collecting(rt); }

bool tn_cb_refuse(tenure_runtime *rt, unsigned op, const char *function) {
    for (const tn_cb_frame *f = tn_cb_top; f; f = f->prev) {
        if (f->rt != rt || !(rules[f->kind].forbidden & op))
            continue;
        tn_api_fail(rt, TENURE_STATE, function, "called from %s%s, which may not %s (see \"Callbacks\" in tenure.h)",
                    rules[f->kind].name, collecting(rt) ? " during a collection" : "",
                    op_text(rules[f->kind].forbidden & op));
        return true;
    }
    return false;
}

bool tn_cb_refuse_unattached(tenure_runtime *rt, const char *function) {
    if (!rt || !rt->services.calls || rt->services.calls->attached(rt))
        return false;
    tn_api_fail(rt, TENURE_STATE, function, "the calling thread is not attached (tenure_thread_attach)");
    return true;
}
