/* current.c - the calling thread's current attachment, tenure__current (include/tenure.h): the
 * one thread-local the inline fast paths read (one load and one compare find the thread's
 * allocation context and shadow stack for an instance).
 *
 * threads/ keeps it current (attach, detach, tn_self); it is defined here, below every
 * subsystem, because the assertions (assert.c) read it too, to name the failing thread's
 * instance, and base/ may refer to nothing above it. */
#include "base/base.h"

tenure__mutator tn_no_attachment = {0, 0, NULL, (const struct tenure_runtime *)1};
__thread tenure__mutator *tenure__current __attribute__((tls_model("initial-exec"))) = &tn_no_attachment;
