/* vec.c - a growable array for the collector's scratch lists (mark stack, pins, gaps). */
#include "base/base.h"
#include <stdint.h>
#include <stdlib.h>

void tn_vec_init(tn_vec *v, size_t elem) {
    v->data = NULL;
    v->count = v->cap = 0;
    v->elem = elem;
}

bool tn_vec_reserve(tn_vec *v, size_t cap) {
    if (cap <= v->cap)
        return true;
    size_t n = v->cap ? v->cap : 64;
    while (n < cap && n <= SIZE_MAX / 2)
        n *= 2;
    if (n < cap || n > SIZE_MAX / v->elem)
        return false; /* the byte count would overflow */
    void *d = tn_realloc(v->data, n * v->elem);
    if (!d)
        return false;
    v->data = d;
    v->cap = n;
    return true;
}

void *tn_vec_push(tn_vec *v) {
    if (v->count == v->cap && !tn_vec_reserve(v, v->count + 1))
        return NULL;
    return tn_vec_at(v, v->count++);
}

void *tn_vec_push_reserved(tn_vec *v) { return v->count < v->cap ? tn_vec_at(v, v->count++) : NULL; }

void tn_vec_free(tn_vec *v) {
    free(v->data);
    tn_vec_init(v, v->elem);
}
