/*
 * retained.c - tenure-heapprof's retained sizes: what each object and each type keeps alive.
 *
 * The graph comes from a heap dump (tenure_heap_dump) read through a listener session, the
 * same events a trace of it holds (GCBulkNode, GCBulkEdge, GCBulkRootEdge, BulkType,
 * GCBulkRootConditionalWeakTableElementEdge): nodes in dump order, each followed by its
 * EdgeCount edges; a dependent handle's pair is an edge from its primary to its secondary (the
 * secondary lives exactly as long as the primary). A virtual root points at every strong root
 * (weak handles keep nothing alive).
 *
 * Dominators: Lengauer-Tarjan (the "simple" version: path compression, O(m log n)), with an
 * iterative depth-first search and an iterative compression so that a long list cannot
 * overflow the stack. An object's retained size is the sum of the shallow sizes of its
 * dominator subtree (what a collection would free if the object's references went away). A
 * type's retained size counts each object dominated by some object of the type once: the
 * retained sizes of the type's objects that no other object of the type dominates.
 */
#define _GNU_SOURCE
#include "heapprof.h"
#include "tenure_events.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NONE UINT32_MAX
#define TOP_RETAINERS 10

typedef struct vec64 {
    uint64_t *v;
    size_t n, cap;
} vec64;

static int push64(vec64 *x, uint64_t v) {
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 4096;
        uint64_t *p = realloc(x->v, cap * sizeof *p);
        if (!p)
            return -1;
        x->v = p;
        x->cap = cap;
    }
    x->v[x->n++] = v;
    return 0;
}

typedef struct rt_type {
    uint64_t id;
    char *name;
    uint64_t objects, shallow, retained;
} rt_type;

/* What the listener collects. */
typedef struct graph {
    vec64 node_addr, node_size, node_type, node_edges;
    vec64 edges; /* targets, in node order */
    vec64 roots; /* strong roots' objects */
    vec64 pair_key, pair_value;
    rt_type *types;
    size_t ntypes, cap_types;
    uint64_t weak_roots;
    int oom;
} graph;

static void add_type(graph *g, uint64_t id, const char *name) {
    if (g->ntypes == g->cap_types) {
        size_t cap = g->cap_types ? 2 * g->cap_types : 64;
        rt_type *p = realloc(g->types, cap * sizeof *p);
        if (!p) {
            g->oom = 1;
            return;
        }
        g->types = p;
        g->cap_types = cap;
    }
    g->types[g->ntypes++] = (rt_type){id, strdup(name ? name : "?"), 0, 0, 0};
}

static uint64_t field(const tenure_event *e, size_t i, const char *name) {
    uint64_t v = 0;
    tenure_event_read_element(e, "Values", i, name, &v);
    return v;
}

static void on_event(const tenure_event *e, void *ctx) {
    graph *g = ctx;
    const char *n = e->desc->name;
    uint64_t count = 0;
    if (tenure_event_read_u64(e, "Count", &count) != TENURE_OK)
        return;
    int bad = 0;
    for (size_t i = 0; i < count; i++) {
        if (!strcmp(n, "GCBulkNode")) {
            bad |= push64(&g->node_addr, field(e, i, "Address")) | push64(&g->node_size, field(e, i, "Size")) |
                   push64(&g->node_type, field(e, i, "TypeID")) | push64(&g->node_edges, field(e, i, "EdgeCount"));
        } else if (!strcmp(n, "GCBulkEdge")) {
            bad |= push64(&g->edges, field(e, i, "Value"));
        } else if (!strcmp(n, "GCBulkRootEdge")) {
            if (field(e, i, "GCRootFlag") & TENURE_ROOT_FLAG_WEAK)
                g->weak_roots++;
            else
                bad |= push64(&g->roots, field(e, i, "RootedNodeAddress"));
        } else if (!strcmp(n, "GCBulkRootConditionalWeakTableElementEdge")) {
            bad |=
                push64(&g->pair_key, field(e, i, "GCKeyNodeID")) | push64(&g->pair_value, field(e, i, "GCValueNodeID"));
        } else if (!strcmp(n, "BulkType")) {
            const char *name = NULL;
            tenure_event_read_element_string(e, "Values", i, "Name", &name);
            add_type(g, field(e, i, "TypeID"), name);
        }
    }
    if (bad)
        g->oom = 1;
}

