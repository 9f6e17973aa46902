/*
 * fake_provider: a stand-in for libtenuretraceptprovider.so that needs no LTTng, for
 * check_lttng.py's `load` mode. It says when it is loaded (FAKE-PROVIDER-LOADED on stderr), and
 * at exit how many events libtenure handed it, GCStart_V2 events apart
 * ("FAKE-PROVIDER events=N gcstarts=M bad=B": B counts payloads whose GCStart_V2 Count is not the
 * next GC's number). FAKE_PROVIDER_SKEW=1 makes it claim a schema of another size, which
 * libtenure must refuse.
 */
#include "trace/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long events, gcstarts, bad;

__attribute__((constructor)) static void loaded(void) { fputs("FAKE-PROVIDER-LOADED\n", stderr); }

__attribute__((destructor)) static void unloaded(void) {
    fprintf(stderr, "FAKE-PROVIDER events=%lu gcstarts=%lu bad=%lu\n", events, gcstarts, bad);
}

__attribute__((visibility("default"))) unsigned tenure_lttng_event_count_v1(void) {
    return TN_EV_COUNT + (getenv("FAKE_PROVIDER_SKEW") ? 1u : 0u);
}

__attribute__((visibility("default"))) void tenure_lttng_write_v1(uint16_t id, const void *payload, size_t size) {
    events++;
    if (id != 1) /* GCStart_V2 */
        return;
    uint32_t count;
    if (size < 4) {
        bad++;
        return;
    }
    memcpy(&count, payload, 4);
    gcstarts++;
    if (count != gcstarts)
        bad++;
}
