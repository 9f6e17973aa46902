/* errors.c - the result-code table's text and the one place failures are reported (base/).
 *
 * The error state is rt->services (base/base.h); it changes, and the hook runs, with the
 * instance lock held. base/ cannot call threads/ by name (it lies below it): the lock is taken
 * through rt->services.calls, which api/runtime.c sets before anything can fail. */
#include "runtime.h" /* struct tenure_runtime: only rt->services is read here */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *tenure_strerror(tenure_result result) {
    switch (result) {
#define TN_RESULT_CASE(name, value, text) \
    case TENURE_##name: return text;
        TENURE_RESULTS(TN_RESULT_CASE)
#undef TN_RESULT_CASE
    }
    return "unknown result";
}

/* The hook never runs inside itself (same instance, same thread): a call it makes that fails
 * is printed to stderr, once per instance, instead of recursing into the hook again. */
static void call_hook(tenure_runtime *rt, tenure_result r, const char *function, const char *message) {
    if (tn_cb_inside(rt, TN_CB_ERROR_HOOK)) {
        if (!rt->services.hook_failure_printed)
            fprintf(stderr,
                    "tenure: %s failed inside the error hook: %s (%s); failures inside the hook are "
                    "not passed to it again, and this is printed once\n",
                    function, message, tenure_strerror(r));
        rt->services.hook_failure_printed = true;
        return;
    }
    tn_cb_frame f;
    tn_cb_enter(&f, rt, TN_CB_ERROR_HOOK);
    rt->services.error_hook(rt, r, function, message, rt->services.error_context);
    tn_cb_leave(&f);
}

/* Without a hook, nothing is silent: a failure goes to stderr, once per call site (function
 * and result), for the first TN_PRINTED_SITES sites of the instance; then one line says that
 * further ones are only recorded (tenure_last_error_message). */
static void print_once(tenure_runtime *rt, tenure_result r, const char *function, const char *message) {
    struct tn_base_state *s = &rt->services;
    size_t n = sizeof s->printed_fn[0];
    for (unsigned i = 0; i < s->printed_count; i++)
        if (s->printed_r[i] == r && strncmp(s->printed_fn[i], function, n - 1) == 0)
            return;
    if (s->printed_count == TN_PRINTED_SITES) {
        if (!s->printed_full)
            fprintf(stderr,
                    "tenure: %s: %s (failures at further call sites are not printed: "
                    "tenure_last_error_message, tenure_set_error_hook)\n",
                    function, message);
        s->printed_full = true;
        return;
    }
    snprintf(s->printed_fn[s->printed_count], n, "%s", function);
    s->printed_r[s->printed_count++] = r;
    fprintf(stderr, "tenure: %s: %s\n", function, message);
}

/* `TN_SERVICES_LOCKED(rt);` holds the instance lock to the end of the scope, as threads/'s
 * TN_LOCKED does, through the calls the creator gave (none yet: the instance is being
 * allocated, one thread has it). */
static inline tenure_runtime *services_lock(tenure_runtime *rt) {
    if (rt && rt->services.calls)
        rt->services.calls->lock(rt);
    return rt;
}
static inline void services_unlock(tenure_runtime **rt) {
    if (*rt && (*rt)->services.calls)
        (*rt)->services.calls->unlock(*rt);
}
#define TN_SERVICES_LOCKED(rt) \
    tenure_runtime *tn_services_guard_ __attribute__((cleanup(services_unlock))) = services_lock(rt)

tenure_result tn_api_fail(tenure_runtime *rt, tenure_result r, const char *function, const char *fmt, ...) {
    TN_SERVICES_LOCKED(rt);
    char message[512]; /* room for the verifier's and the barrier's messages with long type names */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    if (rt) {
        rt->services.last_error = r;
        snprintf(rt->services.last_message, sizeof rt->services.last_message, "%s: %s", function, message);
        if (rt->services.error_hook)
            call_hook(rt, r, function, message);
        else
            print_once(rt, r, function, message);
    }
    return r;
}

void tenure_set_error_hook(tenure_runtime *rt, tenure_error_hook hook, void *context) {
    TN_SERVICES_LOCKED(rt);
    if (!rt)
        return;
    rt->services.error_hook = hook;
    rt->services.error_context = context;
}

tenure_result tenure_last_error(const tenure_runtime *crt) {
    tenure_runtime *rt = (tenure_runtime *)crt;
    TN_SERVICES_LOCKED(rt);
    return rt ? rt->services.last_error : TENURE_INVALID_ARGUMENT;
}

const char *tenure_last_error_message(const tenure_runtime *crt) {
    tenure_runtime *rt = (tenure_runtime *)crt;
    TN_SERVICES_LOCKED(rt);
    return rt ? rt->services.last_message : "tenure_last_error_message: NULL instance";
}

void tenure_clear_error(tenure_runtime *rt) {
    TN_SERVICES_LOCKED(rt);
    if (rt) {
        rt->services.last_error = TENURE_OK;
        rt->services.last_message[0] = '\0';
    }
}
