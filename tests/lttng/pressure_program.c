/*
 * pressure_program: the events the other programs of check_lttng.py do not write: memory
 * pressure added and removed (IncreaseMemoryPressure, DecreaseMemoryPressure, level 5), with
 * induced GCs between. It prints "WORKLOAD {...}" with its own GC counts as report_workload does.
 */
#include "tenure.h"

#include <stdio.h>

typedef struct cell {
    tenure_header header;
    struct cell *next;
} cell;

int main(void) {
    tenure_result r = TENURE_OK;
    tenure_runtime *rt = tenure_create(NULL, &r);
    if (!rt) {
        fprintf(stderr, "pressure_program: tenure_create: %s\n", tenure_strerror(r));
        return 1;
    }
    tenure_type_desc d = {.name = "cell", .size = sizeof(cell), .flags = TENURE_TYPE_NO_REFS};
    const tenure_type *t = tenure_type_register(rt, &d);
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 20000; i++)
            if (!tenure_alloc(rt, t))
                return 2;
        if (tenure_add_memory_pressure(rt, 1u << 20) != TENURE_OK || tenure_collect(rt, round % 3, 0) != TENURE_OK ||
            tenure_remove_memory_pressure(rt, 1u << 19) != TENURE_OK)
            return 3;
    }
    tenure_stats s;
    tenure_get_stats(rt, &s);
    /* a GC of generation g condemns g and every younger one */
    uint64_t g0 = s.gen[0].collections - s.gen[1].collections, g1 = s.gen[1].collections - s.gen[2].collections;
    printf("WORKLOAD {\"gc_count\": %llu, \"by_gen\": [%llu, %llu, %llu]}\n", (unsigned long long)s.gc_count,
           (unsigned long long)g0, (unsigned long long)g1, (unsigned long long)s.gen[2].collections);
    tenure_destroy(rt);
    return 0;
}
