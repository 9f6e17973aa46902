/* peer_trees.h - the peers' binary trees, shared by binary_trees.c and threads_alloc.c:
 * bottom-up construction, a node count, and (malloc/free) freeing. Include it after the
 * benchmark's die() and, for the Boehm trees, after gc.h. */
#ifndef TENURE_BENCH_PEER_TREES_H
#define TENURE_BENCH_PEER_TREES_H

#include <stdlib.h>

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

static inline long m_check(const mnode *n) {
    return n->left == NULL ? 1 : 1 + m_check(n->left) + m_check(n->right);
}

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

static inline long b_check(const bnode *n) {
    return n->left == NULL ? 1 : 1 + b_check(n->left) + b_check(n->right);
}
#endif

#endif
