/*
 * heapprof.c - tenure-heapprof: object lifetimes by type and allocation site.
 *
 * Every allocation (TENURE_PROFILE_ALLOCATIONS) adds an entry to an object tracker
 * (tenure_objtrack.h) whose payload is the object's type, site, generation, allocation GC
 * index, size and (type, site) bucket. The tracker follows the entries through each GC
 * (TENURE_PROFILE_GC: gc_started, moved / surviving ranges, gc_finished) and reports the dead
 * ones with their generation: they are counted as died in that generation. After each GC the
 * generation of every tracked object is read from its new address and the generation bounds:
 * the first time it is 1 (resp. 2) the object counts as survived into gen1 (resp. gen2).
 * Whatever is still tracked at the end is live.
 *
 * Sizes: the object_allocated callback runs before tenure_alloc_array writes the array's
 * length, so the size of a new object is read later, at the next gc_started (nothing has
 * moved yet) or at the report, from a list of the objects allocated since the last GC.
 *
 * See heapprof.h for the use and the output.
 */
#define _GNU_SOURCE /* dladdr, RTLD_NOLOAD */
#include "heapprof.h"
#include "tenure_objtrack.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HP_NGEN 5
#define HP_NO_BUCKET UINT32_MAX

enum { HP_SEEN_GEN1 = 1u << 0, HP_SEEN_GEN2 = 1u << 1 };

typedef struct hp_counts {
    uint64_t alloc_objs, alloc_bytes;
    uint64_t surv1_objs, surv1_bytes;
    uint64_t surv2_objs, surv2_bytes;
    uint64_t died_objs[HP_NGEN], died_bytes[HP_NGEN];
    uint64_t died_age_gcs; /* sum over dead objects of the GCs they lived through */
    uint64_t live_objs, live_bytes;
    uint64_t live_gen_objs[HP_NGEN];
} hp_counts;

typedef struct hp_bucket {
    const tenure_type *type;
    uint32_t site;
    hp_counts c;
} hp_bucket;

/* the tracker's payload */
typedef struct hp_payload {
    const tenure_type *type;
    uint64_t alloc_gc; /* GCs before the allocation */
    uint64_t size;     /* bytes (known at the first gc_started after the allocation) */
    uint32_t site;
    uint32_t bucket;
    int8_t generation; /* -1 until known */
    uint8_t flags;     /* HP_SEEN_* */
} hp_payload;

typedef struct heapprof {
    struct heapprof *next;
    tenure_runtime *rt;
    uint16_t instance;
    tenure_profiler *prof;
    tenure_objtrack *track;
    char *out_json;
    int reported;

    hp_bucket *buckets;
    size_t nbuckets, cap_buckets;
    uint32_t *bhash; /* open addressing: bucket index + 1, 0 empty */
    size_t bhash_cap;
    const tenure_type *last_type; /* one-entry cache of the bucket lookup */
    uint32_t last_site, last_bucket;

    uintptr_t *pending; /* allocated since the last GC: size not read yet */
    size_t npending, cap_pending;

    tenure_generation_range *bounds;
    size_t nbounds, cap_bounds;
    int collected[HP_NGEN];
    uint64_t gc_index; /* GCs seen (the index of the last one) */

    /* diagnostics: all 0 when every object was followed */
    uint64_t untracked;      /* allocations not tracked (out of memory) */
    uint64_t stale;          /* entry already there at allocation: dropped as died (gen -1) */
    uint64_t tracker_errors; /* tenure_objtrack_gc_finished failed */
    uint64_t gen_mismatch;   /* death generation differs from the generation we had */
    uint64_t size_unknown;   /* the size of a new object could not be read */

    /* TENURE_HEAPPROF_VERIFY=1: at the report, the heap walk must find exactly the tracked
     * objects (every object allocated and not yet found dead by a GC), with their type, size
     * and generation */
    int verify;
    uint64_t v_walked, v_missing, v_extra, v_type, v_size, v_gen;
} heapprof;