/* ---- the graph in compressed form: node index by address, successors ---- */

typedef struct csr {
    uint32_t n;    /* nodes; node n is the virtual root */
    uint32_t *off; /* n + 2 */
    uint32_t *succ;
    uint32_t *pred_off; /* n + 2 */
    uint32_t *pred;
} csr;

static const uint64_t *sort_base;
static int by_address(const void *a, const void *b) {
    uint64_t x = sort_base[*(const uint32_t *)a], y = sort_base[*(const uint32_t *)b];
    return x < y ? -1 : x > y;
}

static uint32_t find_node(const uint64_t *addr, const uint32_t *order, uint32_t n, uint64_t a) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (addr[order[mid]] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && addr[order[lo]] == a ? order[lo] : NONE;
}

static int build_csr(const graph *g, csr *c) {
    uint32_t n = (uint32_t)g->node_addr.n;
    c->n = n;
    uint32_t *order = malloc(((size_t)n + 1) * sizeof *order);
    c->off = calloc((size_t)n + 2, sizeof *c->off);
    c->pred_off = calloc((size_t)n + 2, sizeof *c->pred_off);
    size_t m = g->edges.n + g->pair_key.n + g->roots.n;
    c->succ = malloc((m + 1) * sizeof *c->succ);
    c->pred = malloc((m + 1) * sizeof *c->pred);
    uint32_t *fill = calloc((size_t)n + 2, sizeof *fill);
    if (!order || !c->off || !c->pred_off || !c->succ || !c->pred || !fill) {
        free(order);
        free(fill);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    sort_base = g->node_addr.v;
    qsort(order, n, sizeof *order, by_address);
    /* out-degrees: the node's edges, its dependent pairs, the roots for the virtual root */
    for (uint32_t i = 0; i < n; i++)
        c->off[i + 1] = (uint32_t)g->node_edges.v[i];
    for (size_t k = 0; k < g->pair_key.n; k++) {
        uint32_t key = find_node(g->node_addr.v, order, n, g->pair_key.v[k]);
        if (key != NONE)
            c->off[key + 1]++;
    }
    c->off[n + 1] = (uint32_t)g->roots.n;
    for (uint32_t i = 0; i < n + 1; i++)
        c->off[i + 1] += c->off[i];
    size_t e = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint64_t k = 0; k < g->node_edges.v[i] && e < g->edges.n; k++)
            c->succ[c->off[i] + fill[i]++] = find_node(g->node_addr.v, order, n, g->edges.v[e++]);
    for (size_t k = 0; k < g->pair_key.n; k++) {
        uint32_t key = find_node(g->node_addr.v, order, n, g->pair_key.v[k]);
        if (key != NONE)
            c->succ[c->off[key] + fill[key]++] = find_node(g->node_addr.v, order, n, g->pair_value.v[k]);
    }
    for (size_t k = 0; k < g->roots.n; k++)
        c->succ[c->off[n] + fill[n]++] = find_node(g->node_addr.v, order, n, g->roots.v[k]);
    /* predecessors */
    uint32_t total = c->off[n + 1];
    for (uint32_t i = 0; i < total; i++)
        if (c->succ[i] != NONE)
            c->pred_off[c->succ[i] + 1]++;
    for (uint32_t i = 0; i < n + 1; i++)
        c->pred_off[i + 1] += c->pred_off[i];
    memset(fill, 0, ((size_t)n + 2) * sizeof *fill);
    for (uint32_t v = 0; v <= n; v++)
        for (uint32_t i = c->off[v]; i < c->off[v + 1]; i++)
            if (c->succ[i] != NONE)
                c->pred[c->pred_off[c->succ[i]] + fill[c->succ[i]]++] = v;
    free(order);
    free(fill);
    return 0;
}

