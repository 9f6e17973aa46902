/*
 * setuid_program: what test_setuid runs, once as a plain program and once as a setuid copy
 * owned by another user. It prints what the process is (euid, AT_SECURE), what the library's
 * one environment reader sees, and what tenure_create did with the environment: with
 * TENURE_GCStress=1 a plain run collects at every allocation; the setuid run must not, and
 * must not load TENURE_PROFILER (the profiler library prints PROFILER-LOADED when it is).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "tenure.h"

/* internal (src/os/os.h), linked from the static library: the reader under test */
const char *tn_os_getenv(const char *name);

/* ASan builds: LeakSanitizer cannot inspect a setuid (non-dumpable) process, and the sanitizer
 * cannot read ASAN_OPTIONS there (/proc/self/environ is not the process's to read). */
__attribute__((used, visibility("default"))) const char *__asan_default_options(void) { return "detect_leaks=0"; }

typedef struct cell {
    tenure_header header;
    struct cell *next;
} cell;

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0); /* every line reaches the log, whatever ends the process */
    printf("euid=%d secure=%d\n", (int)geteuid(), getauxval(AT_SECURE) != 0);
    const char *seen = tn_os_getenv("TENURE_GCStress");
    printf("tn_os_getenv(TENURE_GCStress)=%s\n", seen ? seen : "(null)");
    tenure_result r = TENURE_OK;
    tenure_runtime *rt = tenure_create(NULL, &r);
    if (!rt) {
        printf("tenure_create failed: %s\n", tenure_strerror(r));
        return 3;
    }
    tenure_type_desc d = {.name = "cell", .size = sizeof(cell), .flags = TENURE_TYPE_NO_REFS};
    const tenure_type *t = tenure_type_register(rt, &d);
    for (int i = 0; i < 1000; i++)
        if (!tenure_alloc(rt, t))
            return 4;
    tenure_stats s;
    tenure_get_stats(rt, &s);
    printf("gcs=%llu\n", (unsigned long long)s.gc_count);
    tenure_destroy(rt);
    return 0;
}
