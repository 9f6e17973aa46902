/*
 * objtrack_unit: the object tracker on synthetic ranges (no collector).
 *
 *  A. seed 001's worked example (units of 8 bytes): objects at 08 09 10 12 13 15 16 17 18 19,
 *     09 13 19 dead. With the seed's blocks {08->07 1} {10->08 2} {15->11 4}, 12 lies in no
 *     range and is reported dead too (the seed's lengths are inconsistent); with the
 *     consistent blocks {08->07 1} {10->08 3} {15->11 4}, exactly 09 13 19 die and 12 -> 10.
 *  B. range tails: an object at old+len-1 is in the range, one at old+len is not; new ranges
 *     overlapping other ranges' old addresses (sliding) and their own.
 *  C. generations: entries of uncollected generations (and outside every bound) stay; the
 *     death callback gets the generation of the bound the entry lay in.
 *  D. ranges in many calls and in any order give the same result.
 *  E. add / find / remove / foreach / count, duplicates, re-adding a removed id, removed
 *     entries never reported dead, non-ascending adds (the tail's hash index), zero-sized and
 *     odd-sized payloads, a GC without gc_started.
 *  F. a randomized model heap: regions of generations 0..3, objects allocated in interleaved
 *     regions (ascending and not), compacting GCs whose destination regions come in random
 *     order (interleaved runs of new ids), sweeping GCs, the LOH swept in gen2 GCs, ranges
 *     shuffled and split into calls, tracked objects removed and re-added; after every GC the
 *     tracker must equal the model and every tracked dead object must be reported once.
 */
#include "test_util.h"
#include "tenure_objtrack.h"

#define U 8u
#define BASE ((uintptr_t)0x100000)
#define AT(k) (BASE + (uintptr_t)(k)*U)

/* ---- death log ---- */
typedef struct death {
    uintptr_t id;
    uint64_t num;
    int gen;
} death;
static death deaths[1 << 16];
static size_t ndeaths;

static void on_death(void *ctx, uintptr_t id, void *payload, int gen) {
    (void)ctx;
    TT_CHECK(ndeaths < sizeof deaths / sizeof deaths[0]);
    deaths[ndeaths++] = (death){id, *(uint64_t *)payload, gen};
}

static const int gen0_only[5] = {1, 0, 0, 0, 0};

static tenure_generation_range bound(uintptr_t start, size_t len, int gen) {
    tenure_generation_range r = {start, len, len, gen};
    return r;
}

static tenure_objtrack *track_nums(const int *ks, size_t n) {
    tenure_objtrack *t = tenure_objtrack_create(sizeof(uint64_t), on_death, NULL);
    TT_CHECK(t != NULL);
    for (size_t i = 0; i < n; i++) {
        uint64_t *p = tenure_objtrack_add(t, AT(ks[i]));
        TT_CHECK(p != NULL);
        *p = (uint64_t)ks[i];
    }
    return t;
}

static void expect_at(tenure_objtrack *t, int new_k, uint64_t num) {
    uint64_t *p = tenure_objtrack_find(t, AT(new_k));
    TT_CHECK(p != NULL, "nothing at %d (expected object %" PRIu64 ")", new_k, num);
    TT_CHECK(*p == num, "at %d: object %" PRIu64 ", expected %" PRIu64, new_k, *p, num);
}

static int died(uint64_t num) {
    int c = 0;
    for (size_t i = 0; i < ndeaths; i++)
        c += deaths[i].num == num;
    return c;
}

/* ---- A ---- */
static void seed_example(int consistent) {
    static const int ks[] = {8, 9, 10, 12, 13, 15, 16, 17, 18, 19};
    tenure_objtrack *t = track_nums(ks, 10);
    ndeaths = 0;
    tenure_generation_range b = bound(BASE, 32 * U, 0);
    tenure_objtrack_gc_started(t, gen0_only, &b, 1);
    uintptr_t olds[] = {AT(8), AT(10), AT(15)}, news[] = {AT(7), AT(8), AT(11)};
    size_t lens[] = {1 * U, (consistent ? 3 : 2) * U, 4 * U};
    tenure_objtrack_moved(t, 3, olds, news, lens);
    TT_CHECK(tenure_objtrack_gc_finished(t) == 0);
    expect_at(t, 7, 8);
    expect_at(t, 8, 10);
    expect_at(t, 11, 15);
    expect_at(t, 12, 16);
    expect_at(t, 13, 17);
    expect_at(t, 14, 18);
    TT_CHECK(died(9) == 1 && died(13) == 1 && died(19) == 1);
    if (consistent) {
        expect_at(t, 10, 12);
        TT_CHECK_EQ_U64(ndeaths, 3);
        TT_CHECK_EQ_U64(tenure_objtrack_count(t), 7);
    } else {
        TT_CHECK(died(12) == 1, "12 lies in no range of the seed's blocks: dead");
        TT_CHECK_EQ_U64(ndeaths, 4);
        TT_CHECK_EQ_U64(tenure_objtrack_count(t), 6);
    }
    for (size_t i = 0; i < ndeaths; i++) {
        TT_CHECK(deaths[i].id == AT(deaths[i].num), "a death reported under its old id");
        TT_CHECK(deaths[i].gen == 0);
    }
    /* old ids that are not new ids are gone */
    TT_CHECK(tenure_objtrack_find(t, AT(15)) == NULL && tenure_objtrack_find(t, AT(19)) == NULL);
    tenure_objtrack_destroy(t);
}

