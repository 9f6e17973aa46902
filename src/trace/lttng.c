/* lttng.c - finding the LTTng-UST provider (lttng/provider.c, libtenuretraceptprovider.so).
 * libtenure depends only on libc and pthreads: the provider, and liblttng-ust with it, is
 * loaded with dlopen only when TENURE_LTTNG asks for it, and never unloaded (lttng-ust keeps
 * its probes registered for the life of the process). */
#include "os/os.h"
#include "trace/trace.h"
#include <stdio.h>
#include <string.h>

#define TN_LTTNG_PROVIDER "libtenuretraceptprovider.so"

typedef unsigned (*event_count_fn)(void);

tn_lttng_write_fn tn_lttng_load(const char *value, char *err, size_t errlen) {
    /* "1" (or any value without a '/'): the loader's search path (LD_LIBRARY_PATH, the
     * installed libdir); a path: that file */
    const char *path = strchr(value, '/') ? value : TN_LTTNG_PROVIDER;
    char why[512];
    event_count_fn count = (event_count_fn)tn_os_load_library(path, "tenure_lttng_event_count_v1", why, sizeof why);
    if (!count) {
        snprintf(err, errlen, "%s", why);
        return NULL;
    }
    if (count() != TN_EV_COUNT) {
        snprintf(err, errlen, "%s was built for a schema of %u events, this libtenure has %u: rebuild it with it", path,
                 count(), (unsigned)TN_EV_COUNT);
        return NULL;
    }
    tn_lttng_write_fn write = (tn_lttng_write_fn)tn_os_load_library(path, "tenure_lttng_write_v1", why, sizeof why);
    if (!write)
        snprintf(err, errlen, "%s", why);
    return write;
}
