/* heapprof.c - the sample heap profiler linked from an installed tenure (tenure::heapprof,
 * <tenure/heapprof.h>): the report on stderr names instance 1 (checked by install_check.sh). */
#include <stddef.h>
#include <tenure.h>
#include <tenure/heapprof.h>

typedef struct cell {
    tenure_header header;
    struct cell *next;
} cell;

int main(void) {
    tenure_runtime *rt = tenure_create(NULL, NULL);
    if (!rt || tenure_heapprof_attach(rt, NULL) != 0)
        return 1;
    size_t refs[] = {offsetof(cell, next)};
    tenure_type_desc desc = {.name = "cell", .size = sizeof(cell), .ref_offsets = refs, .ref_count = 1};
    const tenure_type *type = tenure_type_register(rt, &desc);
    cell *list = NULL, *c = NULL;
    TENURE_FRAME(rt, frame, list, c);
    for (int i = 0; i < 1000; i++) {
        c = tenure_alloc(rt, type);
        tenure_write_ref(rt, c, &c->next, list);
        list = c;
    }
    TENURE_FRAME_POP(rt, frame);
    tenure_destroy(rt); /* the report */
    return 0;
}
