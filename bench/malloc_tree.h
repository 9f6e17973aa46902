/* malloc_tree.h - the malloc/free peer's binary tree, shared by binary_trees.c and
 * threads_alloc.c: bottom-up construction, a node count, and freeing. Include it after the
 * benchmark's die(). */
#ifndef TENURE_BENCH_MALLOC_TREE_H
#define TENURE_BENCH_MALLOC_TREE_H

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

#endif
