/* bench_trees.h - the binary trees of binary_trees.c and threads_alloc.c for tenure and its
 * peers: bottom-up construction, a node count, and (malloc/free) freeing. Include it after
 * tenure.h, the benchmark's die() and, for the Boehm trees, gc.h. */
#ifndef TENURE_BENCH_TREES_H
#define TENURE_BENCH_TREES_H

#include <stdio.h>
#include <stdlib.h>

/* tenure: 24-byte nodes (header and two references) */
typedef struct tnode {
    tenure_header header;
    struct tnode *left;
    struct tnode *right;
} tnode;

static inline tnode *t_alloc(tenure_runtime *rt, const tenure_type *type) {
    tnode *n = tenure_alloc(rt, type); /* zeroed: a leaf has both children NULL */
    if (n == NULL) {
        fprintf(stderr, "tenure_alloc failed: %s\n", tenure_strerror(tenure_last_error(rt)));
        exit(2);
    }
    return n;
}

/* The subtrees built first are rooted in the frame across the allocations that follow them
 * (which may collect and move them): they are re-read after every call that may allocate. */
static inline tnode *t_build(tenure_runtime *rt, const tenure_type *type, int depth) {
    if (depth == 0)
        return t_alloc(rt, type);
    tnode *left = NULL, *right = NULL, *node = NULL;
    TENURE_FRAME(rt, frame, left, right);
    left = t_build(rt, type, depth - 1);
    right = t_build(rt, type, depth - 1);
    node = t_alloc(rt, type); /* may move left and right: the frame updates them */
    tenure_write_ref(rt, node, &node->left, left);
    tenure_write_ref(rt, node, &node->right, right);
    TENURE_FRAME_POP(rt, frame);
    return node;
}

/* Does not allocate or call into the instance: no collection can move the tree meanwhile
 * (another thread's GC waits for this thread's next safepoint). */
static inline long t_check(const tnode *n) { return n->left == NULL ? 1 : 1 + t_check(n->left) + t_check(n->right); }

typedef struct mnode {
    struct mnode *left;
    struct mnode *right;
} mnode;

static inline mnode *m_node(mnode *left, mnode *right) {
    mnode *n = malloc(sizeof *n);
    if (n == NULL)
        die("malloc failed");
    n->left = left;
    n->right = right;
    return n;
}

static inline mnode *m_build(int depth) {
    if (depth == 0)
        return m_node(NULL, NULL);
    mnode *left = m_build(depth - 1);
    mnode *right = m_build(depth - 1);
    return m_node(left, right);
}

static inline long m_check(const mnode *n) { return n->left == NULL ? 1 : 1 + m_check(n->left) + m_check(n->right); }

static inline void m_free(mnode *n) {
    while (n != NULL) {
        mnode *right = n->right;
        m_free(n->left);
        free(n);
        n = right;
    }
}

#ifdef TENURE_BENCH_HAVE_BOEHM
typedef struct bnode {
    struct bnode *left;
    struct bnode *right;
} bnode;

static inline bnode *b_build(int depth) {
    bnode *n;
    if (depth == 0) {
        n = GC_MALLOC(sizeof *n); /* GC_MALLOC clears the object */
        if (n == NULL)
            die("GC_MALLOC failed");
        return n;
    }
    bnode *left = b_build(depth - 1);
    bnode *right = b_build(depth - 1);
    n = GC_MALLOC(sizeof *n);
    if (n == NULL)
        die("GC_MALLOC failed");
    n->left = left;
    n->right = right;
    return n;
}

static inline long b_check(const bnode *n) { return n->left == NULL ? 1 : 1 + b_check(n->left) + b_check(n->right); }
#endif

#endif
