/* objtrack.c - the profiler-side object tracker (tenure_objtrack.h): a table from object id
 * (address) to a fixed-size payload, kept right across collections.
 *
 * Layout.
 *  - Entries {id, slot} live in one array `e`, sorted by id in e[0, nmain) (the main part);
 *    entries added since the last merge sit in e[nmain, n) (the tail), in the order they were
 *    added. Allocation addresses mostly increase, so the tail is usually one ascending run:
 *    while it is, it is searched by binary search; once an add goes below the tail's last id,
 *    a hash index (id -> tail position) is built and kept until the tail is merged. The tail
 *    is merged into the main part only when order matters (gc_finished, foreach).
 *  - Payloads live in fixed-size chunks (never moved, so a payload pointer stays valid until
 *    its entry dies or is removed), indexed by the entry's slot; freed slots go on a stack.
 *  - `alt` is a second entry array of the same capacity, the scratch of the merges and the
 *    destination of the GC walk. It is grown together with `e` (in add), so that gc_finished
 *    and foreach never allocate entry memory.
 *  - Removing an entry frees its payload and marks its slot REMOVED; marked entries are
 *    dropped by the next merge or GC walk (a later add of the same id revives the entry).
 *
 * One GC (gc_finished), with ranges sorted by old start (usually already sorted: checked
 * first, else a natural merge sort) and bounds sorted by start:
 *  1. the tail is sorted (natural merge sort: it is a few ascending runs) in place;
 *  2. one linear walk merges main and tail (both sorted by old id) with the ranges (sorted
 *     by old start) and the bounds: an entry in a range gets new id = new + (id - old); an
 *     entry in no range that lies in a collected generation is dead (on_death, payload freed);
 *     any other entry keeps its id. Surviving entries are written to `alt` in old-id order;
 *  3. `alt` becomes `e`. The new ids form a few ascending pieces: the walk cuts a piece where
 *     the new ids descend, where a range's destination does not continue the previous
 *     range's (compaction packs the plugs of a destination back to back), and where entries
 *     that keep their id begin or change bound. Each piece covers one contiguous destination,
 *     so pieces usually cover disjoint id intervals: then sorting the pieces (at most
 *     OT_PIECE_MAX) by first id and copying them in that order restores id order in one
 *     pass. Otherwise (interleaved pieces, too many) a natural merge sort (find runs, merge
 *     pairwise, ping-pong between the two arrays) does it in O(n log runs).
 * Cost: O(n + r + b) for the walk; O(n + p log p) for p pieces, or O(n log k) for k runs;
 * O(r log r') for r ranges arriving in r' runs. No allocation after the first death is reported, so running
 * out of memory (only possible while the ranges and bounds are recorded) leaves the table
 * unchanged.
 */
#include "tenure_objtrack.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct ot_entry {
    uintptr_t id;
    uint32_t slot; /* payload slot, or OT_REMOVED */
    uint32_t pad;
} ot_entry;

typedef struct ot_range {
    uintptr_t old_start;
    uintptr_t new_start;
    size_t length;
} ot_range;

typedef struct ot_bound {
    uintptr_t start, end;
    int generation;
} ot_bound;

#define OT_REMOVED UINT32_MAX
#define OT_CHUNK_SHIFT 12 /* payloads per chunk: 4096 */
#define OT_CHUNK (1u << OT_CHUNK_SHIFT)
#define OT_PIECE_MAX 4096 /* pieces handled by the one-pass copy after a GC walk */
#define OT_HASH_EMPTY UINT32_MAX

struct tenure_objtrack {
    size_t payload_size, stride;
    tenure_objtrack_death_fn on_death;
    void *context;

    ot_entry *e, *alt;
    size_t n, nmain, cap_e, cap_alt;
    size_t count; /* entries not removed */
    int tail_ascending;

