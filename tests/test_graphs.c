/*
 * graphs: object graphs of every shape survive hundreds of collections with their contents and
 * their sharing intact, whatever roots them, in the three compaction modes.
 *
 * Shapes (and the root that alone keeps each alive):
 *   singly linked list              STRONG handle
 *   doubly linked list              shadow frame (TENURE_FRAME)
 *   complete binary tree            root area
 *   DAG (grid, nodes shared by two paths)  root scanner
 *   ring (cycle) with self loops    STRONG handle
 *   REF_ARRAY with shared elements  root area
 *   array of structs with two reference fields (elem_ref_offsets)  shadow frame
 *   chain of objects traced by a callback (untraced slots hold junk that must stay as is)  root scanner
 *   large REF_ARRAY (LOH)           root area
 *   large fixed object with references (LOH)  STRONG handle
 *   pinned-heap node and pinned REF_ARRAY     shadow frame
 *   churn: short lists that live a few rounds, then die   root area
 * Every object has an id and a checksum of its id and the ids it references; the C side keeps
 * the expected ids. Every round allocates garbage (allocation-triggered GCs), mutates the
 * structures through the write barrier (old -> young references), sometimes induces a GC of a
 * random generation, then walks and checks everything.
 *
 * Modes: GCCompactMode=0 with TENURE_COLLECT_COMPACT in induced GCs, =1 (always compact),
 * =2 (always sweep: then nothing may ever move).
 */
#include "test_util.h"

#define BIG_SIZE 100000
#define BIG_REFS 3
#define LARGE_REFARRAY_LEN 12000 /* 96,016 bytes: LOH */
#define CHURN_SLOTS 64

typedef struct traced {
    tenure_header header;
    uint64_t n; /* slots [0, n) are references, the others hold junk */
    void *slot[4];
    uint64_t id;
} traced;

typedef struct elem {
    tt_node *r1;
    uint64_t v;
    tt_node *r2;
} elem;

typedef struct big {
    tenure_header header;
    char payload[BIG_SIZE - sizeof(tenure_header)];
} big;
static const size_t big_offsets[BIG_REFS] = {8, 50000, BIG_SIZE - 8};

typedef struct scan_roots {
    void *slots[2]; /* [0] grid, [1] traced chain */
} scan_roots;

typedef struct world {
    tenure_runtime *rt;
    tt_errlog log;
    int mode;
    const tenure_type *node_t, *refarr_t, *elemarr_t, *traced_t, *bytes_t, *big_t;
    uint64_t next_id;
    /* roots */
    tenure_handle *list_h, *ring_h, *big_h;
    void *area[3]; /* [0] tree, [1] ref array, [2] large ref array */
    tenure_root_area *area_h;
    void *churn[CHURN_SLOTS];
    tenure_root_area *churn_h;
    scan_roots scan;
    tenure_root_scanner *scanner;
    void **dlist, **sarr, **pin_node, **pin_arr; /* frame slots of run_mode */
    /* sizes and expected ids */
    size_t list_len, dlist_len, tree_n, grid_g, ring_len, refarr_len, refarr_pool, sarr_len, traced_len;
    uint64_t *list_ids, *dlist_ids, *tree_ids, *grid_ids, *ring_ids, *refarr_ids, *sarr_ids;
    uint64_t *traced_ids, (*traced_node_ids)[2], (*traced_junk)[4];
    uint64_t *large_ids, big_ids[BIG_REFS], pin_ids[2], pin_arr_ids[64];
    uint64_t churn_base[CHURN_SLOTS], churn_len[CHURN_SLOTS];
    /* bookkeeping */
    uintptr_t *list_addr; /* list node addresses before a GC (move detection) */
    uint64_t moved, induced, rounds;
    void **grid_addr;
} world;

static void scan_fn(tenure_runtime *rt, tenure_visitor *v, void *ctx) {
    (void)rt;
    scan_roots *s = (scan_roots *)ctx;
    for (size_t i = 0; i < 2; i++)
        if (s->slots[i] != NULL)
            tenure_visit(v, &s->slots[i]);
}

static void traced_trace(void *obj, tenure_visitor *v) {
    traced *t = (traced *)obj;
    for (uint64_t i = 0; i < t->n && i < 4; i++)
        if (t->slot[i] != NULL)
            tenure_visit(v, &t->slot[i]);
}

static tt_node *new_node(world *w) { return tt_node_new(w->rt, w->node_t, ++w->next_id); }

static void *new_array(world *w, const tenure_type *t, size_t len) {
    void *a = tenure_alloc_array(w->rt, t, len);
    TT_CHECK(a != NULL, "tenure_alloc_array(%zu) failed", len);
    TT_CHECK(tenure_array_length(a) == len);
    return a;
}

static void register_types(world *w) {
    tenure_runtime *rt = w->rt;
    w->node_t = tt_register_node(rt);
    w->refarr_t = tt_register_ref_array(rt);
    w->bytes_t = tt_register_bytes(rt);
    static const size_t elem_offs[] = {offsetof(elem, r1), offsetof(elem, r2)};
    w->elemarr_t = tt_register_struct_array(rt, "elem_array", sizeof(elem), elem_offs, 2);
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = "traced";
    d.size = sizeof(traced);
    d.trace = traced_trace;
    w->traced_t = tenure_type_register(rt, &d);
    TT_CHECK(w->traced_t != NULL);

    memset(&d, 0, sizeof d);
    d.name = "big";
    d.size = sizeof(big);
    d.ref_offsets = big_offsets;
    d.ref_count = BIG_REFS;
    w->big_t = tenure_type_register(rt, &d);
    TT_CHECK(w->big_t != NULL);
    TT_CHECK(strcmp(tenure_type_name(w->big_t), "big") == 0);
}