static _Thread_local uint32_t hp_site;
static pthread_mutex_t hp_lock = PTHREAD_MUTEX_INITIALIZER;
static heapprof *hp_all;
static int hp_atexit_done;
static uint16_t hp_plain_owner; /* the instance whose reports take the plain file names */

void tenure_heapprof_set_site(uint32_t site) { hp_site = site; }
uint32_t tenure_heapprof_get_site(void) { return hp_site; }

/* ---- small helpers ---- */

static int grow(void **v, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *p = realloc(*v, n * elem);
    if (!p)
        return -1;
    *v = p;
    *cap = n;
    return 0;
}

static size_t mix(const tenure_type *type, uint32_t site) {
    uint64_t h = (uint64_t)(uintptr_t)type * 0x9e3779b97f4a7c15ull ^ ((uint64_t)site * 0xc2b2ae3d27d4eb4full);
    return (size_t)(h ^ (h >> 29));
}

static int bhash_rebuild(heapprof *hp, size_t cap) {
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return -1;
    for (size_t i = 0; i < hp->nbuckets; i++) {
        size_t j = mix(hp->buckets[i].type, hp->buckets[i].site) & (cap - 1);
        while (h[j])
            j = (j + 1) & (cap - 1);
        h[j] = (uint32_t)i + 1;
    }
    free(hp->bhash);
    hp->bhash = h;
    hp->bhash_cap = cap;
    return 0;
}

static uint32_t bucket_of(heapprof *hp, const tenure_type *type, uint32_t site) {
    if (hp->nbuckets && type == hp->last_type && site == hp->last_site)
        return hp->last_bucket;
    if (hp->bhash_cap) {
        for (size_t j = mix(type, site) & (hp->bhash_cap - 1); hp->bhash[j]; j = (j + 1) & (hp->bhash_cap - 1)) {
            hp_bucket *b = &hp->buckets[hp->bhash[j] - 1];
            if (b->type == type && b->site == site) {
                hp->last_type = type;
                hp->last_site = site;
                return hp->last_bucket = hp->bhash[j] - 1;
            }
        }
    }
    if (hp->nbuckets >= HP_NO_BUCKET - 1 ||
        grow((void **)&hp->buckets, &hp->cap_buckets, hp->nbuckets + 1, sizeof *hp->buckets))
        return HP_NO_BUCKET;
    if ((hp->nbuckets + 1) * 2 > hp->bhash_cap && bhash_rebuild(hp, hp->bhash_cap ? hp->bhash_cap * 2 : 64))
        return HP_NO_BUCKET;
    uint32_t i = (uint32_t)hp->nbuckets++;
    memset(&hp->buckets[i], 0, sizeof hp->buckets[i]);
    hp->buckets[i].type = type;
    hp->buckets[i].site = site;
    size_t j = mix(type, site) & (hp->bhash_cap - 1);
    while (hp->bhash[j])
        j = (j + 1) & (hp->bhash_cap - 1);
    hp->bhash[j] = i + 1;
    hp->last_type = type;
    hp->last_site = site;
    return hp->last_bucket = i;
}

static void fetch_bounds(heapprof *hp) {
    for (;;) {
        size_t n = tenure_generation_bounds(hp->rt, hp->bounds, hp->cap_bounds);
        if (n <= hp->cap_bounds) {
            hp->nbounds = n;
            return;
        }
        if (grow((void **)&hp->bounds, &hp->cap_bounds, n + 16, sizeof *hp->bounds)) {
            hp->nbounds = hp->cap_bounds; /* a partial view: objects outside get generation -1 */
            return;
        }
    }
}