    /* hash index of the tail, only while it is not ascending: tail positions, keyed by id */
    uint32_t *hash;
    size_t hash_cap; /* a power of two, 0 if none */

    /* payload slots */
    unsigned char **chunks;
    size_t nchunks, cap_chunks;
    uint32_t *free_slots; /* a stack, capacity cap_free >= nchunks * OT_CHUNK */
    size_t nfree, cap_free;
    uint32_t next_slot; /* slots below this have been handed out at least once */

    /* the GC in progress */
    int in_gc, gc_oom;
    int collected[5];
    ot_bound *bounds;
    size_t nbounds, cap_bounds;
    ot_range *ranges, *ranges_alt;
    size_t nranges, cap_ranges;
    size_t piece_at[OT_PIECE_MAX];
    struct ot_piece *pieces; /* OT_PIECE_MAX of them */
};

typedef struct ot_piece {
    uintptr_t first, last;
    size_t at, len;
} ot_piece;

static void swap_entries(tenure_objtrack *t) {
    ot_entry *x = t->e;
    t->e = t->alt;
    t->alt = x;
    size_t c = t->cap_e;
    t->cap_e = t->cap_alt;
    t->cap_alt = c;
}

/* ---- payload slots ---- */

static inline void *slot_ptr(const tenure_objtrack *t, uint32_t slot) {
    return t->chunks[slot >> OT_CHUNK_SHIFT] + (size_t)(slot & (OT_CHUNK - 1)) * t->stride;
}

/* A zeroed payload slot, or OT_REMOVED if out of memory. */
static uint32_t slot_alloc(tenure_objtrack *t) {
    uint32_t s;
    if (t->nfree) {
        s = t->free_slots[--t->nfree];
    } else {
        if ((size_t)t->next_slot == t->nchunks * OT_CHUNK) {
            if (t->nchunks >= (size_t)(UINT32_MAX >> OT_CHUNK_SHIFT) - 1)
                return OT_REMOVED;
            if (t->nchunks == t->cap_chunks) {
                size_t nc = t->cap_chunks ? 2 * t->cap_chunks : 16;
                unsigned char **c = realloc(t->chunks, nc * sizeof *c);
                if (!c)
                    return OT_REMOVED;
                t->chunks = c;
                t->cap_chunks = nc;
            }
            if ((t->nchunks + 1) * OT_CHUNK > t->cap_free) {
                size_t nf = t->cap_free ? 2 * t->cap_free : OT_CHUNK;
                uint32_t *fs = realloc(t->free_slots, nf * sizeof *fs);
                if (!fs)
                    return OT_REMOVED;
                t->free_slots = fs;
                t->cap_free = nf;
            }
            unsigned char *chunk = malloc((size_t)OT_CHUNK * t->stride);
            if (!chunk)
                return OT_REMOVED;
            t->chunks[t->nchunks++] = chunk;
        }
        s = t->next_slot++;
    }
    memset(slot_ptr(t, s), 0, t->payload_size);
    return s;
}

static inline void slot_free(tenure_objtrack *t, uint32_t slot) { t->free_slots[t->nfree++] = slot; }

/* ---- create / destroy ---- */

tenure_objtrack *tenure_objtrack_create(size_t payload_size, tenure_objtrack_death_fn on_death, void *context) {
    if (payload_size > ((size_t)1 << 30))
        return NULL;
    tenure_objtrack *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->pieces = malloc(OT_PIECE_MAX * sizeof *t->pieces);
    if (!t->pieces) {
        free(t);
        return NULL;
    }
    t->payload_size = payload_size;
    size_t align = payload_size >= 16 ? 16 : 8;
    t->stride = payload_size == 0 ? align : (payload_size + align - 1) & ~(align - 1);
    t->on_death = on_death;
    t->context = context;
    t->tail_ascending = 1;
    return t;
}