/* ---------------------------------------------------------------- singly linked list */
static void build_list(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *head = NULL, *n = NULL;
    TENURE_FRAME(rt, f, head, n);
    for (size_t i = w->list_len; i-- > 0;) {
        n = new_node(w);
        tenure_write_ref(rt, n, &n->a, head);
        tt_node_seal(n);
        w->list_ids[i] = n->id;
        head = n;
    }
    w->list_h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, head);
    TT_CHECK(w->list_h != NULL);
    TENURE_FRAME_POP(rt, f);
}

static void check_list(world *w) {
    tt_node *n = (tt_node *)tenure_handle_get(w->rt, w->list_h);
    for (size_t i = 0; i < w->list_len; i++) {
        TT_CHECK_NODE(w->rt, w->node_t, n, w->list_ids[i]);
        n = n->a;
    }
    TT_CHECK(n == NULL, "list longer than %zu", w->list_len);
}

static void record_list_addresses(world *w) {
    tt_node *n = (tt_node *)tenure_handle_get(w->rt, w->list_h);
    for (size_t i = 0; i < w->list_len; i++, n = n->a)
        w->list_addr[i] = (uintptr_t)n;
}

static uint64_t count_list_moves(world *w) {
    uint64_t moved = 0;
    tt_node *n = (tt_node *)tenure_handle_get(w->rt, w->list_h);
    for (size_t i = 0; i < w->list_len; i++, n = n->a)
        if (w->list_addr[i] != 0 && w->list_addr[i] != (uintptr_t)n)
            moved++;
    return moved;
}

static void mutate_list(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, nn);
    nn = new_node(w);
    size_t i = (size_t)tt_rand_range(1, w->list_len - 1);
    tt_node *prev = (tt_node *)tenure_handle_get(rt, w->list_h);
    for (size_t k = 1; k < i; k++)
        prev = prev->a;
    tt_node *old = prev->a;
    tenure_write_ref(rt, nn, &nn->a, old->a);
    tt_node_seal(nn);
    tenure_write_ref(rt, prev, &prev->a, nn);
    tt_node_seal(prev);
    w->list_ids[i] = nn->id;
    w->list_addr[i] = 0; /* a new node: not a move */
    TENURE_FRAME_POP(rt, f);
}

/* ---------------------------------------------------------------- doubly linked list */
static void build_dlist(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *n = NULL;
    TENURE_FRAME(rt, f, n);
    *w->dlist = NULL;
    for (size_t i = w->dlist_len; i-- > 0;) {
        n = new_node(w);
        tt_node *head = (tt_node *)*w->dlist;
        tenure_write_ref(rt, n, &n->a, head);
        if (head != NULL) {
            tenure_write_ref(rt, head, &head->b, n);
            tt_node_seal(head);
        }
        tt_node_seal(n);
        w->dlist_ids[i] = n->id;
        *w->dlist = n;
    }
    TENURE_FRAME_POP(rt, f);
}

static void check_dlist(world *w) {
    tt_node *n = (tt_node *)*w->dlist, *prev = NULL;
    for (size_t i = 0; i < w->dlist_len; i++) {
        TT_CHECK_NODE(w->rt, w->node_t, n, w->dlist_ids[i]);
        TT_CHECK(n->b == prev, "dlist node %zu: prev link broken", i);
        prev = n;
        n = n->a;
    }
    TT_CHECK(n == NULL);
}

static void mutate_dlist(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, nn);
    nn = new_node(w);
    size_t i = (size_t)tt_rand_range(1, w->dlist_len - 1);
    tt_node *prev = (tt_node *)*w->dlist;
    for (size_t k = 1; k < i; k++)
        prev = prev->a;
    tt_node *old = prev->a, *next = old->a;
    tenure_write_ref(rt, nn, &nn->a, next);
    tenure_write_ref(rt, nn, &nn->b, prev);
    tt_node_seal(nn);
    tenure_write_ref(rt, prev, &prev->a, nn);
    tt_node_seal(prev);
    if (next != NULL) {
        tenure_write_ref(rt, next, &next->b, nn);
        tt_node_seal(next);
    }
    w->dlist_ids[i] = nn->id;
    TENURE_FRAME_POP(rt, f);
}

/* ---------------------------------------------------------------- binary tree (heap order) */
static void build_tree(world *w) {
    tenure_runtime *rt = w->rt;
    size_t n = w->tree_n;
    void *tmp = NULL;
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, tmp, nn);
    tmp = new_array(w, w->refarr_t, n + 1);
    for (size_t k = 1; k <= n; k++) {
        nn = new_node(w);
        w->tree_ids[k] = nn->id;
        tenure_write_ref(rt, tmp, &tt_refs(tmp)[k], nn);
    }
    void **nodes = tt_refs(tmp);
    for (size_t k = n; k >= 1; k--) {
        tt_node *p = (tt_node *)nodes[k];
        if (2 * k <= n)
            tenure_write_ref(rt, p, &p->a, nodes[2 * k]);
        if (2 * k + 1 <= n)
            tenure_write_ref(rt, p, &p->b, nodes[2 * k + 1]);
        tt_node_seal(p);
    }
    w->area[0] = nodes[1];
    TENURE_FRAME_POP(rt, f);
}

