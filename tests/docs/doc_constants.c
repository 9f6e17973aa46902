/* doc_constants.c - prints the constants the design notes quote that only the compiler knows
 * (sizes of structures, values of the internal headers' macros, option defaults), one
 * "name value" per line, for check_doc_constants.py. */
#include "runtime.h"
#include "heap/crossing.h"
#include <stdio.h>
#include <tenure_events.h>
#include <tenure_profiler.h>

#define PRINT(name, value) printf("%s %llu\n", name, (unsigned long long)(value))

int main(void) {
    tenure_config c;
    tenure_config_init(&c);
    PRINT("handle_slot_bytes", sizeof(tn_handle_slot));
    PRINT("handle_slab_bytes", TN_HANDLE_SLAB_BYTES);
    PRINT("handles_per_slab", TN_HANDLES_PER_SLAB);
    PRINT("card_bytes", TN_CARD_SIZE);
    PRINT("cards_per_bundle", (size_t)1 << (TENURE__BUNDLE_SHIFT - TENURE__CARD_SHIFT));
    PRINT("bundle_bytes", (size_t)1 << TENURE__BUNDLE_SHIFT);
    PRINT("brick_bytes", (size_t)1 << TN_PLUG_BRICK_SHIFT);
    PRINT("quantum_bytes", TN_QUANTUM);
    PRINT("object_align", TN_ALIGN);
    PRINT("min_object", TN_MIN_OBJECT);
    PRINT("crossing_granule_bytes", TN_CROSSING_GRANULE);
    PRINT("crossing_entry_bytes", sizeof *((tenure_runtime *)0)->crossing);
    PRINT("sampling_interval", TENURE_PROFILER_DEFAULT_SAMPLING_INTERVAL);
    PRINT("trace_keywords_default", TENURE_KW_GC);
    PRINT("trace_level_default", TENURE_LEVEL_INFORMATIONAL);
    PRINT("kw_gc_handle", TENURE_KW_GC_HANDLE);
    PRINT("kw_survival_and_movement", TENURE_KW_GC_HEAP_SURVIVAL_AND_MOVEMENT);
    PRINT("GCRegionSize", c.GCRegionSize);
    PRINT("GCRegionRange", c.GCRegionRange);
    PRINT("GCLOHThreshold", c.GCLOHThreshold);
    PRINT("GCMarkStackSize", c.GCMarkStackSize);
    PRINT("GCRetainRegions", c.GCRetainRegions);
    PRINT("GCConservativeStack", c.GCConservativeStack);
    PRINT("GCFinalizeOnShutdown", c.GCFinalizeOnShutdown);
    PRINT("GCPoisonFreed", c.GCPoisonFreed);
    return 0;
}
