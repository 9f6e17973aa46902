/*
 * heap_dump_program: a heap with a known shape, one tenure_heap_dump, and what the dump must
 * hold, from the heap walk + tenure_object_references and a profiler's root_references, on
 * stdout ("DUMP nodes=... edges=... roots=... types=... pairs=..."), for heap_dump_ctf.py,
 * which reads the CTF trace (TENURE_TRACE) with babeltrace2 and bt2.
 */
#include "tenure.h"
#include "tenure_events.h"
#include "tenure_profiler.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct node {
    tenure_header h;
    struct node *left, *right;
    long value;
} node;

static size_t roots_seen;
static void on_roots(void *c, size_t count, void *const *ids, const tenure_root_kind *kinds, const uint32_t *flags,
                     const uintptr_t *root_ids) {
    (void)c, (void)ids, (void)kinds, (void)flags, (void)root_ids;
    roots_seen += count;
}

typedef struct expect {
    tenure_runtime *rt;
    size_t nodes, edges;
    const tenure_type *types[16];
    size_t type_count;
} expect;

static int count_edge(void *obj, const tenure_object_reference *ref, void *c) {
    (void)obj, (void)ref;
    ((expect *)c)->edges++;
    return 0;
}

static int count_node(void *obj, const tenure_type *type, size_t size, int gen, void *c) {
    expect *x = c;
    (void)size, (void)gen;
    x->nodes++;
    tenure_object_references(x->rt, obj, count_edge, x);
    size_t i = 0;
    while (i < x->type_count && x->types[i] != type)
        i++;
    if (i == x->type_count && x->type_count < 16)
        x->types[x->type_count++] = type;
    return 0;
}

static node *tree(tenure_runtime *rt, const tenure_type *t, int depth) {
    if (depth == 0)
        return NULL;
    node *n = NULL, *l = NULL;
    TENURE_FRAME(rt, f, n, l);
    l = tree(rt, t, depth - 1);
    n = tenure_alloc(rt, t);
    tenure_write_ref(rt, n, &n->left, l);
    l = tree(rt, t, depth - 1);
    tenure_write_ref(rt, n, &n->right, l);
    TENURE_FRAME_POP(rt, f);
    return n;
}

int main(void) {
    tenure_runtime *rt = tenure_create(NULL, NULL);
    if (!rt)
        return 1;
    static const size_t offs[] = {offsetof(node, left), offsetof(node, right)};
    tenure_type_desc d = {.name = "Node", .size = sizeof(node), .ref_offsets = offs, .ref_count = 2};
    const tenure_type *node_t = tenure_type_register(rt, &d);
    d = (tenure_type_desc){.name = "Node[]",
                           .elem_size = sizeof(void *),
                           .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_REF_ARRAY};
    const tenure_type *arr_t = tenure_type_register(rt, &d);
    tenure_handle *t1 = tenure_handle_new(rt, TENURE_HANDLE_STRONG, tree(rt, node_t, 12));
    void *arr = tenure_alloc_array(rt, arr_t, 100);
    tenure_handle *ha = tenure_handle_new(rt, TENURE_HANDLE_STRONG, arr);
    for (int i = 0; i < 100; i += 3) {
        void *n = tenure_alloc(rt, node_t);
        arr = tenure_handle_get(rt, ha);
        tenure_write_ref(rt, arr, (void **)tenure_array_data(arr) + i, n);
    }
    tenure_handle *dep = tenure_handle_new_dependent(rt, tenure_handle_get(rt, t1), NULL);
    void *secondary = tree(rt, node_t, 3);
    tenure_handle_set_secondary(rt, dep, secondary);
    for (int i = 0; i < 10000; i++) /* garbage */
        tenure_alloc(rt, node_t);

    tenure_profiler_callbacks cb = {.root_references = on_roots};
    tenure_profiler *p = tenure_profiler_attach(rt, &cb, TENURE_PROFILE_GC, NULL);
    if (tenure_heap_dump(rt) != TENURE_OK)
        return 1;
    tenure_profiler_detach(rt, p);
    expect x = {rt, 0, 0, {0}, 0};
    tenure_heap_walk(rt, count_node, &x);
    printf("DUMP nodes=%zu edges=%zu roots=%zu types=%zu pairs=1\n", x.nodes, x.edges, roots_seen, x.type_count);
    for (size_t i = 0; i < x.type_count; i++)
        printf("TYPE %s\n", tenure_type_name(x.types[i]));
    tenure_handle_free(rt, dep);
    tenure_handle_free(rt, ha);
    tenure_handle_free(rt, t1);
    tenure_destroy(rt);
    return 0;
}