static void check_tree(world *w) {
    size_t n = w->tree_n, top = 0;
    struct item {
        tt_node *p;
        size_t k;
    } *stack = malloc(sizeof(struct item) * (n + 1));
    TT_CHECK(stack != NULL);
    stack[top++] = (struct item){(tt_node *)w->area[0], 1};
    size_t seen = 0;
    while (top > 0) {
        struct item it = stack[--top];
        TT_CHECK_NODE(w->rt, w->node_t, it.p, w->tree_ids[it.k]);
        seen++;
        if (2 * it.k <= n)
            stack[top++] = (struct item){it.p->a, 2 * it.k};
        else
            TT_CHECK(it.p->a == NULL);
        if (2 * it.k + 1 <= n)
            stack[top++] = (struct item){it.p->b, 2 * it.k + 1};
        else
            TT_CHECK(it.p->b == NULL);
    }
    TT_CHECK(seen == n);
    free(stack);
}

static tt_node *tree_at(world *w, size_t k) {
    int bits = 0;
    while ((k >> bits) > 1)
        bits++;
    tt_node *p = (tt_node *)w->area[0];
    for (int b = bits - 1; b >= 0; b--)
        p = ((k >> b) & 1) ? p->b : p->a;
    return p;
}

static void mutate_tree(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, nn);
    nn = new_node(w);
    size_t k = (size_t)tt_rand_range(2, w->tree_n);
    tt_node *parent = tree_at(w, k / 2);
    tt_node *old = (k & 1) ? parent->b : parent->a;
    tenure_write_ref(rt, nn, &nn->a, old->a);
    tenure_write_ref(rt, nn, &nn->b, old->b);
    tt_node_seal(nn);
    if (k & 1)
        tenure_write_ref(rt, parent, &parent->b, nn);
    else
        tenure_write_ref(rt, parent, &parent->a, nn);
    tt_node_seal(parent);
    w->tree_ids[k] = nn->id;
    TENURE_FRAME_POP(rt, f);
}

/* ---------------------------------------------------------------- grid DAG */
static void build_grid(world *w) {
    tenure_runtime *rt = w->rt;
    size_t g = w->grid_g;
    void *tmp = NULL;
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, tmp, nn);
    tmp = new_array(w, w->refarr_t, g * g);
    for (size_t k = 0; k < g * g; k++) {
        nn = new_node(w);
        w->grid_ids[k] = nn->id;
        tenure_write_ref(rt, tmp, &tt_refs(tmp)[k], nn);
    }
    void **nodes = tt_refs(tmp);
    for (size_t i = 0; i < g; i++)
        for (size_t j = 0; j < g; j++) {
            tt_node *p = (tt_node *)nodes[i * g + j];
            if (i + 1 < g)
                tenure_write_ref(rt, p, &p->a, nodes[(i + 1) * g + j]);
            if (j + 1 < g)
                tenure_write_ref(rt, p, &p->b, nodes[i * g + j + 1]);
        }
    for (size_t k = 0; k < g * g; k++)
        tt_node_seal((tt_node *)nodes[k]);
    w->scan.slots[0] = nodes[0];
    TENURE_FRAME_POP(rt, f);
}

static void check_grid(world *w) {
    size_t g = w->grid_g;
    tt_node *row = (tt_node *)w->scan.slots[0];
    for (size_t i = 0; i < g; i++) {
        tt_node *p = row;
        for (size_t j = 0; j < g; j++) {
            TT_CHECK(p != NULL, "grid (%zu,%zu) missing", i, j);
            w->grid_addr[i * g + j] = p;
            p = p->b;
        }
        TT_CHECK(p == NULL);
        row = row->a;
    }
    TT_CHECK(row == NULL);
    for (size_t i = 0; i < g; i++)
        for (size_t j = 0; j < g; j++) {
            tt_node *p = (tt_node *)w->grid_addr[i * g + j];
            TT_CHECK_NODE(w->rt, w->node_t, p, w->grid_ids[i * g + j]);
            /* the node below reached by another path must be the very same object */
            TT_CHECK(p->a == (i + 1 < g ? w->grid_addr[(i + 1) * g + j] : NULL),
                     "grid (%zu,%zu): shared node duplicated or lost", i, j);
        }
}

/* ---------------------------------------------------------------- ring with self loops */
static void build_ring(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *first = NULL, *last = NULL, *n = NULL;
    TENURE_FRAME(rt, f, first, last, n);
    for (size_t i = 0; i < w->ring_len; i++) {
        n = new_node(w);
        w->ring_ids[i] = n->id;
        if (i % 3 == 0)
            tenure_write_ref(rt, n, &n->b, n);
        if (last != NULL) {
            tenure_write_ref(rt, last, &last->a, n);
            tt_node_seal(last);
        } else {
            first = n;
        }
        last = n;
    }
    tenure_write_ref(rt, last, &last->a, first);
    tt_node_seal(last);
    tt_node_seal(first);
    w->ring_h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, first);
    TT_CHECK(w->ring_h != NULL);
    TENURE_FRAME_POP(rt, f);
}