/* ---- B ---- */
static void tails(void) {
    /* objects 0..9 (one unit each), 20..29; block {0, len 5} slides to 20 (where 20.. lived),
     * block {20, len 10} slides up to 25 (over its own old place); 29 is the last unit of its
     * block; 30 (just past it) is in no range: dead, and so are 5..9; 31 moves to 35 */
    int ks[22];
    for (int i = 0; i < 10; i++)
        ks[i] = i, ks[10 + i] = 20 + i;
    ks[20] = 30;
    ks[21] = 31;
    tenure_objtrack *t = track_nums(ks, 22);
    ndeaths = 0;
    tenure_generation_range b = bound(BASE, 64 * U, 0);
    tenure_objtrack_gc_started(t, gen0_only, &b, 1);
    uintptr_t olds[] = {AT(0), AT(20), AT(31)}, news[] = {AT(20), AT(25), AT(35)};
    size_t lens[] = {5 * U, 10 * U, 1 * U};
    tenure_objtrack_moved(t, 3, olds, news, lens);
    TT_CHECK(tenure_objtrack_gc_finished(t) == 0);
    for (int i = 0; i < 5; i++)
        expect_at(t, 20 + i, (uint64_t)i);
    for (int i = 0; i < 10; i++)
        expect_at(t, 25 + i, (uint64_t)(20 + i));
    expect_at(t, 35, 31);
    TT_CHECK(died(30) == 1);
    for (int i = 5; i < 10; i++)
        TT_CHECK(died((uint64_t)i) == 1);
    TT_CHECK_EQ_U64(ndeaths, 6);
    TT_CHECK_EQ_U64(tenure_objtrack_count(t), 16);
    /* a second GC: a block moving up over itself, one not moving (old == new) */
    ndeaths = 0;
    tenure_objtrack_gc_started(t, gen0_only, &b, 1);
    uintptr_t o2[] = {AT(20), AT(25)}, n2[] = {AT(22), AT(40)};
    size_t l2[] = {5 * U, 11 * U};
    tenure_objtrack_moved(t, 2, o2, n2, l2);
    TT_CHECK(tenure_objtrack_gc_finished(t) == 0);
    TT_CHECK_EQ_U64(ndeaths, 0);
    for (int i = 0; i < 5; i++)
        expect_at(t, 22 + i, (uint64_t)i);
    for (int i = 0; i < 10; i++)
        expect_at(t, 40 + i, (uint64_t)(20 + i));
    expect_at(t, 50, 31);
    tenure_objtrack_destroy(t);
}