void tenure_objtrack_destroy(tenure_objtrack *t) {
    if (!t)
        return;
    for (size_t i = 0; i < t->nchunks; i++)
        free(t->chunks[i]);
    free(t->chunks);
    free(t->free_slots);
    free(t->e);
    free(t->alt);
    free(t->hash);
    free(t->bounds);
    free(t->ranges);
    free(t->ranges_alt);
    free(t->pieces);
    free(t);
}

size_t tenure_objtrack_count(const tenure_objtrack *t) { return t ? t->count : 0; }

/* ---- sorting: natural merge sort, ping-pong between two arrays ---- */

/* One merge pass: merges pairs of consecutive ascending runs of src[0, n) into dst. Returns
 * the number of runs found in src (1: src was sorted, nothing was written to dst). */
#define OT_DEFINE_MERGE_PASS(name, T, KEY)                                  \
    static size_t name(const T *src, T *dst, size_t n) {                    \
        size_t runs = 0, i = 0;                                             \
        while (i < n) {                                                     \
            size_t a = i, a_end = i + 1;                                    \
            while (a_end < n && KEY(src[a_end - 1]) <= KEY(src[a_end]))     \
                a_end++;                                                    \
            runs++;                                                         \
            if (a == 0 && a_end == n)                                       \
                return 1;                                                   \
            size_t b = a_end, b_end = b;                                    \
            if (b < n) {                                                    \
                b_end = b + 1;                                              \
                while (b_end < n && KEY(src[b_end - 1]) <= KEY(src[b_end])) \
                    b_end++;                                                \
                runs++;                                                     \
            }                                                               \
            size_t o = a;                                                   \
            while (a < a_end && b < b_end)                                  \
                dst[o++] = KEY(src[b]) < KEY(src[a]) ? src[b++] : src[a++]; \
            if (a < a_end) {                                                \
                memcpy(dst + o, src + a, (a_end - a) * sizeof(T));          \
                o += a_end - a;                                             \
            }                                                               \
            if (b < b_end)                                                  \
                memcpy(dst + o, src + b, (b_end - b) * sizeof(T));          \
            i = b_end;                                                      \
        }                                                                   \
        return runs;                                                        \
    }

#define OT_ENTRY_KEY(x) ((x).id)
#define OT_RANGE_KEY(x) ((x).old_start)
OT_DEFINE_MERGE_PASS(entry_merge_pass, ot_entry, OT_ENTRY_KEY)
OT_DEFINE_MERGE_PASS(range_merge_pass, ot_range, OT_RANGE_KEY)

/* Sort a[0, n) with scratch b[0, n); returns the array that holds the result (a or b). */
static ot_entry *entry_sort(ot_entry *a, ot_entry *b, size_t n) {
    while (n > 1 && entry_merge_pass(a, b, n) > 1) {
        ot_entry *x = a;
        a = b;
        b = x;
    }
    return a;
}

static ot_range *range_sort(ot_range *a, ot_range *b, size_t n) {
    while (n > 1 && range_merge_pass(a, b, n) > 1) {
        ot_range *x = a;
        a = b;
        b = x;
    }
    return a;
}

/* ---- the tail ---- */

static inline size_t hash_of(uintptr_t id, size_t cap) {
    uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & (cap - 1);
}

static void hash_insert(tenure_objtrack *t, size_t tail_pos) {
    size_t mask = t->hash_cap - 1;
    size_t h = hash_of(t->e[t->nmain + tail_pos].id, t->hash_cap);
    while (t->hash[h] != OT_HASH_EMPTY)
        h = (h + 1) & mask;
    t->hash[h] = (uint32_t)tail_pos;
}