/* ---- Lengauer-Tarjan, in depth-first numbers (the virtual root is number 0) ---- */

typedef struct lt {
    uint32_t count;   /* nodes reached */
    uint32_t *dfnum;  /* node -> number, NONE if unreachable */
    uint32_t *vertex; /* number -> node */
    uint32_t *parent, *semi, *idom, *ancestor, *label, *bucket, *bucket_next, *path;
} lt;

static void dfs(const csr *c, lt *t) {
    uint32_t *stack = t->path, *edge = t->bucket_next; /* borrowed: free until the main loop */
    uint32_t root = c->n, sp = 0;
    t->dfnum[root] = 0;
    t->vertex[0] = root;
    t->parent[0] = NONE;
    t->count = 1;
    stack[sp] = root;
    edge[sp++] = c->off[root];
    while (sp) {
        uint32_t v = stack[sp - 1];
        if (edge[sp - 1] == c->off[v + 1]) {
            sp--;
            continue;
        }
        uint32_t w = c->succ[edge[sp - 1]++];
        if (w == NONE || t->dfnum[w] != NONE)
            continue;
        t->dfnum[w] = t->count;
        t->vertex[t->count] = w;
        t->parent[t->count] = t->dfnum[v];
        t->count++;
        stack[sp] = w;
        edge[sp++] = c->off[w];
    }
}

static void compress(lt *t, uint32_t v) {
    uint32_t sp = 0;
    for (uint32_t u = v; t->ancestor[t->ancestor[u]] != NONE; u = t->ancestor[u])
        t->path[sp++] = u;
    while (sp) {
        uint32_t u = t->path[--sp], a = t->ancestor[u];
        if (t->semi[t->label[a]] < t->semi[t->label[u]])
            t->label[u] = t->label[a];
        t->ancestor[u] = t->ancestor[a];
    }
}

static uint32_t eval(lt *t, uint32_t v) {
    if (t->ancestor[v] == NONE)
        return v;
    compress(t, v);
    return t->label[v];
}

static int dominators(const csr *c, lt *t) {
    size_t n = (size_t)c->n + 1;
    uint32_t **arrays[] = {&t->dfnum,    &t->vertex, &t->parent, &t->semi,        &t->idom,
                           &t->ancestor, &t->label,  &t->bucket, &t->bucket_next, &t->path};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        if (!(*arrays[i] = malloc(n * sizeof(uint32_t))))
            return -1;
    memset(t->dfnum, 0xff, n * sizeof(uint32_t));
    dfs(c, t);
    for (uint32_t k = 0; k < t->count; k++) {
        t->semi[k] = t->label[k] = k;
        t->ancestor[k] = t->bucket[k] = NONE;
        t->idom[k] = 0;
    }
    for (uint32_t w = t->count - 1; w >= 1; w--) {
        uint32_t node = t->vertex[w];
        for (uint32_t i = c->pred_off[node]; i < c->pred_off[node + 1]; i++) {
            uint32_t v = t->dfnum[c->pred[i]];
            if (v == NONE)
                continue;
            uint32_t u = eval(t, v);
            if (t->semi[u] < t->semi[w])
                t->semi[w] = t->semi[u];
        }
        t->bucket_next[w] = t->bucket[t->semi[w]];
        t->bucket[t->semi[w]] = w;
        uint32_t p = t->parent[w];
        t->ancestor[w] = p;
        for (uint32_t v = t->bucket[p]; v != NONE; v = t->bucket_next[v]) {
            uint32_t u = eval(t, v);
            t->idom[v] = t->semi[u] < t->semi[v] ? u : p;
        }
        t->bucket[p] = NONE;
    }
    for (uint32_t w = 1; w < t->count; w++)
        if (t->idom[w] != t->semi[w])
            t->idom[w] = t->idom[t->idom[w]];
    return 0;
}