/* ---- C ---- */
static void generations(void) {
    /* gen0 at 0..99, gen1 at 100..199, gen2 at 200..299, LOH at 300..399, nothing at 400.. */
    int ks[] = {1, 2, 3, 101, 102, 103, 201, 202, 301, 302, 401};
    tenure_objtrack *t = track_nums(ks, sizeof ks / sizeof ks[0]);
    tenure_generation_range bs[] = {bound(AT(300), 100 * U, 3), bound(AT(100), 100 * U, 1), bound(AT(0), 100 * U, 0),
                                    bound(AT(200), 100 * U, 2)};
    /* gen0 GC, nothing survives: gen0 objects die with generation 0, the rest stays */
    ndeaths = 0;
    tenure_objtrack_gc_started(t, gen0_only, bs, 4);
    TT_CHECK(tenure_objtrack_gc_finished(t) == 0);
    TT_CHECK_EQ_U64(ndeaths, 3);
    for (size_t i = 0; i < ndeaths; i++)
        TT_CHECK(deaths[i].gen == 0 && deaths[i].num <= 3);
    expect_at(t, 101, 101);
    expect_at(t, 202, 202);
    expect_at(t, 301, 301);
    expect_at(t, 401, 401);
    /* gen1 GC (0 and 1 collected): 102 survives and moves into gen2's range; 101 and 103 die
     * with generation 1; gen2 and LOH entries stay */
    ndeaths = 0;
    int c01[5] = {1, 1, 0, 0, 0};
    tenure_objtrack_gc_started(t, c01, bs, 4);
    uintptr_t o = AT(102), n = AT(250);
    size_t l = U;
    tenure_objtrack_moved(t, 1, &o, &n, &l);
    TT_CHECK(tenure_objtrack_gc_finished(t) == 0);
    TT_CHECK_EQ_U64(ndeaths, 2);
    TT_CHECK(died(101) == 1 && died(103) == 1);
    for (size_t i = 0; i < ndeaths; i++)
        TT_CHECK(deaths[i].gen == 1);
    expect_at(t, 250, 102);
    /* full GC: SOH compacted (only 201 survives, moves), LOH swept (302 survives) */
    ndeaths = 0;
    int all[5] = {1, 1, 1, 1, 1};
    tenure_objtrack_gc_started(t, all, bs, 4);
    uintptr_t o3 = AT(201), n3 = AT(200);
    tenure_objtrack_moved(t, 1, &o3, &n3, &l);
    uintptr_t s3 = AT(302);
    tenure_objtrack_surviving(t, 1, &s3, &l);
    TT_CHECK(tenure_objtrack_gc_finished(t) == 0);
    TT_CHECK(died(202) == 1 && died(102) == 1 && died(301) == 1);
    TT_CHECK_EQ_U64(ndeaths, 3);
    for (size_t i = 0; i < ndeaths; i++)
        TT_CHECK(deaths[i].gen == (deaths[i].num == 301 ? 3 : 2), "object %" PRIu64 " died in generation %d",
                 deaths[i].num, deaths[i].gen);
    expect_at(t, 200, 201);
    expect_at(t, 302, 302);
    expect_at(t, 401, 401); /* outside every bound: kept */
    TT_CHECK_EQ_U64(tenure_objtrack_count(t), 3);
    tenure_objtrack_destroy(t);
}

/* ---- D ---- */
static void calls_and_order(void) {
    /* 1000 objects of 1..4 units; survivors (2 of 3) packed down from 0; ranges per plug */
    enum { N = 1000 };
    static uintptr_t addr[N];
    static int alive[N];
    static uintptr_t olds[N], news[N];
    static size_t lens[N];
    uintptr_t a = AT(0);
    for (int i = 0; i < N; i++) {
        addr[i] = a;
        a += U * (uintptr_t)tt_rand_range(1, 4);
        alive[i] = tt_rand_below(3) != 0;
    }
    size_t nr = 0;
    uintptr_t dest = AT(0);
    for (int i = 0; i < N;) {
        if (!alive[i]) {
            i++;
            continue;
        }
        int j = i;
        while (j + 1 < N && alive[j + 1])
            j++;
        uintptr_t end = j + 1 < N ? addr[j + 1] : a;
        olds[nr] = addr[i];
        news[nr] = dest;
        lens[nr] = end - addr[i];
        dest += lens[nr];
        nr++;
        i = j + 1;
    }
    for (int variant = 0; variant < 4; variant++) {
        tenure_objtrack *t = tenure_objtrack_create(sizeof(uint64_t), on_death, NULL);
        for (int i = 0; i < N; i++)
            *(uint64_t *)tenure_objtrack_add(t, addr[i]) = (uint64_t)i;
        /* variant 0: one call; 1: calls of 1..3; 2: reversed order, single ranges;
         * 3: shuffled, calls of 1..5 */
        size_t perm[N];
        for (size_t i = 0; i < nr; i++)
            perm[i] = variant == 2 ? nr - 1 - i : i;
        if (variant == 3)
            for (size_t i = nr - 1; i > 0; i--) {
                size_t j = (size_t)tt_rand_below(i + 1), x = perm[i];
                perm[i] = perm[j];
                perm[j] = x;
            }
        ndeaths = 0;
        tenure_generation_range b = bound(AT(0), (size_t)(a - AT(0)), 0);
        tenure_objtrack_gc_started(t, gen0_only, &b, 1);
        for (size_t i = 0; i < nr;) {
            size_t k = variant == 0 ? nr : variant == 2 ? 1 : (size_t)tt_rand_range(1, variant == 1 ? 3 : 5);
            if (k > nr - i)
                k = nr - i;
            uintptr_t o[8], n[8];
            size_t l[8];
            if (variant == 0) {
                tenure_objtrack_moved(t, nr, olds, news, lens);
            } else {
                for (size_t j = 0; j < k; j++)
                    o[j] = olds[perm[i + j]], n[j] = news[perm[i + j]], l[j] = lens[perm[i + j]];
                tenure_objtrack_moved(t, k, o, n, l);
            }
            i += k;
        }
        TT_CHECK(tenure_objtrack_gc_finished(t) == 0);
        size_t live = 0;
        for (int i = 0; i < N; i++)
            live += (size_t)alive[i];
        TT_CHECK_EQ_U64(tenure_objtrack_count(t), live);
        TT_CHECK_EQ_U64(ndeaths, N - live);
        for (size_t r = 0; r < nr; r++) {
            for (int i = 0; i < N; i++)
                if (addr[i] >= olds[r] && addr[i] < olds[r] + lens[r]) {
                    uint64_t *p = tenure_objtrack_find(t, news[r] + (addr[i] - olds[r]));
                    TT_CHECK(p != NULL && *p == (uint64_t)i, "variant %d: object %d lost", variant, i);
                }
        }
        for (size_t d = 0; d < ndeaths; d++)
            TT_CHECK(!alive[deaths[d].num] && deaths[d].id == addr[deaths[d].num]);
        tenure_objtrack_destroy(t);
    }
}