/* Make room in the hash index for `tail_len` tail entries (rebuilding it). 0 or -1. */
static int hash_reserve(tenure_objtrack *t, size_t tail_len) {
    if (tail_len * 2 <= t->hash_cap)
        return 0;
    if (tail_len >= UINT32_MAX / 2)
        return -1;
    size_t cap = t->hash_cap ? t->hash_cap : 256;
    while (cap < tail_len * 2)
        cap *= 2;
    uint32_t *h = malloc(cap * sizeof *h);
    if (!h)
        return -1;
    free(t->hash);
    t->hash = h;
    t->hash_cap = cap;
    memset(h, 0xff, cap * sizeof *h);
    size_t have = t->n - t->nmain;
    for (size_t i = 0; i < have; i++)
        hash_insert(t, i);
    return 0;
}

static void hash_drop(tenure_objtrack *t) {
    free(t->hash);
    t->hash = NULL;
    t->hash_cap = 0;
}

/* Index in e of the entry with this id (removed or not), or SIZE_MAX. */
static size_t lookup(const tenure_objtrack *t, uintptr_t id) {
    const ot_entry *e = t->e;
    if (t->nmain && id >= e[0].id && id <= e[t->nmain - 1].id) {
        size_t lo = 0, hi = t->nmain;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (e[mid].id <= id)
                lo = mid;
            else
                hi = mid;
        }
        if (e[lo].id == id)
            return lo;
    }
    size_t tn = t->n - t->nmain;
    if (!tn)
        return SIZE_MAX;
    const ot_entry *tail = e + t->nmain;
    if (t->tail_ascending) {
        if (id < tail[0].id || id > tail[tn - 1].id)
            return SIZE_MAX;
        size_t lo = 0, hi = tn;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (tail[mid].id <= id)
                lo = mid;
            else
                hi = mid;
        }
        return tail[lo].id == id ? t->nmain + lo : SIZE_MAX;
    }
    size_t mask = t->hash_cap - 1;
    for (size_t h = hash_of(id, t->hash_cap); t->hash[h] != OT_HASH_EMPTY; h = (h + 1) & mask)
        if (tail[t->hash[h]].id == id)
            return t->nmain + t->hash[h];
    return SIZE_MAX;
}

/* Merge the tail into the main part (no allocation: alt is the scratch). */
static void merge_tail(tenure_objtrack *t) {
    size_t tn = t->n - t->nmain;
    if (!tn)
        return;
    ot_entry *tail = t->e + t->nmain;
    if (!t->tail_ascending) {
        ot_entry *sorted = entry_sort(tail, t->alt, tn);
        if (sorted != tail)
            memcpy(tail, sorted, tn * sizeof *tail);
    }
    hash_drop(t);
    t->tail_ascending = 1;
    if (t->nmain == 0 || t->e[t->nmain - 1].id < tail[0].id) {
        t->nmain = t->n;
        return;
    }
    /* backward merge: the tail goes to alt, then main and alt merge into e from the end */
    memcpy(t->alt, tail, tn * sizeof *tail);
    size_t i = t->nmain, j = tn, o = t->n;
    while (j > 0) {
        if (i > 0 && t->e[i - 1].id > t->alt[j - 1].id)
            t->e[--o] = t->e[--i];
        else
            t->e[--o] = t->alt[--j];
    }
    t->nmain = t->n;
}

/* ---- add / find / remove / foreach ---- */

static int reserve_entries(tenure_objtrack *t, size_t need) {
    if (need <= t->cap_e && need <= t->cap_alt)
        return 0;
    size_t cap = t->cap_e > t->cap_alt ? t->cap_e : t->cap_alt;
    if (need > SIZE_MAX / 2 / sizeof(ot_entry) || need > (size_t)UINT32_MAX * 2)
        return -1;
    if (cap < 1024)
        cap = 1024;
    while (cap < need)
        cap *= 2;
    if (t->cap_e < cap) {
        ot_entry *e = realloc(t->e, cap * sizeof *e);
        if (!e)
            return -1;
        t->e = e;
        t->cap_e = cap;
    }
    if (t->cap_alt < cap) {
        ot_entry *a = malloc(cap * sizeof *a); /* scratch: the contents need not be kept */
        if (!a)
            return -1;
        free(t->alt);
        t->alt = a;
        t->cap_alt = cap;
    }
    return 0;
}