static void check_ring(world *w) {
    tt_node *first = (tt_node *)tenure_handle_get(w->rt, w->ring_h), *n = first;
    for (size_t i = 0; i < w->ring_len; i++) {
        TT_CHECK_NODE(w->rt, w->node_t, n, w->ring_ids[i]);
        TT_CHECK(n->b == (i % 3 == 0 ? n : NULL), "ring node %zu: self loop broken", i);
        n = n->a;
    }
    TT_CHECK(n == first, "ring does not close");
}

/* ---------------------------------------------------------------- REF_ARRAY with sharing */
static size_t refarr_pool_of(world *w, size_t i) { return (i * 7) % w->refarr_pool; }

static void build_refarr(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, nn);
    w->area[1] = new_array(w, w->refarr_t, w->refarr_len);
    for (size_t i = 0; i < w->refarr_len; i++) {
        w->refarr_ids[i] = 0;
        if (i % 11 == 0)
            continue;
        size_t p = refarr_pool_of(w, i), first = SIZE_MAX;
        for (size_t j = 0; j < i; j++)
            if (j % 11 != 0 && refarr_pool_of(w, j) == p) {
                first = j;
                break;
            }
        if (first == SIZE_MAX) {
            nn = new_node(w);
        } else {
            nn = (tt_node *)tt_refs(w->area[1])[first];
        }
        tenure_write_ref(rt, w->area[1], &tt_refs(w->area[1])[i], nn);
        w->refarr_ids[i] = nn->id;
    }
    TENURE_FRAME_POP(rt, f);
}

static void check_refarr(world *w) {
    void *arr = w->area[1];
    TT_CHECK(tenure_object_type(w->rt, arr) == w->refarr_t);
    TT_CHECK(tenure_array_length(arr) == w->refarr_len);
    void **e = tt_refs(arr);
    void **canon = calloc(w->refarr_pool, sizeof(void *));
    TT_CHECK(canon != NULL);
    for (size_t i = 0; i < w->refarr_len; i++) {
        if (i % 11 == 0) {
            TT_CHECK(e[i] == NULL);
            continue;
        }
        TT_CHECK_NODE(w->rt, w->node_t, e[i], w->refarr_ids[i]);
        size_t p = refarr_pool_of(w, i);
        if (canon[p] == NULL)
            canon[p] = e[i];
        TT_CHECK(canon[p] == e[i], "ref array: element %zu no longer shares its node", i);
    }
    free(canon);
}

static void mutate_refarr(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, nn);
    nn = new_node(w);
    size_t p = (size_t)tt_rand_below(w->refarr_pool);
    for (size_t i = 0; i < w->refarr_len; i++) {
        if (i % 11 == 0 || refarr_pool_of(w, i) != p)
            continue;
        tenure_write_ref(rt, w->area[1], &tt_refs(w->area[1])[i], nn);
        w->refarr_ids[i] = nn->id;
    }
    TENURE_FRAME_POP(rt, f);
}

/* ---------------------------------------------------------------- array of structs */
static uint64_t elem_tag(size_t i) { return tt_mix64(i + 99); }

static void build_sarr(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, nn);
    *w->sarr = new_array(w, w->elemarr_t, w->sarr_len);
    for (size_t i = 0; i < w->sarr_len; i++) {
        nn = new_node(w);
        elem *e = (elem *)tenure_array_data(*w->sarr);
        tenure_write_ref(rt, *w->sarr, &e[i].r1, nn);
        e[i].v = elem_tag(i);
        w->sarr_ids[i] = nn->id;
        if (i % 3 != 0)
            tenure_write_ref(rt, *w->sarr, &e[i].r2, e[i / 2].r1);
    }
    TENURE_FRAME_POP(rt, f);
}

static void check_sarr(world *w) {
    void *arr = *w->sarr;
    TT_CHECK(tenure_object_type(w->rt, arr) == w->elemarr_t);
    TT_CHECK(tenure_array_length(arr) == w->sarr_len);
    elem *e = (elem *)tenure_array_data(arr);
    for (size_t i = 0; i < w->sarr_len; i++) {
        TT_CHECK_NODE(w->rt, w->node_t, e[i].r1, w->sarr_ids[i]);
        TT_CHECK(e[i].v == elem_tag(i), "struct array element %zu: data changed", i);
        TT_CHECK(e[i].r2 == (i % 3 != 0 ? e[i / 2].r1 : NULL), "struct array element %zu: second reference broken", i);
    }
}

static void mutate_sarr(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, nn);
    nn = new_node(w);
    size_t k = (size_t)tt_rand_below(w->sarr_len);
    elem *e = (elem *)tenure_array_data(*w->sarr);
    tenure_write_ref(rt, *w->sarr, &e[k].r1, nn);
    w->sarr_ids[k] = nn->id;
    for (size_t j = 2 * k; j <= 2 * k + 1 && j < w->sarr_len; j++)
        if (j % 3 != 0)
            tenure_write_ref(rt, *w->sarr, &e[j].r2, nn);
    if (k % 3 != 0)
        tenure_write_ref(rt, *w->sarr, &e[k].r2, e[k / 2].r1);
    TENURE_FRAME_POP(rt, f);
}