/* ---- E ---- */
typedef struct fe_state {
    uintptr_t last;
    size_t n;
    uint64_t sum;
} fe_state;
static void fe(void *ctx, uintptr_t id, void *payload) {
    fe_state *s = ctx;
    TT_CHECK(s->n == 0 || id > s->last, "foreach not in id order");
    s->last = id;
    s->n++;
    s->sum += *(uint64_t *)payload;
}

/* D2: survivors moved into gaps of an uncollected region (pieces interleave), and thousands
 * of single-object ranges in reverse order (more pieces than the one-pass copy handles): the
 * merge sort restores id order */
static void interleaved(void) {
    int ks[] = {10, 20, 30, 100, 101, 102};
    tenure_objtrack *t = track_nums(ks, 6);
    tenure_generation_range bs[] = {bound(AT(0), 100 * U, 1), bound(AT(100), 100 * U, 0)};
    ndeaths = 0;
    tenure_objtrack_gc_started(t, gen0_only, bs, 2);
    uintptr_t o[] = {AT(100), AT(101)}, n[] = {AT(15), AT(25)};
    size_t l[] = {U, U};
    tenure_objtrack_moved(t, 2, o, n, l);
    TT_CHECK(tenure_objtrack_gc_finished(t) == 0);
    TT_CHECK(ndeaths == 1 && died(102) == 1);
    expect_at(t, 10, 10);
    expect_at(t, 15, 100);
    expect_at(t, 20, 20);
    expect_at(t, 25, 101);
    expect_at(t, 30, 30);
    fe_state s = {0, 0, 0};
    tenure_objtrack_foreach(t, fe, &s);
    TT_CHECK_EQ_U64(s.n, 5);
    tenure_objtrack_destroy(t);

    enum { M = 10000 };
    t = tenure_objtrack_create(sizeof(uint64_t), on_death, NULL);
    for (int k = 0; k < M; k++)
        *(uint64_t *)tenure_objtrack_add(t, AT(k)) = (uint64_t)k;
    tenure_generation_range b = bound(AT(0), 4 * M * U, 0);
    ndeaths = 0;
    tenure_objtrack_gc_started(t, gen0_only, &b, 1);
    for (int k = 0; k < M; k++) { /* object k -> 2 * (M - k): reversed, with gaps */
        uintptr_t ok = AT(k), nk = AT(2 * (M - k));
        size_t lk = U;
        tenure_objtrack_moved(t, 1, &ok, &nk, &lk);
    }
    TT_CHECK(tenure_objtrack_gc_finished(t) == 0);
    TT_CHECK_EQ_U64(ndeaths, 0);
    for (int k = 0; k < M; k++)
        expect_at(t, 2 * (M - k), (uint64_t)k);
    s = (fe_state){0, 0, 0};
    tenure_objtrack_foreach(t, fe, &s);
    TT_CHECK_EQ_U64(s.n, M);
    tenure_objtrack_destroy(t);
}

