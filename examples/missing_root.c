/* missing_root.c - the mistake of README.md's "Debugging an embedding": cons() keeps `car` in
 * no root while it allocates. With the defaults the program prints the right sum (the
 * conservative stack scan finds `car` in a register or on the stack, and pins it); under
 * TENURE_DEBUG=1 the allocation collects, `car` dies, its space is poisoned, and the first use
 * of the stale pointer stops the program with a message that says what happened.
 * (test example_missing_root: examples/missing_root_check.sh) */
#include <stddef.h>
#include <stdio.h>
#include <tenure.h>

typedef struct pair {
    tenure_header header;
    struct pair *car, *cdr;
    long value;
} pair;

static const tenure_type *pair_type;

static pair *number(tenure_runtime *rt, long value) {
    pair *n = tenure_alloc(rt, pair_type);
    n->value = value;
    return n;
}

/* The bug: the frame names cdr and cell, not car. */
static pair *cons(tenure_runtime *rt, pair *car, pair *cdr) {
    pair *cell = NULL;
    TENURE_FRAME(rt, frame, cdr, cell);
    cell = tenure_alloc(rt, pair_type); /* may collect: car may move or die */
    cell->value = car->value;           /* a read through car */
    tenure_write_ref(rt, cell, &cell->car, car);
    tenure_write_ref(rt, cell, &cell->cdr, cdr);
    TENURE_FRAME_POP(rt, frame);
    return cell;
}

int main(void) {
    tenure_runtime *rt = tenure_create(NULL, NULL);
    if (!rt)
        return 1;
    size_t refs[] = {offsetof(pair, car), offsetof(pair, cdr)};
    tenure_type_desc desc = {.name = "pair", .size = sizeof(pair), .ref_offsets = refs, .ref_count = 2};
    pair_type = tenure_type_register(rt, &desc);
    pair *list = NULL;
    TENURE_FRAME(rt, frame, list);
    for (long i = 1; i <= 1000; i++)
        list = cons(rt, number(rt, i), list);
    long sum = 0;
    for (pair *p = list; p; p = p->cdr)
        sum += p->car->value;
    printf("sum %ld\n", sum);
    TENURE_FRAME_POP(rt, frame);
    tenure_destroy(rt);
    return 0;
}