/* ---------------------------------------------------------------- traced chain */
static void build_traced(world *w) {
    tenure_runtime *rt = w->rt;
    traced *head = NULL, *t = NULL;
    tt_node *n1 = NULL, *n2 = NULL;
    TENURE_FRAME(rt, f, head, t, n1, n2);
    for (size_t i = w->traced_len; i-- > 0;) {
        n1 = new_node(w);
        n2 = new_node(w);
        t = (traced *)tenure_alloc(rt, w->traced_t);
        TT_CHECK(t != NULL);
        t->id = ++w->next_id;
        t->n = 1 + (i % 3);
        w->traced_ids[i] = t->id;
        tenure_write_ref(rt, t, &t->slot[0], head);
        w->traced_node_ids[i][0] = w->traced_node_ids[i][1] = 0;
        if (t->n >= 2) {
            tenure_write_ref(rt, t, &t->slot[1], n1);
            w->traced_node_ids[i][0] = n1->id;
        }
        if (t->n >= 3) {
            tenure_write_ref(rt, t, &t->slot[2], n2);
            w->traced_node_ids[i][1] = n2->id;
        }
        for (uint64_t s = t->n; s < 4; s++) {
            /* junk the collector must leave alone: odd numbers, and (slot 3) the raw address
             * of a node that will be garbage */
            uint64_t junk = (s == 3 && i % 2 == 0) ? (uint64_t)(uintptr_t)n2 : (tt_mix64(t->id + s) | 1);
            t->slot[s] = (void *)(uintptr_t)junk;
        }
        for (int s = 0; s < 4; s++)
            w->traced_junk[i][s] = (uint64_t)(uintptr_t)t->slot[s];
        head = t;
    }
    w->scan.slots[1] = head;
    TENURE_FRAME_POP(rt, f);
}

static void check_traced(world *w) {
    traced *t = (traced *)w->scan.slots[1];
    for (size_t i = 0; i < w->traced_len; i++) {
        TT_CHECK(t != NULL && tenure_is_object(w->rt, t), "traced chain broken at %zu", i);
        TT_CHECK(tenure_object_type(w->rt, t) == w->traced_t);
        TT_CHECK(t->id == w->traced_ids[i], "traced %zu: id %" PRIu64, i, t->id);
        TT_CHECK(t->n == 1 + (i % 3));
        if (t->n >= 2)
            TT_CHECK_NODE(w->rt, w->node_t, t->slot[1], w->traced_node_ids[i][0]);
        if (t->n >= 3)
            TT_CHECK_NODE(w->rt, w->node_t, t->slot[2], w->traced_node_ids[i][1]);
        for (uint64_t s = t->n; s < 4; s++)
            TT_CHECK((uint64_t)(uintptr_t)t->slot[s] == w->traced_junk[i][s],
                     "traced %zu: untraced slot %" PRIu64 " was modified by the collector", i, s);
        t = (traced *)t->slot[0];
    }
    TT_CHECK(t == NULL);
}

static void mutate_traced(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, nn);
    nn = new_node(w);
    size_t i = (size_t)tt_rand_below(w->traced_len);
    i -= i % 3;
    i += 2; /* n == 3 */
    if (i < w->traced_len) {
        traced *t = (traced *)w->scan.slots[1];
        for (size_t k = 0; k < i; k++)
            t = (traced *)t->slot[0];
        size_t s = 1 + (size_t)tt_rand_below(2);
        tenure_write_ref(rt, t, &t->slot[s], nn);
        w->traced_node_ids[i][s - 1] = nn->id;
    }
    TENURE_FRAME_POP(rt, f);
}

/* ---------------------------------------------------------------- large objects */
static void build_large(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *nn = NULL;
    big *b = NULL;
    TENURE_FRAME(rt, f, nn, b);
    w->area[2] = new_array(w, w->refarr_t, LARGE_REFARRAY_LEN);
    TT_CHECK(tenure_object_generation(rt, w->area[2]) == 3, "a %d-byte array is not in the LOH",
             (int)(sizeof(tenure_array_header) + LARGE_REFARRAY_LEN * sizeof(void *)));
    for (size_t i = 0; i < LARGE_REFARRAY_LEN; i++) {
        w->large_ids[i] = 0;
        if (i % 16 != 0)
            continue;
        nn = new_node(w);
        tenure_write_ref(rt, w->area[2], &tt_refs(w->area[2])[i], nn);
        w->large_ids[i] = nn->id;
    }
    b = (big *)tenure_alloc(rt, w->big_t);
    TT_CHECK(b != NULL);
    TT_CHECK(tenure_object_generation(rt, b) == 3);
    TT_CHECK(tenure_object_size(rt, b) == sizeof(big));
    for (size_t k = 0; k < BIG_REFS; k++) {
        nn = new_node(w);
        tenure_write_ref(rt, b, (char *)b + big_offsets[k], nn);
        w->big_ids[k] = nn->id;
    }
    for (size_t k = 0; k < 64; k++)
        b->payload[1000 + k] = (char)k;
    w->big_h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, b);
    TT_CHECK(w->big_h != NULL);
    TENURE_FRAME_POP(rt, f);
}