void *tenure_objtrack_add(tenure_objtrack *t, uintptr_t id) {
    if (!t)
        return NULL;
    size_t at = lookup(t, id);
    if (at != SIZE_MAX) {
        if (t->e[at].slot != OT_REMOVED)
            return NULL; /* already tracked */
        uint32_t s = slot_alloc(t);
        if (s == OT_REMOVED)
            return NULL;
        t->e[at].slot = s;
        t->count++;
        return slot_ptr(t, s);
    }
    if (reserve_entries(t, t->n + 1) != 0)
        return NULL;
    size_t tn = t->n - t->nmain;
    int ascending = t->tail_ascending && (tn == 0 || t->e[t->n - 1].id < id);
    if (!ascending && hash_reserve(t, tn + 1) != 0)
        return NULL;
    uint32_t s = slot_alloc(t);
    if (s == OT_REMOVED)
        return NULL;
    t->e[t->n] = (ot_entry){id, s, 0};
    t->n++;
    t->count++;
    if (!ascending) {
        t->tail_ascending = 0;
        hash_insert(t, tn); /* hash_reserve (re)built the index with the tail's first tn */
    }
    return slot_ptr(t, s);
}

void *tenure_objtrack_find(tenure_objtrack *t, uintptr_t id) {
    if (!t)
        return NULL;
    size_t at = lookup(t, id);
    if (at == SIZE_MAX || t->e[at].slot == OT_REMOVED)
        return NULL;
    return slot_ptr(t, t->e[at].slot);
}

int tenure_objtrack_remove(tenure_objtrack *t, uintptr_t id) {
    if (!t)
        return -1;
    size_t at = lookup(t, id);
    if (at == SIZE_MAX || t->e[at].slot == OT_REMOVED)
        return -1;
    slot_free(t, t->e[at].slot);
    t->e[at].slot = OT_REMOVED;
    t->count--;
    return 0;
}

void tenure_objtrack_foreach(tenure_objtrack *t, void (*fn)(void *context, uintptr_t id, void *payload),
                             void *context) {
    if (!t || !fn)
        return;
    merge_tail(t);
    for (size_t i = 0; i < t->n; i++)
        if (t->e[i].slot != OT_REMOVED)
            fn(context, t->e[i].id, slot_ptr(t, t->e[i].slot));
}

/* ---- one GC ---- */

void tenure_objtrack_gc_started(tenure_objtrack *t, const int collected[5], const tenure_generation_range *bounds,
                                size_t bound_count) {
    if (!t)
        return;
    t->in_gc = 1;
    t->gc_oom = 0;
    t->nranges = 0;
    t->nbounds = 0;
    for (int g = 0; g < 5; g++)
        t->collected[g] = collected ? collected[g] != 0 : 1;
    if (bound_count > t->cap_bounds) {
        ot_bound *b = realloc(t->bounds, bound_count * sizeof *b);
        if (!b) {
            t->gc_oom = 1;
            return;
        }
        t->bounds = b;
        t->cap_bounds = bound_count;
    }
    int sorted = 1;
    for (size_t i = 0; i < bound_count; i++) {
        const tenure_generation_range *r = &bounds[i];
        size_t len = r->reserved_length > r->used_length ? r->reserved_length : r->used_length;
        if (len == 0)
            continue;
        ot_bound b = {r->start, r->start + len, r->generation};
        if (t->nbounds && t->bounds[t->nbounds - 1].start > b.start)
            sorted = 0;
        t->bounds[t->nbounds++] = b;
    }
    if (!sorted) /* few: insertion sort */
        for (size_t i = 1; i < t->nbounds; i++) {
            ot_bound b = t->bounds[i];
            size_t j = i;
            for (; j > 0 && t->bounds[j - 1].start > b.start; j--)
                t->bounds[j] = t->bounds[j - 1];
            t->bounds[j] = b;
        }
}