static void table_ops(void) {
    tenure_objtrack *t = tenure_objtrack_create(sizeof(uint64_t), on_death, NULL);
    /* descending then interleaved adds: the tail is not ascending */
    for (int k = 999; k >= 500; k--)
        *(uint64_t *)tenure_objtrack_add(t, AT(k)) = (uint64_t)k;
    for (int k = 0; k < 500; k += 2) {
        *(uint64_t *)tenure_objtrack_add(t, AT(k)) = (uint64_t)k;
        *(uint64_t *)tenure_objtrack_add(t, AT(k + 1)) = (uint64_t)(k + 1);
    }
    TT_CHECK_EQ_U64(tenure_objtrack_count(t), 1000);
    TT_CHECK(tenure_objtrack_add(t, AT(750)) == NULL, "duplicate add in the tail");
    TT_CHECK(tenure_objtrack_add(t, AT(3)) == NULL, "duplicate add in the tail");
    for (int k = 0; k < 1000; k++)
        expect_at(t, k, (uint64_t)k);
    TT_CHECK(tenure_objtrack_find(t, AT(1000)) == NULL && tenure_objtrack_find(t, AT(0) - U) == NULL);
    TT_CHECK(tenure_objtrack_find(t, AT(5) + 1) == NULL);
    /* remove every third; removed ids are not found, not counted, not reported dead */
    for (int k = 0; k < 1000; k += 3)
        TT_CHECK(tenure_objtrack_remove(t, AT(k)) == 0);
    TT_CHECK(tenure_objtrack_remove(t, AT(0)) == -1, "removing twice");
    TT_CHECK(tenure_objtrack_remove(t, AT(5000)) == -1, "removing an unknown id");
    TT_CHECK_EQ_U64(tenure_objtrack_count(t), 666);
    TT_CHECK(tenure_objtrack_find(t, AT(3)) == NULL);
    fe_state s = {0, 0, 0};
    tenure_objtrack_foreach(t, fe, &s); /* merges the tail */
    TT_CHECK_EQ_U64(s.n, 666);
    /* after the merge: lookups in the main part, duplicates, re-adding a removed id */
    TT_CHECK(tenure_objtrack_add(t, AT(4)) == NULL);
    uint64_t *p = tenure_objtrack_add(t, AT(6));
    TT_CHECK(p != NULL && *p == 0, "a re-added id gets a zeroed payload");
    *p = 6;
    TT_CHECK_EQ_U64(tenure_objtrack_count(t), 667);
    for (int k = 0; k < 1000; k++) {
        uint64_t *q = tenure_objtrack_find(t, AT(k));
        if (k % 3 == 0 && k != 6)
            TT_CHECK(q == NULL);
        else
            TT_CHECK(q != NULL && *q == (uint64_t)k);
    }
    /* a GC where everything is dead: exactly the tracked ones are reported */
    ndeaths = 0;
    tenure_generation_range b = bound(AT(0), 2000 * U, 0);
    tenure_objtrack_gc_started(t, gen0_only, &b, 1);
    TT_CHECK(tenure_objtrack_gc_finished(t) == 0);
    TT_CHECK_EQ_U64(ndeaths, 667);
    for (size_t i = 0; i < ndeaths; i++)
        TT_CHECK(deaths[i].num % 3 != 0 || deaths[i].num == 6);
    TT_CHECK_EQ_U64(tenure_objtrack_count(t), 0);
    TT_CHECK(tenure_objtrack_gc_finished(t) == 0, "gc_finished without gc_started: nothing to do");
    /* out of memory while the ranges are recorded: -1, and the table is unchanged */
    for (int k = 0; k < 10; k++)
        *(uint64_t *)tenure_objtrack_add(t, AT(k)) = (uint64_t)k;
    ndeaths = 0;
    tenure_objtrack_gc_started(t, gen0_only, &b, 1);
    uintptr_t o1 = AT(0), n1 = AT(100);
    size_t l1 = U;
    tenure_objtrack_moved(t, 1, &o1, &n1, &l1);
    tenure_objtrack_moved(t, SIZE_MAX / 4, &o1, &n1, &l1); /* cannot be stored (never read) */
    TT_CHECK(tenure_objtrack_gc_finished(t) == -1);
    TT_CHECK_EQ_U64(ndeaths, 0);
    TT_CHECK_EQ_U64(tenure_objtrack_count(t), 10);
    for (int k = 0; k < 10; k++)
        expect_at(t, k, (uint64_t)k);
    /* and the next GC works */
    tenure_objtrack_gc_started(t, gen0_only, &b, 1);
    tenure_objtrack_moved(t, 1, &o1, &n1, &l1);
    TT_CHECK(tenure_objtrack_gc_finished(t) == 0);
    TT_CHECK_EQ_U64(ndeaths, 9);
    expect_at(t, 100, 0);
    TT_CHECK(tenure_objtrack_remove(t, AT(100)) == 0);
    /* payload slots are reused; payload pointers stay valid while the table grows */
    uint64_t *first = tenure_objtrack_add(t, AT(1));
    *first = 77;
    for (int k = 2; k < 100000; k++)
        *(uint64_t *)tenure_objtrack_add(t, AT(k)) = (uint64_t)k;
    TT_CHECK(*first == 77 && tenure_objtrack_find(t, AT(1)) == first);
    tenure_objtrack_destroy(t);

    /* zero-sized and odd-sized payloads */
    tenure_objtrack *z = tenure_objtrack_create(0, NULL, NULL);
    TT_CHECK(tenure_objtrack_add(z, 8) != NULL && tenure_objtrack_find(z, 8) != NULL);
    TT_CHECK(tenure_objtrack_add(z, 8) == NULL);
    tenure_objtrack_destroy(z);
    tenure_objtrack *o = tenure_objtrack_create(13, NULL, NULL);
    unsigned char *pa = tenure_objtrack_add(o, 16), *pb = tenure_objtrack_add(o, 32);
    memset(pa, 0xaa, 13);
    memset(pb, 0xbb, 13);
    TT_CHECK(pa[12] == 0xaa && pb[0] == 0xbb && (uintptr_t)pb % 8 == 0);
    tenure_objtrack_destroy(o);
    tenure_objtrack_destroy(NULL);
}