/* the generation of the range holding id (bounds are by address), -1 if none */
static int generation_at(const heapprof *hp, uintptr_t id) {
    size_t lo = 0, hi = hp->nbounds;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (hp->bounds[mid].start <= id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    const tenure_generation_range *r = &hp->bounds[lo - 1];
    return id - r->start < r->reserved_length ? r->generation : -1;
}

/* Read the size (and generation) of the objects allocated since the last GC: they have not
 * moved, and their array lengths are written by now. hp->bounds must be current. */
static void resolve_pending(heapprof *hp) {
    for (size_t i = 0; i < hp->npending; i++) {
        uintptr_t id = hp->pending[i];
        hp_payload *p = tenure_objtrack_find(hp->track, id);
        if (!p)
            continue;
        size_t size = tenure_object_size(hp->rt, (const void *)id);
        if (!size)
            hp->size_unknown++;
        p->size = size;
        if (p->generation < 0)
            p->generation = (int8_t)generation_at(hp, id);
        if (p->bucket != HP_NO_BUCKET)
            hp->buckets[p->bucket].c.alloc_bytes += size;
    }
    hp->npending = 0;
}

/* ---- callbacks ---- */

static void on_death(void *ctx, uintptr_t id, void *payload, int generation) {
    heapprof *hp = ctx;
    hp_payload *p = payload;
    (void)id;
    if (p->generation >= 0 && p->generation != generation)
        hp->gen_mismatch++;
    if (p->bucket == HP_NO_BUCKET || generation < 0 || generation >= HP_NGEN)
        return;
    hp_counts *c = &hp->buckets[p->bucket].c;
    c->died_objs[generation]++;
    c->died_bytes[generation] += p->size;
    c->died_age_gcs += hp->gc_index - p->alloc_gc - 1; /* GCs survived before the one that found it dead */
}

static void on_allocated(void *ctx, void *obj, const tenure_type *type) {
    heapprof *hp = ctx;
    uint32_t b = bucket_of(hp, type, hp_site);
    if (b != HP_NO_BUCKET)
        hp->buckets[b].c.alloc_objs++;
    hp_payload *p = tenure_objtrack_add(hp->track, (uintptr_t)obj);
    if (!p && tenure_objtrack_find(hp->track, (uintptr_t)obj)) {
        /* an entry the tracker should have dropped (a failed GC update): its object is gone */
        hp->stale++;
        tenure_objtrack_remove(hp->track, (uintptr_t)obj);
        p = tenure_objtrack_add(hp->track, (uintptr_t)obj);
    }
    if (!p) {
        hp->untracked++;
        return;
    }
    p->type = type;
    p->site = hp_site;
    p->bucket = b;
    p->alloc_gc = hp->gc_index;
    p->generation = -1;
    if (grow((void **)&hp->pending, &hp->cap_pending, hp->npending + 1, sizeof *hp->pending) == 0) {
        hp->pending[hp->npending++] = (uintptr_t)obj;
    } else { /* no room to defer: read it now (an array's length is not set yet) */
        p->size = tenure_object_size(hp->rt, obj);
        p->generation = (int8_t)tenure_object_generation(hp->rt, obj);
        if (b != HP_NO_BUCKET)
            hp->buckets[b].c.alloc_bytes += p->size;
    }
}

static void on_gc_started(void *ctx, const int collected[5], tenure_gc_reason_kind reason) {
    heapprof *hp = ctx;
    (void)reason;
    fetch_bounds(hp);
    resolve_pending(hp);
    hp->gc_index++;
    memcpy(hp->collected, collected, sizeof hp->collected);
    tenure_objtrack_gc_started(hp->track, collected, hp->bounds, hp->nbounds);
}

static void on_moved(void *ctx, size_t count, const uintptr_t *old_starts, const uintptr_t *new_starts,
                     const size_t *lengths) {
    heapprof *hp = ctx;
    tenure_objtrack_moved(hp->track, count, old_starts, new_starts, lengths);
}

static void on_surviving(void *ctx, size_t count, const uintptr_t *starts, const size_t *lengths) {
    heapprof *hp = ctx;
    tenure_objtrack_surviving(hp->track, count, starts, lengths);
}

static void update_generation(void *ctx, uintptr_t id, void *payload) {
    heapprof *hp = ctx;
    hp_payload *p = payload;
    if (p->generation >= 0 && p->generation < HP_NGEN && !hp->collected[p->generation])
        return; /* uncollected generations neither move nor change generation */
    int g = generation_at(hp, id);
    p->generation = (int8_t)g;
    if (p->bucket == HP_NO_BUCKET)
        return;
    hp_counts *c = &hp->buckets[p->bucket].c;
    if (g == 1 && !(p->flags & HP_SEEN_GEN1)) {
        p->flags |= HP_SEEN_GEN1;
        c->surv1_objs++;
        c->surv1_bytes += p->size;
    } else if (g == 2 && !(p->flags & HP_SEEN_GEN2)) {
        p->flags |= HP_SEEN_GEN2;
        c->surv2_objs++;
        c->surv2_bytes += p->size;
    }
}

static void on_gc_finished(void *ctx) {
    heapprof *hp = ctx;
    if (tenure_objtrack_gc_finished(hp->track) != 0)
        hp->tracker_errors++;
    fetch_bounds(hp);
    tenure_objtrack_foreach(hp->track, update_generation, hp);
}

/* ---- the report ---- */

static void count_live(void *ctx, uintptr_t id, void *payload) {
    heapprof *hp = ctx;
    hp_payload *p = payload;
    (void)id;
    if (p->bucket == HP_NO_BUCKET)
        return;
    hp_counts *c = &hp->buckets[p->bucket].c;
    c->live_objs++;
    c->live_bytes += p->size;
    if (p->generation >= 0 && p->generation < HP_NGEN)
        c->live_gen_objs[p->generation]++;
}

static int verify_visit(void *obj, const tenure_type *type, size_t size, int generation, void *ctx) {
    heapprof *hp = ctx;
    if (generation_at(hp, (uintptr_t)obj) < 0)
        return 0; /* frozen segments: not allocated */
    hp->v_walked++;
    hp_payload *p = tenure_objtrack_find(hp->track, (uintptr_t)obj);
    if (!p) {
        hp->v_missing++;
        return 0;
    }
    hp->v_type += p->type != type;
    hp->v_size += p->size != size;
    hp->v_gen += p->generation != generation;
    return 0;
}

static void verify(heapprof *hp) {
    hp->v_walked = hp->v_missing = hp->v_extra = hp->v_type = hp->v_size = hp->v_gen = 0;
    if (tenure_heap_walk(hp->rt, verify_visit, hp) != TENURE_OK) {
        fprintf(stderr, "tenure-heapprof: verify: the heap walk failed\n");
        hp->v_missing++;
        return;
    }
    size_t tracked = tenure_objtrack_count(hp->track);
    uint64_t found = hp->v_walked - hp->v_missing;
    hp->v_extra = tracked > found ? tracked - found : 0;
}

static void add_counts(hp_counts *to, const hp_counts *c) {
    to->alloc_objs += c->alloc_objs;
    to->alloc_bytes += c->alloc_bytes;
    to->surv1_objs += c->surv1_objs;
    to->surv1_bytes += c->surv1_bytes;
    to->surv2_objs += c->surv2_objs;
    to->surv2_bytes += c->surv2_bytes;
    for (int g = 0; g < HP_NGEN; g++) {
        to->died_objs[g] += c->died_objs[g];
        to->died_bytes[g] += c->died_bytes[g];
        to->live_gen_objs[g] += c->live_gen_objs[g];
    }
    to->died_age_gcs += c->died_age_gcs;
    to->live_objs += c->live_objs;
    to->live_bytes += c->live_bytes;
}

typedef struct hp_row {
    const char *name;
    const tenure_type *type;
    uint32_t site;
    int has_site;
    hp_counts c;
} hp_row;

static int row_cmp(const void *a, const void *b) {
    const hp_row *x = a, *y = b;
    if (x->c.alloc_bytes != y->c.alloc_bytes)
        return x->c.alloc_bytes > y->c.alloc_bytes ? -1 : 1;
    if (x->c.alloc_objs != y->c.alloc_objs)
        return x->c.alloc_objs > y->c.alloc_objs ? -1 : 1;
    int s = strcmp(x->name, y->name);
    if (s)
        return s;
    return x->site < y->site ? -1 : x->site > y->site;
}

static int type_cmp(const void *a, const void *b) {
    const hp_row *x = a, *y = b;
    return (uintptr_t)x->type < (uintptr_t)y->type ? -1 : (uintptr_t)x->type > (uintptr_t)y->type;
}

static const char *type_name(const tenure_type *t) {
    const char *n = t ? tenure_type_name(t) : NULL;
    return n ? n : "?";
}

static void print_table(FILE *f, const char *title, const hp_row *rows, size_t n, int with_site) {
    int w = 4;
    for (size_t i = 0; i < n; i++) {
        int l = (int)strlen(rows[i].name);
        if (l > w)
            w = l;
    }
    if (w > 40)
        w = 40;
    fprintf(f, "%s\n", title);
    fprintf(f, "%-*s %s%12s %14s %10s %10s %10s %10s %10s %9s %9s %10s %14s\n", w, "type",
            with_site ? "      site " : "", "alloc_objs", "alloc_bytes", "surv_gen1", "surv_gen2", "died_gen0",
            "died_gen1", "died_gen2", "died_loh", "died_poh", "live_objs", "live_bytes");
    for (size_t i = 0; i < n; i++) {
        const hp_counts *c = &rows[i].c;
        fprintf(f, "%-*.*s ", w, w, rows[i].name);
        if (with_site)
            fprintf(f, "%10" PRIu32 " ", rows[i].site);
        fprintf(f,
                "%12" PRIu64 " %14" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
                " %9" PRIu64 " %9" PRIu64 " %10" PRIu64 " %14" PRIu64 "\n",
                c->alloc_objs, c->alloc_bytes, c->surv1_objs, c->surv2_objs, c->died_objs[0], c->died_objs[1],
                c->died_objs[2], c->died_objs[3], c->died_objs[4], c->live_objs, c->live_bytes);
    }
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void json_u64s(FILE *f, const uint64_t *v, int n) {
    fputc('[', f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%" PRIu64, i ? ", " : "", v[i]);
    fputc(']', f);
}

static void json_counts(FILE *f, const hp_counts *c) {
    fprintf(f,
            "\"allocated_objects\": %" PRIu64 ", \"allocated_bytes\": %" PRIu64 ", \"survived_gen1_objects\": %" PRIu64
            ", \"survived_gen1_bytes\": %" PRIu64 ", \"survived_gen2_objects\": %" PRIu64
            ", \"survived_gen2_bytes\": %" PRIu64 ", \"died_objects\": ",
            c->alloc_objs, c->alloc_bytes, c->surv1_objs, c->surv1_bytes, c->surv2_objs, c->surv2_bytes);
    json_u64s(f, c->died_objs, HP_NGEN);
    fputs(", \"died_bytes\": ", f);
    json_u64s(f, c->died_bytes, HP_NGEN);
    fprintf(f,
            ", \"died_gcs_survived_total\": %" PRIu64 ", \"live_objects\": %" PRIu64 ", \"live_bytes\": %" PRIu64
            ", \"live_objects_by_generation\": ",
            c->died_age_gcs, c->live_objs, c->live_bytes);
    json_u64s(f, c->live_gen_objs, HP_NGEN);
}

static void json_rows(FILE *f, const char *key, const hp_row *rows, size_t n, int with_site) {
    fprintf(f, "  \"%s\": [", key);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s\n    {\"type\": ", i ? "," : "");
        json_string(f, rows[i].name);
        if (with_site)
            fprintf(f, ", \"site\": %" PRIu32, rows[i].site);
        fputs(", ", f);
        json_counts(f, &rows[i].c);
        fputc('}', f);
    }
    fprintf(f, "%s]", n ? "\n  " : "");
}

/* name, or name.<instance> when another instance of this process took the name */
/* name is an existing file that is not a regular one (/dev/null, /dev/stdout's target, a
 * FIFO): written as named, with no suffix or instance number (issue 38: /dev/null.txt). */
static int is_special_file(const char *name) {
    struct stat st;
    return stat(name, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

static FILE *open_out(const char *name, const char *suffix, unsigned nth, uint16_t instance, char *used, size_t cap) {
    if (is_special_file(name))
        snprintf(used, cap, "%s", name);
    else if (nth == 0)
        snprintf(used, cap, "%s%s", name, suffix);
    else
        snprintf(used, cap, "%s%s.%u", name, suffix, (unsigned)instance);
    /* never through a symlink someone planted at the name; no wider than the umask allows */
    int fd = open(used, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "tenure-heapprof: cannot write %s: %s\n", used, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    return f;
}

static void report(heapprof *hp) {
    fetch_bounds(hp);
    resolve_pending(hp);
    for (size_t i = 0; i < hp->nbuckets; i++) {
        hp_counts *c = &hp->buckets[i].c;
        c->live_objs = c->live_bytes = 0;
        memset(c->live_gen_objs, 0, sizeof c->live_gen_objs);
    }
    tenure_objtrack_foreach(hp->track, count_live, hp);
    if (hp->verify)
        verify(hp);

    size_t n = hp->nbuckets;
    hp_row *site_rows = calloc(n ? n : 1, sizeof *site_rows);
    hp_row *type_rows = calloc(n ? n : 1, sizeof *type_rows);
    if (!site_rows || !type_rows) {
        fprintf(stderr, "tenure-heapprof: out of memory for the report\n");
        free(site_rows);
        free(type_rows);
        return;
    }
    hp_counts total;
    memset(&total, 0, sizeof total);
    for (size_t i = 0; i < n; i++) {
        site_rows[i].type = hp->buckets[i].type;
        site_rows[i].name = type_name(hp->buckets[i].type);
        site_rows[i].site = hp->buckets[i].site;
        site_rows[i].has_site = 1;
        site_rows[i].c = hp->buckets[i].c;
        add_counts(&total, &hp->buckets[i].c);
    }
    /* by type: sum the (type, site) rows of each type */
    memcpy(type_rows, site_rows, n * sizeof *type_rows);
    qsort(type_rows, n, sizeof *type_rows, type_cmp);
    size_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        if (nt && type_rows[nt - 1].type == type_rows[i].type) {
            add_counts(&type_rows[nt - 1].c, &type_rows[i].c);
        } else {
            type_rows[nt] = type_rows[i];
            type_rows[nt].site = 0;
            type_rows[nt].has_site = 0;
            nt++;
        }
    }
    qsort(site_rows, n, sizeof *site_rows, row_cmp);
    qsort(type_rows, nt, sizeof *type_rows, row_cmp);

    pthread_mutex_lock(&hp_lock);
    if (!hp_plain_owner)
        hp_plain_owner = hp->instance;
    unsigned nth = hp_plain_owner != hp->instance;
    pthread_mutex_unlock(&hp_lock);

    /* the table */
    char path[4096];
    FILE *f = stderr;
    const char *out = secure_getenv("TENURE_HEAPPROF_OUT");
    if (out && *out) {
        size_t l = strlen(out);
        FILE *o = open_out(out, l >= 4 && strcmp(out + l - 4, ".txt") == 0 ? "" : ".txt", nth, hp->instance, path,
                           sizeof path);
        if (o)
            f = o;
    }
    fprintf(f,
            "tenure-heapprof: instance %u, %" PRIu64 " GCs, %" PRIu64 " objects (%" PRIu64 " bytes) allocated, %" PRIu64
            " live at the end\n",
            (unsigned)hp->instance, hp->gc_index, total.alloc_objs, total.alloc_bytes, total.live_objs);
    fprintf(f, "  (counts are objects; site = the id set with tenure_heapprof_set_site, 0 when none)\n");
    print_table(f, "by type and site, by bytes allocated:", site_rows, n, 1);
    print_table(f, "by type, by bytes allocated:", type_rows, nt, 0);
    if (hp->untracked || hp->stale || hp->tracker_errors || hp->gen_mismatch || hp->size_unknown)
        fprintf(f,
                "tenure-heapprof: warning: untracked %" PRIu64 ", stale %" PRIu64 ", tracker errors %" PRIu64
                ", generation mismatches %" PRIu64 ", sizes unknown %" PRIu64 "\n",
                hp->untracked, hp->stale, hp->tracker_errors, hp->gen_mismatch, hp->size_unknown);
    if (hp->verify)
        fprintf(f,
                "tenure-heapprof: verify: %" PRIu64 " objects in the heap walk, %" PRIu64 " not tracked, %" PRIu64
                " tracked but not in the heap, %" PRIu64 " wrong types, %" PRIu64 " wrong sizes, %" PRIu64
                " wrong generations: %s\n",
                hp->v_walked, hp->v_missing, hp->v_extra, hp->v_type, hp->v_size, hp->v_gen,
                hp->v_missing | hp->v_extra | hp->v_type | hp->v_size | hp->v_gen ? "FAILED" : "ok");
    if (f != stderr)
        fclose(f);
    else
        fflush(f);

    /* the JSON */
    const char *json = secure_getenv("TENURE_HEAPPROF_JSON");
    if (!json || !*json)
        json = hp->out_json;
    if (json && *json && (f = open_out(json, "", nth, hp->instance, path, sizeof path)) != NULL) {
        fprintf(f,
                "{\n  \"tool\": \"tenure-heapprof\",\n  \"version\": 1,\n  \"instance\": %u,\n  \"gcs\": %" PRIu64
                ",\n  \"generations\": [\"gen0\", \"gen1\", \"gen2\", \"loh\", \"poh\"],\n  \"totals\": {",
                (unsigned)hp->instance, hp->gc_index);
        json_counts(f, &total);
        fputs("},\n", f);
        json_rows(f, "by_type", type_rows, nt, 0);
        fputs(",\n", f);
        json_rows(f, "by_type_site", site_rows, n, 1);
        fprintf(f,
                ",\n  \"diagnostics\": {\"untracked\": %" PRIu64 ", \"stale\": %" PRIu64
                ", \"tracker_errors\": %" PRIu64 ", \"generation_mismatches\": %" PRIu64 ", \"sizes_unknown\": %" PRIu64
                "}",
                hp->untracked, hp->stale, hp->tracker_errors, hp->gen_mismatch, hp->size_unknown);
        if (hp->verify)
            fprintf(f,
                    ",\n  \"verify\": {\"walked\": %" PRIu64 ", \"not_tracked\": %" PRIu64 ", \"not_in_heap\": %" PRIu64
                    ", \"wrong_type\": %" PRIu64 ", \"wrong_size\": %" PRIu64 ", \"wrong_generation\": %" PRIu64 "}",
                    hp->v_walked, hp->v_missing, hp->v_extra, hp->v_type, hp->v_size, hp->v_gen);
        fputs("\n}\n", f);
        fclose(f);
    }
    free(site_rows);
    free(type_rows);
}

/* ---- lifecycle ---- */

static void free_heapprof(heapprof *hp) {
    tenure_objtrack_destroy(hp->track);
    free(hp->buckets);
    free(hp->bhash);
    free(hp->pending);
    free(hp->bounds);
    free(hp->out_json);
    free(hp);
}

static void unlink_heapprof(heapprof *hp) {
    for (heapprof **pp = &hp_all; *pp; pp = &(*pp)->next)
        if (*pp == hp) {
            *pp = hp->next;
            break;
        }
}

static void on_shutdown(void *ctx) {
    heapprof *hp = ctx;
    pthread_mutex_lock(&hp_lock);
    unlink_heapprof(hp);
    int done = hp->reported;
    hp->reported = 1;
    pthread_mutex_unlock(&hp_lock);
    if (!done)
        report(hp);
    free_heapprof(hp);
}

/* Instances never destroyed: report at exit (their heaps are still there). */
static void at_exit(void) {
    for (;;) {
        heapprof *hp = NULL;
        pthread_mutex_lock(&hp_lock);
        for (heapprof *h = hp_all; h; h = h->next)
            if (!h->reported) {
                hp = h;
                hp->reported = 1;
                break;
            }
        pthread_mutex_unlock(&hp_lock);
        if (!hp)
            return;
        report(hp);
    }
}

static char *dup_str(const char *s) {
    if (!s)
        return NULL;
    size_t l = strlen(s) + 1;
    char *d = malloc(l);
    if (d)
        memcpy(d, s, l);
    return d;
}

int tenure_heapprof_attach(tenure_runtime *rt, const char *out_json) {
    if (!rt)
        return -1;
    pthread_mutex_lock(&hp_lock);
    for (heapprof *h = hp_all; h; h = h->next)
        if (h->rt == rt) { /* already attached (by TENURE_PROFILER and by the program) */
            int r = 0;
            if (out_json) {
                char *d = dup_str(out_json);
                if (d) {
                    free(h->out_json);
                    h->out_json = d;
                } else {
                    r = -1;
                }
            }
            pthread_mutex_unlock(&hp_lock);
            return r;
        }
    pthread_mutex_unlock(&hp_lock);

    heapprof *hp = calloc(1, sizeof *hp);
    if (!hp)
        return -1;
    hp->rt = rt;
    hp->instance = tenure_instance_id(rt);
    const char *v = secure_getenv("TENURE_HEAPPROF_VERIFY");
    hp->verify = v && *v && strcmp(v, "0") != 0;
    tenure_stats st;
    tenure_get_stats(rt, &st);
    hp->gc_index = st.gc_count;
    hp->track = tenure_objtrack_create(sizeof(hp_payload), on_death, hp);
    if (!hp->track || (out_json && !(hp->out_json = dup_str(out_json)))) {
        free_heapprof(hp);
        return -1;
    }
    tenure_profiler_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.gc_started = on_gc_started;
    cb.moved_references = on_moved;
    cb.surviving_references = on_surviving;
    cb.gc_finished = on_gc_finished;
    cb.object_allocated = on_allocated;
    cb.shutdown = on_shutdown;
    hp->prof = tenure_profiler_attach(rt, &cb, TENURE_PROFILE_GC | TENURE_PROFILE_ALLOCATIONS, hp);
    if (!hp->prof) {
        free_heapprof(hp);
        return -1;
    }
    pthread_mutex_lock(&hp_lock);
    hp->next = hp_all;
    hp_all = hp;
    if (!hp_atexit_done)
        hp_atexit_done = atexit(at_exit) == 0;
    pthread_mutex_unlock(&hp_lock);
    return 0;
}

int tenure_heapprof_report(tenure_runtime *rt) {
    heapprof *hp = NULL;
    pthread_mutex_lock(&hp_lock);
    for (heapprof *h = hp_all; h; h = h->next)
        if (h->rt == rt)
            hp = h;
    pthread_mutex_unlock(&hp_lock);
    if (!hp)
        return -1;
    report(hp);
    const char *retained = secure_getenv("TENURE_HEAPPROF_RETAINED"); /* on demand only: it collects */
    if (retained && *retained)
        return tenure_heapprof_retained(rt, retained, NULL);
    return 0;
}

static char hp_anchor;

int tenure_profiler_main(tenure_runtime *rt) {
    /* TENURE_PROFILER loads us RTLD_LOCAL: make our symbols global so that the program can
     * find tenure_heapprof_set_site (TENURE_HEAPPROF_SET_SITE_IF_LOADED). */
    Dl_info info;
    if (dladdr(&hp_anchor, &info) && info.dli_fname)
        (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    return tenure_heapprof_attach(rt, NULL);
}