static int reserve_ranges(tenure_objtrack *t, size_t need) {
    if (need <= t->cap_ranges)
        return 0;
    if (need > SIZE_MAX / 2 / sizeof(ot_range))
        return -1;
    size_t cap = t->cap_ranges ? t->cap_ranges : 256;
    while (cap < need)
        cap *= 2;
    ot_range *r = realloc(t->ranges, cap * sizeof *r);
    if (!r)
        return -1;
    t->ranges = r;
    ot_range *a = malloc(cap * sizeof *a);
    if (!a)
        return -1; /* cap_ranges stays: the next call retries */
    free(t->ranges_alt);
    t->ranges_alt = a;
    t->cap_ranges = cap;
    return 0;
}

static void add_ranges(tenure_objtrack *t, size_t count, const uintptr_t *old_starts, const uintptr_t *new_starts,
                       const size_t *lengths) {
    if (!t || !count || t->gc_oom)
        return;
    if (!t->in_gc || reserve_ranges(t, t->nranges + count) != 0) {
        t->gc_oom = !t->in_gc ? t->gc_oom : 1;
        return;
    }
    ot_range *r = t->ranges + t->nranges;
    size_t k = 0;
    for (size_t i = 0; i < count; i++)
        if (lengths[i] != 0)
            r[k++] = (ot_range){old_starts[i], new_starts ? new_starts[i] : old_starts[i], lengths[i]};
    t->nranges += k;
}

void tenure_objtrack_moved(tenure_objtrack *t, size_t count, const uintptr_t *old_starts, const uintptr_t *new_starts,
                           const size_t *lengths) {
    add_ranges(t, count, old_starts, new_starts, lengths);
}

void tenure_objtrack_surviving(tenure_objtrack *t, size_t count, const uintptr_t *starts, const size_t *lengths) {
    add_ranges(t, count, starts, NULL, lengths);
}

/* Step 2 of gc_finished: the walk. Reads main e[0, nmain) and tail e[nmain, n) (both sorted),
 * writes kept entries to alt; returns how many. Cuts the output into pieces, each ascending
 * and covering one contiguous destination: a piece starts at a descent of the new ids, at a
 * range whose destination does not continue the previous range's, and where entries that keep
 * their id start or change bound. The first OT_PIECE_MAX piece starts go to t->piece_at;
 * *npieces gets their number, *descents the number of descents (0: alt is sorted). */
static size_t gc_walk(tenure_objtrack *t, const ot_range *rg, size_t nr, size_t *npieces, size_t *descents) {
    const ot_entry *m = t->e, *m_end = t->e + t->nmain;
    const ot_entry *q = m_end, *q_end = t->e + t->n;
    const ot_bound *b = t->bounds, *b_end = t->bounds + t->nbounds;
    const ot_range *r_end = rg + nr;
    const ot_range *last_rg = NULL; /* the range of the previous kept entry, NULL if none */
    const ot_bound *last_b = NULL;  /* the bound of the previous entry that kept its id */
    uintptr_t last_new_end = 0;
    ot_entry *out = t->alt;
    size_t w = 0, pieces = 0, desc = 0;
    uintptr_t prev = 0;
    for (;;) {
        ot_entry x;
        if (m < m_end) {
            if (q < q_end && q->id < m->id)
                x = *q++;
            else
                x = *m++;
        } else if (q < q_end) {
            x = *q++;
        } else {
            break;
        }
        if (x.slot == OT_REMOVED)
            continue;
        uintptr_t id = x.id, nid;
        int cut;
        while (rg < r_end && rg->old_start + rg->length <= id)
            rg++;
        if (rg < r_end && rg->old_start <= id) {
            nid = rg->new_start + (id - rg->old_start);
            cut = 0;
            if (rg != last_rg) {
                cut = last_rg == NULL || rg->new_start != last_new_end;
                last_rg = rg;
                last_new_end = rg->new_start + rg->length;
            }
        } else {
            while (b < b_end && b->end <= id)
                b++;
            if (b < b_end && b->start <= id && b->generation >= 0 && b->generation < 5 && t->collected[b->generation]) {
                if (t->on_death)
                    t->on_death(t->context, id, slot_ptr(t, x.slot), b->generation);
                slot_free(t, x.slot);
                t->count--;
                continue;
            }
            nid = id;
            cut = last_rg != NULL || b != last_b;
            last_rg = NULL;
            last_b = b;
        }
        if (w != 0 && nid < prev) {
            desc++;
            cut = 1;
        }
        if (cut || w == 0) {
            if (pieces < OT_PIECE_MAX)
                t->piece_at[pieces] = w;
            pieces++;
        }
        prev = nid;
        out[w].id = nid;
        out[w].slot = x.slot;
        out[w].pad = 0;
        w++;
    }
    *npieces = pieces;
    *descents = desc;
    return w;
}

