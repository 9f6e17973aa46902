/* quickstart.c - the README's embedding example: a linked list that survives collections. */
#include <stdio.h>
#include <stddef.h>
#include <tenure.h>

typedef struct node {
    tenure_header header;
    struct node *next;
    long value;
} node;

int main(void) {
    tenure_runtime *rt = tenure_create(NULL, NULL); /* defaults + TENURE_* env */
    size_t refs[] = {offsetof(node, next)};
    tenure_type_desc desc = {.name = "node", .size = sizeof(node), .ref_offsets = refs, .ref_count = 1};
    const tenure_type *node_type = tenure_type_register(rt, &desc);

    node *list = NULL, *n = NULL;
    TENURE_FRAME(rt, frame, list, n); /* precise roots: may move */
    for (long i = 0; i < 1000000; i++) {
        n = tenure_alloc(rt, node_type); /* zeroed; may collect */
        n->value = i;
        tenure_write_ref(rt, n, &n->next, i % 1000 ? list : NULL); /* keep 1000 at a time */
        list = n;
    }
    long sum = 0;
    for (node *p = list; p; p = p->next)
        sum += p->value;
    tenure_stats s;
    tenure_get_stats(rt, &s);
    printf("sum %ld after %llu GCs\n", sum, (unsigned long long)s.gc_count);
    TENURE_FRAME_POP(rt, frame);
    tenure_destroy(rt);
    return 0;
}
