/* setuid_profiler: a profiler library that says when it is loaded (it must never be in a
 * secure-execution process). */
#include <string.h>
#include <unistd.h>

#include "tenure_profiler.h"

static void say(const char *s) {
    if (write(1, s, strlen(s)) < 0)
        return;
}

__attribute__((constructor)) static void loaded(void) { say("PROFILER-LOADED\n"); }

int tenure_profiler_main(tenure_runtime *rt) {
    (void)rt;
    say("PROFILER-MAIN\n");
    return 0;
}
