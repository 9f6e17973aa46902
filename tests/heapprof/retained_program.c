/*
 * retained_program: a heap whose dominator tree is known, for check_retained.py. Precise roots
 * (GCConservativeStack=0, no shadow frame alive at the dump): only the handles below.
 *
 *   tree    a complete binary tree of 15 TreeNode (24 bytes) under a strong handle: the root
 *           retains 360 bytes; a weak handle to a leaf changes nothing
 *   shared  two Holder (24) under two strong handles, both referring to the head of a list of
 *           5 Shared (32): the head is dominated by neither holder, retains 160; holders 24
 *   cycle   CycleNode (40) c1 -> c2 -> c3 -> c1, c1 under a strong handle; a dependent handle
 *           with primary c2 keeps a Leaf (16) alive: c3 retains 40, c2 40+40+16 = 96, c1 136
 *   array   Blob[] (a reference array of 3: 40 bytes) under a strong handle, holding 3 Leaf:
 *           retains 88
 *
 * Usage: retained_program <json> [<table>]
 */
#include "heapprof.h"
#include "tenure.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct tree_node {
    tenure_header h;
    struct tree_node *left, *right;
} tree_node;
typedef struct holder {
    tenure_header h;
    void *ref;
    long pad;
} holder;
typedef struct shared {
    tenure_header h;
    struct shared *next;
    long x, y;
} shared;
typedef struct cycle_node {
    tenure_header h;
    struct cycle_node *next;
    long a, b, c;
} cycle_node;
typedef struct leaf {
    tenure_header h;
    long v;
} leaf;

static const tenure_type *reg(tenure_runtime *rt, const char *name, size_t size, const size_t *offs, size_t n) {
    tenure_type_desc d = {.name = name,
                          .size = size,
                          .ref_offsets = offs,
                          .ref_count = n,
                          .flags = n ? 0 : TENURE_TYPE_NO_REFS};
    const tenure_type *t = tenure_type_register(rt, &d);
    if (!t)
        exit(2);
    return t;
}

/* Objects are reached through handles only: a C local is never trusted across an allocation. */
static void *get(tenure_runtime *rt, tenure_handle *h) { return tenure_handle_get(rt, h); }
static tenure_handle *keep(tenure_runtime *rt, void *obj) { return tenure_handle_new(rt, TENURE_HANDLE_STRONG, obj); }

static tenure_handle *tree(tenure_runtime *rt, const tenure_type *t, int depth) {
    tenure_handle *n = keep(rt, tenure_alloc(rt, t));
    if (depth > 1) {
        tenure_handle *l = tree(rt, t, depth - 1), *r = tree(rt, t, depth - 1);
        tree_node *o = get(rt, n);
        tenure_write_ref(rt, o, &o->left, get(rt, l));
        tenure_write_ref(rt, o, &o->right, get(rt, r));
        tenure_handle_free(rt, l);
        tenure_handle_free(rt, r);
    }
    return n;
}

int main(int argc, char **argv) {
    if (argc < 2)
        return 2;
    tenure_config cfg;
    tenure_config_init(&cfg);
    tenure_config_from_env(&cfg);
    cfg.GCConservativeStack = 0;
    tenure_runtime *rt = tenure_create(&cfg, NULL);
    if (!rt)
        return 1;
    static const size_t tree_offs[] = {offsetof(tree_node, left), offsetof(tree_node, right)};
    static const size_t holder_offs[] = {offsetof(holder, ref)};
    static const size_t shared_offs[] = {offsetof(shared, next)};
    static const size_t cycle_offs[] = {offsetof(cycle_node, next)};
    const tenure_type *tree_t = reg(rt, "TreeNode", sizeof(tree_node), tree_offs, 2);
    const tenure_type *holder_t = reg(rt, "Holder", sizeof(holder), holder_offs, 1);
    const tenure_type *shared_t = reg(rt, "Shared", sizeof(shared), shared_offs, 1);
    const tenure_type *cycle_t = reg(rt, "CycleNode", sizeof(cycle_node), cycle_offs, 1);
    const tenure_type *leaf_t = reg(rt, "Leaf", sizeof(leaf), NULL, 0);
    tenure_type_desc ad = {.name = "Blob[]",
                           .elem_size = sizeof(void *),
                           .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_REF_ARRAY};
    const tenure_type *blob_t = tenure_type_register(rt, &ad);

    /* tree, and a weak handle to its leftmost leaf */
    tenure_handle *root = tree(rt, tree_t, 4);
    tree_node *leftmost = get(rt, root);
    while (leftmost->left)
        leftmost = leftmost->left;
    tenure_handle *weak = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, leftmost);

    /* shared list under two holders */
    tenure_handle *head = keep(rt, tenure_alloc(rt, shared_t));
    tenure_handle *tail = keep(rt, get(rt, head));
    for (int i = 1; i < 5; i++) {
        shared *s = tenure_alloc(rt, shared_t);
        shared *t = get(rt, tail);
        tenure_write_ref(rt, t, &t->next, s);
        tenure_handle_set(rt, tail, s);
    }
    tenure_handle_free(rt, tail);
    tenure_handle *h1 = keep(rt, tenure_alloc(rt, holder_t)), *h2 = keep(rt, tenure_alloc(rt, holder_t));
    holder *o1 = get(rt, h1), *o2 = get(rt, h2);
    tenure_write_ref(rt, o1, &o1->ref, get(rt, head));
    tenure_write_ref(rt, o2, &o2->ref, get(rt, head));
    tenure_handle_free(rt, head);

    /* the cycle, and a leaf kept by a dependent handle on c2 */
    tenure_handle *c[3];
    for (int i = 0; i < 3; i++)
        c[i] = keep(rt, tenure_alloc(rt, cycle_t));
    for (int i = 0; i < 3; i++) {
        cycle_node *x = get(rt, c[i]);
        tenure_write_ref(rt, x, &x->next, get(rt, c[(i + 1) % 3]));
    }
    tenure_handle *dep = tenure_handle_new_dependent(rt, get(rt, c[1]), NULL);
    tenure_handle_set_secondary(rt, dep, tenure_alloc(rt, leaf_t));
    tenure_handle_free(rt, c[1]);
    tenure_handle_free(rt, c[2]);

    /* the array of leaves */
    tenure_handle *blob = keep(rt, tenure_alloc_array(rt, blob_t, 3));
    for (int i = 0; i < 3; i++) {
        leaf *l = tenure_alloc(rt, leaf_t);
        void **e = tenure_array_data(get(rt, blob));
        tenure_write_ref(rt, get(rt, blob), &e[i], l);
    }
    for (int i = 0; i < 10000; i++) /* garbage: the dump's GC frees it */
        tenure_alloc(rt, leaf_t);

    int rc = tenure_heapprof_retained(rt, argv[1], argc > 2 ? argv[2] : NULL);
    tenure_handle *all[] = {root, weak, h1, h2, c[0], dep, blob};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        tenure_handle_free(rt, all[i]);
    tenure_destroy(rt);
    return rc == 0 ? 0 : 1;
}