/* ---- per type ---- */

static size_t type_index(const graph *g, uint64_t id) {
    for (size_t i = 0; i < g->ntypes; i++) /* few types: a linear search of a small table */
        if (g->types[i].id == id)
            return i;
    return SIZE_MAX;
}

typedef struct result {
    uint64_t objects, bytes, edges, roots, unreachable_objects, unreachable_bytes;
    uint32_t top[TOP_RETAINERS];
    size_t ntop;
    uint64_t *retained; /* by depth-first number */
    uint32_t *tindex;   /* by node: type index */
} result;

/* The dominator tree in preorder, counting for each type the objects of that type on the path
 * from the root: an object adds its retained size to its type when none is above it. */
static int type_retained(const graph *g, const lt *t, result *r) {
    uint32_t n = t->count;
    uint32_t *child_off = calloc((size_t)n + 1, sizeof *child_off), *child = malloc((size_t)n * sizeof *child);
    uint32_t *stack = malloc((size_t)n * sizeof *stack), *on_path = calloc(g->ntypes + 1, sizeof *on_path);
    if (!child_off || !child || !stack || !on_path) {
        free(child_off), free(child), free(stack), free(on_path);
        return -1;
    }
    for (uint32_t w = 1; w < n; w++)
        child_off[t->idom[w] + 1]++;
    for (uint32_t i = 0; i < n; i++)
        child_off[i + 1] += child_off[i];
    uint32_t *fill = t->path; /* free again */
    memset(fill, 0, (size_t)n * sizeof *fill);
    for (uint32_t w = 1; w < n; w++)
        child[child_off[t->idom[w]] + fill[t->idom[w]]++] = w;
    /* an explicit stack; next[w] = the children of w visited so far (0: w is being entered) */
    uint32_t *next = fill, sp = 0;
    memset(next, 0, (size_t)n * sizeof *next);
    stack[sp++] = 0;
    while (sp) {
        uint32_t w = stack[sp - 1];
        uint32_t ti = w ? r->tindex[t->vertex[w]] : UINT32_MAX; /* the virtual root has no type */
        if (next[w] == 0 && ti != UINT32_MAX) {
            if (on_path[ti] == 0)
                g->types[ti].retained += r->retained[w];
            on_path[ti]++;
        }
        if (next[w] < child_off[w + 1] - child_off[w]) {
            stack[sp++] = child[child_off[w] + next[w]++];
            continue;
        }
        if (ti != UINT32_MAX)
            on_path[ti]--;
        sp--;
    }
    free(child_off), free(child), free(stack), free(on_path);
    return 0;
}