/* ---- F: a model heap ---- */
#define NREG 64
#define RSIZE (64 * U)
#define LOH_REG 0 /* region 0 is the LOH */
typedef struct mobj {
    uintptr_t addr;
    size_t size;
    uint64_t num;
    int tracked;
} mobj;
typedef struct mreg {
    int gen; /* -1 free */
    size_t used;
} mreg;
static mobj mo[NREG * 64];
static size_t nmo;
static mreg reg[NREG];
static int *dead_expected; /* by num: -1 none, else generation */
static int *dead_seen;
static uint64_t next_num;
#define RADDR(r) (BASE + (uintptr_t)(r)*RSIZE)
#define RIDX(a) ((size_t)(((a)-BASE) / RSIZE))

static void fdeath(void *ctx, uintptr_t id, void *payload, int gen) {
    (void)ctx;
    uint64_t num = *(uint64_t *)payload;
    TT_CHECK(num < next_num);
    TT_CHECK(dead_expected[num] >= 0, "object %" PRIu64 " reported dead but is not (or untracked)", num);
    TT_CHECK(dead_expected[num] == gen, "object %" PRIu64 ": generation %d, expected %d", num, gen, dead_expected[num]);
    TT_CHECK(id == ((uintptr_t *)ctx)[num], "object %" PRIu64 " reported dead under a wrong id", num);
    dead_seen[num]++;
}

static int cmp_mobj(const void *a, const void *b) {
    uintptr_t x = ((const mobj *)a)->addr, y = ((const mobj *)b)->addr;
    return x < y ? -1 : x > y;
}

static int alloc_obj(tenure_objtrack *t, size_t reg_idx, size_t size, uintptr_t *last_addr) {
    if (reg[reg_idx].used + size > RSIZE)
        return 0;
    mobj *m = &mo[nmo++];
    m->addr = RADDR(reg_idx) + reg[reg_idx].used;
    m->size = size;
    m->num = next_num++;
    m->tracked = tt_rand_below(10) != 0;
    reg[reg_idx].used += size;
    last_addr[m->num] = m->addr;
    if (m->tracked) {
        uint64_t *p = tenure_objtrack_add(t, m->addr);
        TT_CHECK(p != NULL);
        *p = m->num;
    }
    return 1;
}