static void check_large(world *w) {
    TT_CHECK(tenure_object_generation(w->rt, w->area[2]) == 3);
    TT_CHECK(tenure_array_length(w->area[2]) == LARGE_REFARRAY_LEN);
    void **e = tt_refs(w->area[2]);
    for (size_t i = 0; i < LARGE_REFARRAY_LEN; i++) {
        if (w->large_ids[i] == 0)
            TT_CHECK(e[i] == NULL);
        else
            TT_CHECK_NODE(w->rt, w->node_t, e[i], w->large_ids[i]);
    }
    big *b = (big *)tenure_handle_get(w->rt, w->big_h);
    TT_CHECK(b != NULL && tenure_object_generation(w->rt, b) == 3);
    for (size_t k = 0; k < BIG_REFS; k++)
        TT_CHECK_NODE(w->rt, w->node_t, *(void **)((char *)b + big_offsets[k]), w->big_ids[k]);
    for (size_t k = 0; k < 64; k++)
        TT_CHECK(b->payload[1000 + k] == (char)k);
}

static void mutate_large(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, nn);
    nn = new_node(w);
    size_t i = (size_t)tt_rand_below(LARGE_REFARRAY_LEN);
    tenure_write_ref(rt, w->area[2], &tt_refs(w->area[2])[i], nn);
    w->large_ids[i] = nn->id;
    nn = new_node(w);
    size_t k = (size_t)tt_rand_below(BIG_REFS);
    big *b = (big *)tenure_handle_get(rt, w->big_h);
    tenure_write_ref(rt, b, (char *)b + big_offsets[k], nn);
    w->big_ids[k] = nn->id;
    TENURE_FRAME_POP(rt, f);
}

/* ---------------------------------------------------------------- pinned heap */
static uintptr_t pin_node_addr, pin_arr_addr;

static void build_pinned(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, nn);
    *w->pin_node = tenure_alloc_pinned(rt, w->node_t);
    TT_CHECK(*w->pin_node != NULL);
    ((tt_node *)*w->pin_node)->id = ++w->next_id;
    tt_node_seal((tt_node *)*w->pin_node);
    *w->pin_arr = tenure_alloc_array_pinned(rt, w->refarr_t, 64);
    TT_CHECK(*w->pin_arr != NULL && tenure_array_length(*w->pin_arr) == 64);
    for (int k = 0; k < 2; k++) {
        nn = new_node(w);
        tt_node *p = (tt_node *)*w->pin_node;
        tenure_write_ref(rt, p, k ? (void *)&p->b : (void *)&p->a, nn);
        tt_node_seal(p);
        w->pin_ids[k] = nn->id;
    }
    for (size_t k = 0; k < 64; k++) {
        nn = new_node(w);
        tenure_write_ref(rt, *w->pin_arr, &tt_refs(*w->pin_arr)[k], nn);
        w->pin_arr_ids[k] = nn->id;
    }
    pin_node_addr = (uintptr_t)*w->pin_node;
    pin_arr_addr = (uintptr_t)*w->pin_arr;
    TENURE_FRAME_POP(rt, f);
}

static void check_pinned(world *w) {
    tt_node *p = (tt_node *)*w->pin_node;
    TT_CHECK((uintptr_t)p == pin_node_addr, "pinned-heap node moved");
    TT_CHECK((uintptr_t)*w->pin_arr == pin_arr_addr, "pinned-heap array moved");
    TT_CHECK(tenure_object_generation(w->rt, p) == 4);
    TT_CHECK(tenure_object_generation(w->rt, *w->pin_arr) == 4);
    TT_CHECK(p->check == tt_node_sum(p));
    TT_CHECK_NODE(w->rt, w->node_t, p->a, w->pin_ids[0]);
    TT_CHECK_NODE(w->rt, w->node_t, p->b, w->pin_ids[1]);
    for (size_t k = 0; k < 64; k++)
        TT_CHECK_NODE(w->rt, w->node_t, tt_refs(*w->pin_arr)[k], w->pin_arr_ids[k]);
}

static void mutate_pinned(world *w) {
    tenure_runtime *rt = w->rt;
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, nn);
    nn = new_node(w);
    size_t k = (size_t)tt_rand_below(64);
    tenure_write_ref(rt, *w->pin_arr, &tt_refs(*w->pin_arr)[k], nn);
    w->pin_arr_ids[k] = nn->id;
    nn = new_node(w);
    tt_node *p = (tt_node *)*w->pin_node;
    tenure_write_ref(rt, p, &p->a, nn);
    tt_node_seal(p);
    w->pin_ids[0] = nn->id;
    TENURE_FRAME_POP(rt, f);
}

/* ---------------------------------------------------------------- churn */
static void churn_replace(world *w, size_t slot) {
    tenure_runtime *rt = w->rt;
    size_t len = (size_t)tt_rand_range(1, 20);
    uint64_t base = w->next_id + 1;
    w->next_id += len;
    tt_node *head = NULL, *n = NULL;
    TENURE_FRAME(rt, f, head, n);
    for (size_t k = len; k-- > 0;) {
        n = tt_node_new(rt, w->node_t, base + k);
        tenure_write_ref(rt, n, &n->a, head);
        tt_node_seal(n);
        head = n;
    }
    w->churn[slot] = head;
    w->churn_base[slot] = base;
    w->churn_len[slot] = len;
    TENURE_FRAME_POP(rt, f);
}