static int piece_cmp(const void *a, const void *b) {
    uintptr_t x = ((const ot_piece *)a)->first, y = ((const ot_piece *)b)->first;
    return x < y ? -1 : x > y;
}

/* Step 3: e[0, w) holds the walk's output; put it in id order (in e, or in alt: then swap). */
static void restore_order(tenure_objtrack *t, size_t w, size_t npieces, size_t descents) {
    if (descents == 0)
        return;
    if (npieces <= OT_PIECE_MAX) {
        /* pieces by first id; if they cover disjoint intervals, one copy puts them in order */
        ot_piece *pc = t->pieces;
        for (size_t i = 0; i < npieces; i++) {
            size_t at = t->piece_at[i], end = i + 1 < npieces ? t->piece_at[i + 1] : w;
            pc[i] = (ot_piece){t->e[at].id, t->e[end - 1].id, at, end - at};
        }
        qsort(pc, npieces, sizeof *pc, piece_cmp);
        int disjoint = 1;
        for (size_t i = 0; i + 1 < npieces && disjoint; i++)
            disjoint = pc[i].last < pc[i + 1].first;
        if (disjoint) {
            size_t o = 0;
            for (size_t i = 0; i < npieces; i++) {
                memcpy(t->alt + o, t->e + pc[i].at, pc[i].len * sizeof *t->e);
                o += pc[i].len;
            }
            swap_entries(t);
            return;
        }
    }
    /* interleaved pieces: natural merge sort (O(w log runs)) */
    if (entry_sort(t->e, t->alt, w) != t->e)
        swap_entries(t);
}

int tenure_objtrack_gc_finished(tenure_objtrack *t) {
    if (!t)
        return -1;
    if (!t->in_gc)
        return 0; /* no gc_started: nothing to apply */
    t->in_gc = 0;
    if (t->gc_oom) {
        t->gc_oom = 0;
        t->nranges = 0;
        return -1;
    }
    /* 1. ranges by old start; the tail sorted in place (no allocation from here on) */
    const ot_range *rg = range_sort(t->ranges, t->ranges_alt, t->nranges);
    size_t tn = t->n - t->nmain;
    if (tn && !t->tail_ascending) {
        ot_entry *tail = t->e + t->nmain;
        ot_entry *sorted = entry_sort(tail, t->alt, tn);
        if (sorted != tail)
            memcpy(tail, sorted, tn * sizeof *tail);
    }
    hash_drop(t);
    t->tail_ascending = 1;

    /* 2. the walk: e -> alt */
    size_t npieces = 0, descents = 0;
    size_t w = gc_walk(t, rg, t->nranges, &npieces, &descents);
    t->nranges = 0;
    swap_entries(t);
    t->n = t->nmain = w;

    /* 3. id order again */
    restore_order(t, w, npieces, descents);
    return 0;
}