static void model_heap(void) {
    enum { MAXNUM = 400000 };
    dead_expected = malloc(MAXNUM * sizeof *dead_expected);
    dead_seen = calloc(MAXNUM, sizeof *dead_seen);
    uintptr_t *last_addr = malloc(MAXNUM * sizeof *last_addr);
    TT_CHECK(dead_expected && dead_seen && last_addr);
    for (size_t i = 0; i < MAXNUM; i++)
        dead_expected[i] = -1;
    tenure_objtrack *t = tenure_objtrack_create(sizeof(uint64_t), fdeath, last_addr);
    for (int r = 0; r < NREG; r++)
        reg[r] = (mreg){-1, 0};
    reg[LOH_REG].gen = 3;
    nmo = 0;
    next_num = 0;
    size_t gcs = tt_scaled(1500, 200), total_deaths = 0, multi_run_gcs = 0;
    static int alive[NREG * 64];
    for (size_t gc = 0; gc < gcs && next_num + 2000 < MAXNUM; gc++) {
        /* allocate into 1..3 gen0 regions round robin (interleaved ascending runs) */
        size_t cur[3], ncur = (size_t)tt_rand_range(1, 3), got = 0;
        for (int r = 1; r < NREG && got < ncur; r++)
            if (reg[r].gen == -1 && tt_rand_below(2)) {
                reg[r] = (mreg){0, 0};
                cur[got++] = (size_t)r;
            }
        size_t allocs = (size_t)tt_rand_range(0, 300);
        for (size_t i = 0; i < allocs && got; i++) {
            size_t c = (size_t)tt_rand_below(got);
            if (tt_rand_below(40) == 0)
                alloc_obj(t, LOH_REG, U * (size_t)tt_rand_range(1, 3), last_addr);
            else if (!alloc_obj(t, cur[c], U * (size_t)tt_rand_range(1, 4), last_addr))
                cur[c] = cur[--got];
        }
        /* mutate tracking: untrack some, re-track some (out of order) */
        for (size_t i = 0; i < 4 && nmo; i++) {
            mobj *m = &mo[tt_rand_below(nmo)];
            if (m->tracked) {
                TT_CHECK(tenure_objtrack_remove(t, m->addr) == 0);
                m->tracked = 0;
            } else {
                uint64_t *p = tenure_objtrack_add(t, m->addr);
                TT_CHECK(p != NULL && *p == 0);
                *p = m->num;
                m->tracked = 1;
            }
        }
        if (gc % 7 == 3) { /* merges the tail into the main part outside a GC */
            fe_state s = {0, 0, 0};
            tenure_objtrack_foreach(t, fe, &s);
        }
        /* which objects die this time (if their generation is collected) */
        qsort(mo, nmo, sizeof mo[0], cmp_mobj);
        for (size_t i = 0; i < nmo; i++)
            alive[i] = tt_rand_below(100) >= 30;
        int nfree = 0;
        for (int r = 1; r < NREG; r++)
            nfree += reg[r].gen == -1;
        int cgen = (int)tt_rand_below(3), compact = tt_rand_below(3) != 0;
        if (compact) { /* enough room? pack the survivors of collected SOH regions for real */
            int ncol = 0;
            for (int r = 1; r < NREG; r++)
                ncol += reg[r].gen >= 0 && reg[r].gen <= cgen;
            size_t fill = 0, used_regs = 1;
            for (size_t i = 0; i < nmo; i++) {
                size_t ri = RIDX(mo[i].addr);
                if (ri == LOH_REG || reg[ri].gen > cgen || !alive[i])
                    continue;
                if (fill + mo[i].size > RSIZE)
                    used_regs++, fill = 0;
                fill += mo[i].size;
            }
            compact = used_regs <= (size_t)(ncol + nfree);
        }
        int collected[5] = {1, cgen >= 1, cgen >= 2, cgen >= 2, 0};
        tenure_generation_range bs[NREG];
        size_t nb = 0;
        for (int r = NREG - 1; r >= 0; r--) /* reverse order: the tracker sorts them */
            if (reg[r].gen >= 0)
                bs[nb++] = (tenure_generation_range){RADDR(r), reg[r].used, RSIZE, reg[r].gen};
        tenure_objtrack_gc_started(t, collected, bs, nb);
        /* plan: survivors of collected regions, by address */
        static uintptr_t ro[NREG * 64], rn[NREG * 64];
        static size_t rl[NREG * 64];
        size_t nr = 0;
        int was_collected[NREG];
        for (int r = 0; r < NREG; r++)
            was_collected[r] = reg[r].gen >= 0 && collected[reg[r].gen];
        /* destinations for compaction: collected SOH regions and free ones, shuffled */
        int dests[NREG], nd = 0;
        for (int r = 1; r < NREG; r++)
            if (reg[r].gen == -1 || (was_collected[r] && compact))
                dests[nd++] = r;
        for (int i = nd - 1; i > 0; i--) {
            int j = (int)tt_rand_below((uint64_t)i + 1), x = dests[i];
            dests[i] = dests[j];
            dests[j] = x;
        }
        int di = 0;
        size_t dfill = 0;
        int newgen = cgen + 1 > 2 ? 2 : cgen + 1;
        size_t keep = 0;
        uintptr_t prev_new_end = 0, prev_old_end = 0;
        uintptr_t last_new = 0;
        int descents = 0;
        for (size_t i = 0; i < nmo; i++) {
            mobj m = mo[i];
            size_t ri = RIDX(m.addr);
            int is_loh = ri == LOH_REG;
            if (!was_collected[ri]) {
                mo[keep++] = m;
                continue;
            }
            if (!alive[i]) {
                if (m.tracked)
                    dead_expected[m.num] = reg[ri].gen;
                continue;
            }
            uintptr_t na = m.addr;
            if (compact && !is_loh) {
                if (dfill + m.size > RSIZE) {
                    di++;
                    dfill = 0;
                }
                TT_CHECK(di < nd, "model heap full");
                na = RADDR(dests[di]) + dfill;
                dfill += m.size;
            }
            if (nr && prev_old_end == m.addr && prev_new_end == na && RIDX(ro[nr - 1]) == ri) {
                rl[nr - 1] += m.size;
            } else {
                ro[nr] = m.addr;
                rn[nr] = na;
                rl[nr] = m.size;
                nr++;
            }
            prev_old_end = m.addr + m.size;
            prev_new_end = na + m.size;
            if (na < last_new)
                descents++;
            last_new = na;
            m.addr = na;
            last_addr[m.num] = na;
            mo[keep++] = m;
        }
        nmo = keep;
        multi_run_gcs += descents > 0;
        /* regions after the GC */
        for (int r = 1; r < NREG; r++)
            if (was_collected[r]) {
                int any = 0;
                for (size_t i = 0; i < nmo && !any; i++)
                    any = RIDX(mo[i].addr) == (size_t)r;
                if (compact || !any)
                    reg[r] = (mreg){-1, 0};
                else
                    reg[r].gen = newgen;
            }
        if (compact) {
            for (int k = 0; k <= di && k < nd; k++)
                reg[dests[k]] = (mreg){newgen, k == di ? dfill : RSIZE};
            if (dfill == 0 && di < nd)
                reg[dests[di]] = (mreg){-1, 0};
        }
        /* report the ranges: shuffled (sometimes) and in calls of random sizes */
        if (tt_rand_below(3) == 0)
            for (size_t i = nr; i > 1; i--) {
                size_t j = (size_t)tt_rand_below(i);
                uintptr_t a = ro[i - 1], b = rn[i - 1];
                size_t l = rl[i - 1];
                ro[i - 1] = ro[j], rn[i - 1] = rn[j], rl[i - 1] = rl[j];
                ro[j] = a, rn[j] = b, rl[j] = l;
            }
        for (size_t i = 0; i < nr;) {
            size_t k = (size_t)tt_rand_range(1, 50);
            if (k > nr - i)
                k = nr - i;
            /* LOH ranges and sweeping: surviving (old == new); split per call by kind */
            size_t j = i;
            int moved = rn[i] != ro[i] || (compact && RIDX(ro[i]) != LOH_REG);
            while (j < i + k && (rn[j] != ro[j] || (compact && RIDX(ro[j]) != LOH_REG)) == moved)
                j++;
            if (moved)
                tenure_objtrack_moved(t, j - i, ro + i, rn + i, rl + i);
            else
                tenure_objtrack_surviving(t, j - i, ro + i, rl + i);
            i = j;
        }
        TT_CHECK(tenure_objtrack_gc_finished(t) == 0);
        /* check: every death expected was seen once; the table equals the model */
        size_t tracked = 0;
        for (uint64_t num = 0; num < next_num; num++)
            if (dead_expected[num] >= 0) {
                TT_CHECK(dead_seen[num] == 1, "gc %zu: tracked dead object %" PRIu64 " reported %d times", gc, num,
                         dead_seen[num]);
                dead_expected[num] = -1;
                dead_seen[num] = 0;
                total_deaths++;
            }
        for (size_t i = 0; i < nmo; i++)
            if (mo[i].tracked) {
                tracked++;
                uint64_t *p = tenure_objtrack_find(t, mo[i].addr);
                TT_CHECK(p != NULL && *p == mo[i].num, "gc %zu: object %" PRIu64 " not found at its new id", gc,
                         mo[i].num);
            }
        TT_CHECK_EQ_U64(tenure_objtrack_count(t), tracked);
        if (gc % 50 == 0) {
            fe_state s = {0, 0, 0};
            tenure_objtrack_foreach(t, fe, &s);
            TT_CHECK_EQ_U64(s.n, tracked);
        }
    }
    printf("  model heap: %zu GCs, %" PRIu64 " objects, %zu tracked deaths, %zu GCs with several runs\n", gcs, next_num,
           total_deaths, multi_run_gcs);
    TT_CHECK(multi_run_gcs > 0, "the model never produced several runs of new ids");
    tenure_objtrack_destroy(t);
    free(dead_expected);
    free(dead_seen);
    free(last_addr);
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("objtrack_unit");
    seed_example(0);
    seed_example(1);
    tails();
    generations();
    calls_and_order();
    interleaved();
    table_ops();
    model_heap();
    return tt_finish("objtrack_unit", t0);
}