static void check_churn(world *w) {
    for (size_t s = 0; s < CHURN_SLOTS; s++) {
        tt_node *n = (tt_node *)w->churn[s];
        for (uint64_t k = 0; k < w->churn_len[s]; k++) {
            TT_CHECK_NODE(w->rt, w->node_t, n, w->churn_base[s] + k);
            n = n->a;
        }
        TT_CHECK(n == NULL);
    }
}

/* ---------------------------------------------------------------- garbage */
static void make_garbage(world *w, size_t count) {
    tenure_runtime *rt = w->rt;
    tt_node *prev = NULL, *n = NULL;
    void *arr = NULL;
    TENURE_FRAME(rt, f, prev, n, arr);
    for (size_t i = 0; i < count; i++) {
        uint64_t r = tt_rand_below(1000);
        if (r < 600) {
            n = new_node(w);
            if (prev != NULL && (r & 1)) {
                tenure_write_ref(rt, n, &n->a, prev);
                tt_node_seal(n);
            }
            prev = n;
        } else if (r < 800) {
            arr = new_array(w, w->bytes_t, (size_t)tt_rand_below(2000));
            memset(tenure_array_data(arr), 0xee, tenure_array_length(arr));
        } else if (r < 998) {
            arr = new_array(w, w->refarr_t, (size_t)tt_rand_below(40));
            if (tenure_array_length(arr) > 0 && prev != NULL)
                tenure_write_ref(rt, arr, &tt_refs(arr)[0], prev);
        } else {
            arr = new_array(w, w->bytes_t, (size_t)tt_rand_range(85000, 200000));
            TT_CHECK(tenure_object_generation(rt, arr) == 3);
        }
        if (tt_rand_below(50) == 0)
            prev = NULL;
    }
    TENURE_FRAME_POP(rt, f);
}

/* ---------------------------------------------------------------- driver */
static void check_all(world *w) {
    check_list(w);
    check_dlist(w);
    check_tree(w);
    check_grid(w);
    check_ring(w);
    check_refarr(w);
    check_sarr(w);
    check_traced(w);
    check_large(w);
    check_pinned(w);
    check_churn(w);
}

#define ALLOC_IDS(field, n) TT_CHECK((w->field = calloc((n) + 1, sizeof *w->field)) != NULL)