static int analyse(graph *g, result *r) {
    csr c = {0};
    lt t = {0};
    int rc = -1;
    if (build_csr(g, &c) != 0 || dominators(&c, &t) != 0)
        goto out;
    uint32_t n = c.n;
    r->objects = n;
    r->edges = g->edges.n + g->pair_key.n;
    r->roots = g->roots.n;
    r->retained = calloc(t.count, sizeof *r->retained);
    r->tindex = malloc(((size_t)n + 1) * sizeof *r->tindex);
    if (!r->retained || !r->tindex)
        goto out;
    for (uint32_t v = 0; v < n; v++) {
        size_t ti = type_index(g, g->node_type.v[v]);
        r->tindex[v] = ti == SIZE_MAX ? UINT32_MAX : (uint32_t)ti;
        r->bytes += g->node_size.v[v];
        if (ti != SIZE_MAX) {
            g->types[ti].objects++;
            g->types[ti].shallow += g->node_size.v[v];
        }
        if (t.dfnum[v] == NONE) {
            r->unreachable_objects++;
            r->unreachable_bytes += g->node_size.v[v];
        } else {
            r->retained[t.dfnum[v]] = g->node_size.v[v];
        }
    }
    for (uint32_t w = t.count - 1; w >= 1; w--)
        r->retained[t.idom[w]] += r->retained[w];
    for (uint32_t w = 1; w < t.count; w++) { /* the top retainers: a short sorted list */
        size_t k;
        if (r->ntop < TOP_RETAINERS)
            k = r->ntop++;
        else if (r->retained[w] > r->retained[r->top[TOP_RETAINERS - 1]])
            k = TOP_RETAINERS - 1;
        else
            continue;
        while (k > 0 && r->retained[r->top[k - 1]] < r->retained[w]) {
            r->top[k] = r->top[k - 1];
            k--;
        }
        r->top[k] = w;
    }
    for (uint32_t i = 0; i < r->ntop; i++) /* as nodes from here on */
        r->top[i] = t.vertex[r->top[i]];
    uint64_t *by_node = calloc((size_t)n + 1, sizeof *by_node);
    if (!by_node || type_retained(g, &t, r) != 0) {
        free(by_node);
        goto out;
    }
    for (uint32_t w = 1; w < t.count; w++)
        by_node[t.vertex[w]] = r->retained[w];
    free(r->retained);
    r->retained = by_node;
    rc = 0;
out:
    free(c.off), free(c.succ), free(c.pred_off), free(c.pred);
    free(t.dfnum), free(t.vertex), free(t.parent), free(t.semi), free(t.idom);
    free(t.ancestor), free(t.label), free(t.bucket), free(t.bucket_next), free(t.path);
    return rc;
}

/* ---- output ---- */

static int by_retained(const void *a, const void *b) {
    const rt_type *x = a, *y = b;
    if (x->retained != y->retained)
        return x->retained < y->retained ? 1 : -1;
    return strcmp(x->name, y->name);
}

static const char *type_name_of(const graph *g, const result *r, uint32_t node) {
    return r->tindex[node] == UINT32_MAX ? "?" : g->types[r->tindex[node]].name;
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++)
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned)(unsigned char)*s);
        else
            fputc(*s, f);
    fputc('"', f);
}

static void write_json(FILE *f, const graph *g, const result *r, uint16_t instance, double dump_s, double analysis_s) {
    fprintf(f,
            "{\"tool\": \"tenure-heapprof\", \"report\": \"retained\", \"version\": 1, \"instance\": %u,\n"
            " \"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"edges\": %" PRIu64 ", \"roots\": %" PRIu64
            ", \"weak_roots\": %" PRIu64 ",\n \"unreachable_objects\": %" PRIu64 ", \"unreachable_bytes\": %" PRIu64
            ", \"dump_seconds\": %.6f, \"analysis_seconds\": %.6f,\n \"by_type\": [",
            (unsigned)instance, r->objects, r->bytes, r->edges, r->roots, g->weak_roots, r->unreachable_objects,
            r->unreachable_bytes, dump_s, analysis_s);
    for (size_t i = 0; i < g->ntypes; i++) {
        fprintf(f, "%s\n  {\"type\": ", i ? "," : "");
        json_string(f, g->types[i].name);
        fprintf(f, ", \"objects\": %" PRIu64 ", \"shallow_bytes\": %" PRIu64 ", \"retained_bytes\": %" PRIu64 "}",
                g->types[i].objects, g->types[i].shallow, g->types[i].retained);
    }
    fprintf(f, "],\n \"top_retainers\": [");
    for (size_t i = 0; i < r->ntop; i++) {
        uint32_t v = r->top[i];
        fprintf(f, "%s\n  {\"address\": \"0x%" PRIx64 "\", \"type\": ", i ? "," : "", g->node_addr.v[v]);
        json_string(f, type_name_of(g, r, v));
        fprintf(f, ", \"shallow_bytes\": %" PRIu64 ", \"retained_bytes\": %" PRIu64 "}", g->node_size.v[v],
                r->retained[v]);
    }
    fprintf(f, "]}\n");
}