static void run_mode(int mode) {
    double t0 = tt_now();
    world *w = calloc(1, sizeof *w);
    TT_CHECK(w != NULL);
    w->mode = mode;
    w->log.fatal = 1;
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCCompactMode = (uint32_t)mode;
    if (mode != 0 && getenv("TENURE_GCgen0size") == NULL)
        cfg.GCgen0size = (4u << 20) / tt_heaps(&cfg); /* 4 MiB in all (per heap under server GC) */
    w->rt = tt_create(&cfg, &w->log);
    tenure_runtime *rt = w->rt;
    register_types(w);

    w->list_len = tt_scaled(5000, 100);
    w->dlist_len = tt_scaled(3000, 100);
    w->tree_n = tt_scale() < 0.5 ? 1023 : 4095;
    w->grid_g = tt_scale() < 0.5 ? 12 : 40;
    w->ring_len = tt_scaled(1000, 50);
    w->refarr_len = tt_scaled(3000, 200);
    w->refarr_pool = w->refarr_len / 5;
    w->sarr_len = tt_scaled(1000, 60);
    w->traced_len = tt_scaled(600, 30);
    ALLOC_IDS(list_ids, w->list_len);
    ALLOC_IDS(list_addr, w->list_len);
    ALLOC_IDS(dlist_ids, w->dlist_len);
    ALLOC_IDS(tree_ids, w->tree_n);
    ALLOC_IDS(grid_ids, w->grid_g * w->grid_g);
    ALLOC_IDS(grid_addr, w->grid_g * w->grid_g);
    ALLOC_IDS(ring_ids, w->ring_len);
    ALLOC_IDS(refarr_ids, w->refarr_len);
    ALLOC_IDS(sarr_ids, w->sarr_len);
    ALLOC_IDS(traced_ids, w->traced_len);
    ALLOC_IDS(traced_node_ids, w->traced_len);
    ALLOC_IDS(traced_junk, w->traced_len);
    ALLOC_IDS(large_ids, LARGE_REFARRAY_LEN);

    void *dlist = NULL, *sarr = NULL, *pin_node = NULL, *pin_arr = NULL;
    TENURE_FRAME(rt, frame, dlist, sarr, pin_node, pin_arr);
    w->dlist = &dlist;
    w->sarr = &sarr;
    w->pin_node = &pin_node;
    w->pin_arr = &pin_arr;
    w->area_h = tenure_root_area_add(rt, w->area, 3);
    TT_CHECK(w->area_h != NULL);
    w->churn_h = tenure_root_area_add(rt, w->churn, CHURN_SLOTS);
    TT_CHECK(w->churn_h != NULL);
    w->scanner = tenure_root_scanner_add(rt, scan_fn, &w->scan);
    TT_CHECK(w->scanner != NULL);

    build_list(w);
    build_dlist(w);
    build_tree(w);
    build_grid(w);
    build_ring(w);
    build_refarr(w);
    build_sarr(w);
    build_traced(w);
    build_large(w);
    build_pinned(w);
    for (size_t s = 0; s < CHURN_SLOTS; s++)
        churn_replace(w, s);
    check_all(w);
    tt_collect(rt, -1, 0);
    w->induced++;
    check_all(w);

    size_t rounds = tt_scaled(300, 40);
    size_t garbage = tt_scaled(3000, 300);
    unsigned compact_flag = mode == 2 ? 0u : (unsigned)TENURE_COLLECT_COMPACT;
    for (size_t round = 0; round < rounds; round++) {
        record_list_addresses(w);
        make_garbage(w, garbage);
        switch (tt_rand_below(8)) {
        case 0:
            mutate_list(w);
            mutate_dlist(w);
            break;
        case 1:
            mutate_tree(w);
            mutate_refarr(w);
            break;
        case 2:
            mutate_sarr(w);
            mutate_traced(w);
            break;
        case 3:
            mutate_large(w);
            mutate_pinned(w);
            break;
        default: break;
        }
        for (int k = 0; k < 4; k++)
            churn_replace(w, (size_t)tt_rand_below(CHURN_SLOTS));
        make_garbage(w, garbage / 4);
        uint64_t g = tt_rand_below(10);
        if (g < 2) {
            tt_collect(rt, 0, 0);
            w->induced++;
        } else if (g < 3) {
            tt_collect(rt, 1, 0);
            w->induced++;
        } else if (g < 4) {
            tt_collect(rt, -1, compact_flag);
            w->induced++;
        } else if (g < 5) {
            tt_collect(rt, 2, 0);
            w->induced++;
        }
        uint64_t moved = count_list_moves(w);
        if (mode == 2)
            TT_CHECK(moved == 0, "mode 2 (always sweep): %" PRIu64 " list nodes moved in round %zu", moved, round);
        w->moved += moved;
        check_all(w);
        if (round % 25 == 0)
            TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    }

    if (mode == 1 && w->moved == 0) {
        /* the random rounds made no hole below a list node (a seed with few list mutations, a
         * short stress run): make some, then a full compacting GC must slide nodes down */
        record_list_addresses(w);
        for (int k = 0; k < 8; k++)
            mutate_list(w);
        tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
        w->induced++;
        w->moved += count_list_moves(w);
        check_all(w);
    }
    tenure_stats s = tt_stats(rt);
    printf("  mode %d: %zu rounds, %" PRIu64 " GCs (%" PRIu64 " induced, %" PRIu64 " compacting, %" PRIu64
           " sweeping), %" PRIu64 " list-node moves, live %" PRIu64 " KiB, heap %" PRIu64 " KiB, %.2f s\n",
           mode, rounds, s.gc_count, w->induced, s.compacting_gcs, s.sweeping_gcs, w->moved,
           s.live_bytes_after_gc >> 10, s.heap_bytes >> 10, tt_now() - t0);
    TT_CHECK(s.gc_count >= w->induced);
    if (mode != 0)
        TT_CHECK(s.gc_count > w->induced, "no allocation-triggered GC happened (gen0size 4 MiB in all)");
    if (mode == 0)
        TT_CHECK(s.compacting_gcs > 0, "TENURE_COLLECT_COMPACT never compacted");
    if (mode == 1) {
        TT_CHECK(s.sweeping_gcs == 0, "GCCompactMode=1 swept %" PRIu64 " times", s.sweeping_gcs);
        TT_CHECK(s.compacting_gcs > 0);
        TT_CHECK(w->moved > 0, "always-compact mode never moved a list node");
    }
    if (mode == 2) {
        TT_CHECK(s.compacting_gcs == 0, "GCCompactMode=2 compacted %" PRIu64 " times", s.compacting_gcs);
        TT_CHECK(s.sweeping_gcs > 0);
    }
    TT_CHECK(s.gen[0].collections >= s.gen[1].collections);
    TT_CHECK(s.gen[1].collections >= s.gen[2].collections);
    TT_CHECK(s.gen[2].collections > 0);
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);

    TT_CHECK_RESULT(tenure_root_scanner_remove(rt, w->scanner), TENURE_OK);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, w->churn_h), TENURE_OK);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, w->area_h), TENURE_OK);
    TT_CHECK_RESULT(tenure_handle_free(rt, w->list_h), TENURE_OK);
    TT_CHECK_RESULT(tenure_handle_free(rt, w->ring_h), TENURE_OK);
    TT_CHECK_RESULT(tenure_handle_free(rt, w->big_h), TENURE_OK);
    TENURE_FRAME_POP(rt, frame);
    TT_CHECK(tenure_handle_count(rt) == 0);
    tt_collect(rt, -1, compact_flag);
    s = tt_stats(rt);
    TT_CHECK(s.live_bytes_after_gc < 64 * 1024, "everything was dropped but %" PRIu64 " bytes survived",
             s.live_bytes_after_gc);
    tenure_destroy(rt);

    free(w->list_ids);
    free(w->list_addr);
    free(w->dlist_ids);
    free(w->tree_ids);
    free(w->grid_ids);
    free(w->grid_addr);
    free(w->ring_ids);
    free(w->refarr_ids);
    free(w->sarr_ids);
    free(w->traced_ids);
    free(w->traced_node_ids);
    free(w->traced_junk);
    free(w->large_ids);
    free(w);
}

int main(void) {
    tt_rng_init("graphs");
    double t0 = tt_now();
    for (int mode = 0; mode <= 2; mode++)
        run_mode(mode);
    printf("graphs: OK (%.2f s)\n", tt_now() - t0);
    return 0;
}