static void write_table(FILE *f, const graph *g, const result *r, uint16_t instance, double dump_s, double analysis_s) {
    fprintf(f,
            "tenure-heapprof: retained sizes, instance %u: %" PRIu64 " objects (%" PRIu64 " bytes), %" PRIu64
            " references, %" PRIu64 " strong roots; dump %.3f s, dominators %.3f s\n",
            (unsigned)instance, r->objects, r->bytes, r->edges, r->roots, dump_s, analysis_s);
    if (r->unreachable_objects)
        fprintf(f, "  (%" PRIu64 " objects, %" PRIu64 " bytes, reachable from no strong root: frozen or weak only)\n",
                r->unreachable_objects, r->unreachable_bytes);
    fprintf(f, "by type, by retained bytes:\n%-24s %12s %16s %16s\n", "type", "objects", "shallow_bytes",
            "retained_bytes");
    for (size_t i = 0; i < g->ntypes; i++)
        fprintf(f, "%-24s %12" PRIu64 " %16" PRIu64 " %16" PRIu64 "\n", g->types[i].name, g->types[i].objects,
                g->types[i].shallow, g->types[i].retained);
    fprintf(f, "top retainers:\n%-18s %-24s %16s %16s\n", "address", "type", "shallow_bytes", "retained_bytes");
    for (size_t i = 0; i < r->ntop; i++)
        fprintf(f, "0x%-16" PRIx64 " %-24s %16" PRIu64 " %16" PRIu64 "\n", g->node_addr.v[r->top[i]],
                type_name_of(g, r, r->top[i]), g->node_size.v[r->top[i]], r->retained[r->top[i]]);
}

static FILE *open_report(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644); /* never through a link */
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        fprintf(stderr, "tenure-heapprof: cannot write %s\n", path);
    }
    return f;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void free_graph(graph *g) {
    vec64 *v[] = {&g->node_addr, &g->node_size, &g->node_type, &g->node_edges,
                  &g->edges,     &g->roots,     &g->pair_key,  &g->pair_value};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        free(v[i]->v);
    for (size_t i = 0; i < g->ntypes; i++)
        free(g->types[i].name);
    free(g->types);
}

int tenure_heapprof_retained(tenure_runtime *rt, const char *json_path, const char *text_path) {
    graph g;
    memset(&g, 0, sizeof g);
    tenure_session *s = tenure_session_start_listener(rt, TENURE_KW_GC_HEAP_DUMP | TENURE_KW_TYPE,
                                                      TENURE_LEVEL_INFORMATIONAL, on_event, &g);
    if (!s)
        return -1;
    double t0 = now_s();
    tenure_result dumped = tenure_heap_dump(rt);
    tenure_session_stop(rt, s);
    double t1 = now_s();
    result r;
    memset(&r, 0, sizeof r);
    int rc = dumped == TENURE_OK && !g.oom && g.node_addr.n < NONE ? analyse(&g, &r) : -1;
    double t2 = now_s();
    if (rc == 0) {
        qsort(g.types, g.ntypes, sizeof *g.types, by_retained);
        for (uint32_t v = 0; v < r.objects; v++) /* the type indexes moved with the sort */
            r.tindex[v] = r.tindex[v] == UINT32_MAX ? UINT32_MAX : (uint32_t)type_index(&g, g.node_type.v[v]);
        FILE *f = text_path ? open_report(text_path) : stderr;
        if (f) {
            write_table(f, &g, &r, tenure_instance_id(rt), t1 - t0, t2 - t1);
            if (f != stderr)
                fclose(f);
        }
        FILE *j = json_path ? open_report(json_path) : NULL;
        if (j) {
            write_json(j, &g, &r, tenure_instance_id(rt), t1 - t0, t2 - t1);
            fclose(j);
        }
        rc = (text_path && !f) || (json_path && !j) ? -1 : 0;
    }
    free(r.retained);
    free(r.tindex);
    free_graph(&g);
    return rc;
}
